-- API client secret rotation (issue 10): the replaced secret keeps working for a grace period.
-- AlterTable
ALTER TABLE "api_clients" ADD COLUMN     "previous_secret_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "previous_secret_hash" TEXT;
