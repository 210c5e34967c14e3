-- Onboardings and offboardings are kinds of one run engine (issue 24): a staged onboarding can be
-- cancelled (its account deleted), and every step has a due time.

-- AlterEnum
ALTER TYPE "onboarding_status" ADD VALUE 'cancelled';

-- AlterTable
ALTER TABLE "onboardings" ADD COLUMN     "cancelled_at" TIMESTAMPTZ(3);

-- Onboarding steps were due at once: their due time is the run's creation.
UPDATE "run_tasks" AS t SET "due_at" = o."created_at" FROM "onboardings" AS o WHERE t."onboarding_id" = o."id" AND t."due_at" IS NULL;
