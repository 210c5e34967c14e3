-- The overtime a contract brings into the time account (minutes; null: the account carries on).
ALTER TABLE "contracts" ADD COLUMN "opening_balance_minutes" INTEGER;
