-- Service clients (issue 7): an API client without a tenant asks for tokens for a named tenant.
-- AlterTable
ALTER TABLE "api_clients" ALTER COLUMN "tenant_id" DROP NOT NULL;
