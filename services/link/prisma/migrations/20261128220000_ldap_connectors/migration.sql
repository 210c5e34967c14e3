-- AlterEnum
ALTER TYPE "connector_type" ADD VALUE 'ldap';

-- AlterTable
ALTER TABLE "connectors" ADD COLUMN     "ldap_config" JSONB;
