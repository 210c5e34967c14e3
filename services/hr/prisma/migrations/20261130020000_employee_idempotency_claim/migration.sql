-- The Idempotency-Key claim of the request that created an employee: an employee records no event
-- that would carry it, so without it a retry of a create whose instance died after the commit was
-- refused as a duplicate instead of answered. Nullable, so instances of the previous release go on
-- inserting.
ALTER TABLE "employees" ADD COLUMN "idempotency_claim" UUID;

CREATE UNIQUE INDEX "employees_idempotency_claim_key" ON "employees"("idempotency_claim");
