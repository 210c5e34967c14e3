-- CreateEnum
CREATE TYPE "managed_tenant_status" AS ENUM ('active', 'suspended');

-- CreateTable
CREATE TABLE "managed_tenants" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "owner_tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "client_id" UUID NOT NULL,
    "status" "managed_tenant_status" NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "managed_tenants_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "managed_tenants_owner_tenant_id_created_at_id_idx" ON "managed_tenants"("owner_tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "managed_tenants_owner_tenant_id_client_id_idx" ON "managed_tenants"("owner_tenant_id", "client_id");

-- CreateIndex
CREATE UNIQUE INDEX "managed_tenants_owner_tenant_id_domain_key" ON "managed_tenants"("owner_tenant_id", "domain");
