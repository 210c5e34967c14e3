-- CreateEnum
CREATE TYPE "connector_type" AS ENUM ('scim');

-- CreateEnum
CREATE TYPE "sync_run_status" AS ENUM ('queued', 'running', 'succeeded', 'failed');

-- CreateEnum
CREATE TYPE "sync_trigger" AS ENUM ('manual', 'schedule');

-- CreateTable
CREATE TABLE "connectors" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "owner_tenant_id" UUID NOT NULL,
    "managed_tenant_id" UUID NOT NULL,
    "type" "connector_type" NOT NULL,
    "name" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "base_url" TEXT NOT NULL,
    "bearer_token_encrypted" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "connectors_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sync_runs" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "connector_id" UUID NOT NULL,
    "status" "sync_run_status" NOT NULL DEFAULT 'queued',
    "trigger" "sync_trigger" NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "open_connector_id" UUID,
    "users_seen" INTEGER NOT NULL DEFAULT 0,
    "users_added" INTEGER NOT NULL DEFAULT 0,
    "users_updated" INTEGER NOT NULL DEFAULT 0,
    "users_removed" INTEGER NOT NULL DEFAULT 0,
    "groups_seen" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "sync_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "directory_users" (
    "connector_id" UUID NOT NULL,
    "scim_id" TEXT NOT NULL,
    "external_id" TEXT,
    "user_name" TEXT NOT NULL,
    "display_name" TEXT,
    "email" TEXT,
    "active" BOOLEAN NOT NULL,
    "groups" TEXT[],
    "synced_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "directory_users_pkey" PRIMARY KEY ("connector_id","scim_id")
);

-- CreateIndex
CREATE INDEX "connectors_owner_tenant_id_created_at_id_idx" ON "connectors"("owner_tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "connectors_managed_tenant_id_enabled_idx" ON "connectors"("managed_tenant_id", "enabled");

-- CreateIndex
CREATE UNIQUE INDEX "sync_runs_open_connector_id_key" ON "sync_runs"("open_connector_id");

-- CreateIndex
CREATE INDEX "sync_runs_connector_id_created_at_id_idx" ON "sync_runs"("connector_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "sync_runs_connector_id_finished_at_idx" ON "sync_runs"("connector_id", "finished_at" DESC);

-- CreateIndex
CREATE INDEX "directory_users_connector_id_user_name_scim_id_idx" ON "directory_users"("connector_id", "user_name", "scim_id");

-- AddForeignKey
ALTER TABLE "sync_runs" ADD CONSTRAINT "sync_runs_connector_id_fkey" FOREIGN KEY ("connector_id") REFERENCES "connectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "directory_users" ADD CONSTRAINT "directory_users_connector_id_fkey" FOREIGN KEY ("connector_id") REFERENCES "connectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;
