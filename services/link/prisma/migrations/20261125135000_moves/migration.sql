-- Movers (issue 24 point 2): a third kind of run, its tasks in run_tasks beside the others'.

-- CreateEnum
CREATE TYPE "move_status" AS ENUM ('scheduled', 'in_progress', 'completed', 'completed_with_errors', 'failed', 'cancelled');

-- CreateTable
CREATE TABLE "moves" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "owner_tenant_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "managed_tenant_id" UUID,
    "effective_date" DATE NOT NULL,
    "department" TEXT,
    "manager_id" UUID,
    "manager_email" TEXT,
    "job_title" TEXT,
    "bundles_add" TEXT[],
    "bundles_remove" TEXT[],
    "physical" JSONB,
    "status" "move_status" NOT NULL DEFAULT 'scheduled',
    "open_key" TEXT,
    "directory_user_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),

    CONSTRAINT "moves_pkey" PRIMARY KEY ("id")
);

-- AlterTable
ALTER TABLE "run_tasks" ADD COLUMN "move_id" UUID;

-- CreateIndex
CREATE INDEX "moves_owner_tenant_id_created_at_id_idx" ON "moves"("owner_tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "moves_owner_tenant_id_status_created_at_id_idx" ON "moves"("owner_tenant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "moves_owner_tenant_id_open_key_key" ON "moves"("owner_tenant_id", "open_key");

-- CreateIndex
CREATE UNIQUE INDEX "run_tasks_move_id_position_key" ON "run_tasks"("move_id", "position");

-- AddForeignKey
ALTER TABLE "run_tasks" ADD CONSTRAINT "run_tasks_move_id_fkey" FOREIGN KEY ("move_id") REFERENCES "moves"("id") ON DELETE CASCADE ON UPDATE CASCADE;
