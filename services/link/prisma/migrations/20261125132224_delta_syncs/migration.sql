-- CreateEnum
CREATE TYPE "sync_mode" AS ENUM ('full', 'delta');

-- AlterTable
ALTER TABLE "directory_users" ADD COLUMN     "deleted_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "sync_runs" ADD COLUMN     "attempt_started_at" TIMESTAMPTZ(3),
ADD COLUMN     "delta_since" TIMESTAMPTZ(3),
ADD COLUMN     "directory_started_at" TIMESTAMPTZ(3),
ADD COLUMN     "mode" "sync_mode",
ADD COLUMN     "mode_reason" TEXT;

-- CreateTable
CREATE TABLE "directory_groups" (
    "connector_id" UUID NOT NULL,
    "scim_id" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "members" TEXT[],
    "member_count" INTEGER NOT NULL,
    "synced_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "directory_groups_pkey" PRIMARY KEY ("connector_id","scim_id")
);

-- CreateIndex
CREATE INDEX "directory_groups_connector_id_display_name_scim_id_idx" ON "directory_groups"("connector_id", "display_name", "scim_id");

-- AddForeignKey
ALTER TABLE "directory_groups" ADD CONSTRAINT "directory_groups_connector_id_fkey" FOREIGN KEY ("connector_id") REFERENCES "connectors"("id") ON DELETE CASCADE ON UPDATE CASCADE;
