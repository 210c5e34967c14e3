-- The Idempotency-Key claim of the request that created a mailbox: a mailbox records no event that
-- would carry it, so without it a retry of a create whose instance died after the commit was
-- refused as a duplicate address instead of answered. Nullable, so instances of the previous
-- release go on inserting.
ALTER TABLE "mailboxes" ADD COLUMN "idempotency_claim" UUID;

CREATE UNIQUE INDEX "mailboxes_idempotency_claim_key" ON "mailboxes"("idempotency_claim");
