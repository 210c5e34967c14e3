-- Onboarding and offboarding runs and their tasks (issue 7 points 5-6); only these tables.
-- CreateEnum
CREATE TYPE "onboarding_status" AS ENUM ('scheduled', 'in_progress', 'completed', 'completed_with_errors', 'failed');

-- CreateEnum
CREATE TYPE "offboarding_status" AS ENUM ('scheduled', 'in_progress', 'completed', 'completed_with_errors', 'failed', 'cancelled');

-- CreateEnum
CREATE TYPE "run_task_status" AS ENUM ('pending', 'running', 'succeeded', 'failed', 'skipped');

-- CreateTable
CREATE TABLE "onboardings" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "owner_tenant_id" UUID NOT NULL,
    "managed_tenant_id" UUID NOT NULL,
    "status" "onboarding_status" NOT NULL DEFAULT 'scheduled',
    "first_name" TEXT NOT NULL,
    "last_name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "department" TEXT NOT NULL,
    "manager_id" UUID NOT NULL,
    "start_date" DATE NOT NULL,
    "bundles" TEXT[],
    "laptop" TEXT NOT NULL,
    "badge" BOOLEAN NOT NULL,
    "phone_extension" BOOLEAN NOT NULL,
    "open_email" TEXT,
    "directory_user_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "onboardings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "offboardings" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "owner_tenant_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "successor_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "managed_tenant_id" UUID,
    "last_day" DATE NOT NULL,
    "mailbox_retention_days" INTEGER NOT NULL,
    "status" "offboarding_status" NOT NULL DEFAULT 'scheduled',
    "open_user_id" UUID,
    "directory_user_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),

    CONSTRAINT "offboardings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run_tasks" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "onboarding_id" UUID,
    "offboarding_id" UUID,
    "position" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "status" "run_task_status" NOT NULL DEFAULT 'pending',
    "detail" TEXT,
    "due_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "result" JSONB,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "run_tasks_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "onboardings_owner_tenant_id_created_at_id_idx" ON "onboardings"("owner_tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "onboardings_owner_tenant_id_status_created_at_id_idx" ON "onboardings"("owner_tenant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "onboardings_owner_tenant_id_open_email_key" ON "onboardings"("owner_tenant_id", "open_email");

-- CreateIndex
CREATE INDEX "offboardings_owner_tenant_id_created_at_id_idx" ON "offboardings"("owner_tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "offboardings_owner_tenant_id_status_created_at_id_idx" ON "offboardings"("owner_tenant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "offboardings_owner_tenant_id_open_user_id_key" ON "offboardings"("owner_tenant_id", "open_user_id");

-- CreateIndex
CREATE UNIQUE INDEX "run_tasks_onboarding_id_position_key" ON "run_tasks"("onboarding_id", "position");

-- CreateIndex
CREATE UNIQUE INDEX "run_tasks_offboarding_id_position_key" ON "run_tasks"("offboarding_id", "position");

-- AddForeignKey
ALTER TABLE "run_tasks" ADD CONSTRAINT "run_tasks_onboarding_id_fkey" FOREIGN KEY ("onboarding_id") REFERENCES "onboardings"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_tasks" ADD CONSTRAINT "run_tasks_offboarding_id_fkey" FOREIGN KEY ("offboarding_id") REFERENCES "offboardings"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A task belongs to exactly one run (Prisma cannot state this; the database does).
ALTER TABLE "run_tasks" ADD CONSTRAINT "run_tasks_one_run_check" CHECK (num_nonnulls("onboarding_id", "offboarding_id") = 1);
