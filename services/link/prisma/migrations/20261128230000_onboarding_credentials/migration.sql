-- AlterTable
ALTER TABLE "onboardings" ADD COLUMN     "credentials_retrieved_at" TIMESTAMPTZ(3),
ADD COLUMN     "directory_user_name" TEXT,
ADD COLUMN     "initial_password_encrypted" TEXT;
