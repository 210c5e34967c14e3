-- The Idempotency-Key claim of the request that created a connector: a connector records no event
-- that would carry it, so without it a retry of a create whose instance died after the commit
-- created a second connector. Nullable, so instances of the previous release go on inserting.
ALTER TABLE "connectors" ADD COLUMN "idempotency_claim" UUID;

CREATE UNIQUE INDEX "connectors_idempotency_claim_key" ON "connectors"("idempotency_claim");
