-- The Idempotency-Key claim of the request that recorded the event, written in the change's own
-- transaction: a retry whose first attempt's instance died after the commit is answered from it.
ALTER TABLE "events" ADD COLUMN "idempotency_claim" TEXT;

CREATE INDEX "events_idempotency_claim_idx" ON "events"("idempotency_claim");
