-- CreateTable
CREATE TABLE "timesheets" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "date" DATE NOT NULL,
    "worked_minutes" INTEGER NOT NULL,
    "break_minutes" INTEGER NOT NULL,
    "warnings" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "timesheets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "timesheet_entries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "timesheet_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "start_minute" INTEGER NOT NULL,
    "end_minute" INTEGER NOT NULL,
    "minutes" INTEGER NOT NULL,
    "category" TEXT NOT NULL,

    CONSTRAINT "timesheet_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leaves" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "start_date" DATE NOT NULL,
    "end_date" DATE NOT NULL,
    "working_days" INTEGER NOT NULL,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "leaves_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "timesheets_tenant_id_date_id_idx" ON "timesheets"("tenant_id", "date" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "timesheets_tenant_id_user_id_date_key" ON "timesheets"("tenant_id", "user_id", "date");

-- CreateIndex
CREATE UNIQUE INDEX "timesheet_entries_timesheet_id_position_key" ON "timesheet_entries"("timesheet_id", "position");

-- CreateIndex
CREATE INDEX "leaves_tenant_id_start_date_id_idx" ON "leaves"("tenant_id", "start_date" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "leaves_tenant_id_user_id_start_date_idx" ON "leaves"("tenant_id", "user_id", "start_date");

-- AddForeignKey
ALTER TABLE "timesheet_entries" ADD CONSTRAINT "timesheet_entries_timesheet_id_fkey" FOREIGN KEY ("timesheet_id") REFERENCES "timesheets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Written by hand (Prisma's schema cannot express CHECK constraints; its diff leaves them alone):
-- the values the API allows, so the payroll export can trust what it sums.
ALTER TABLE "timesheet_entries" ADD CONSTRAINT "timesheet_entries_category_check"
    CHECK ("category" IN ('normal', 'overtime', 'on_call', 'travel', 'training'));
ALTER TABLE "timesheet_entries" ADD CONSTRAINT "timesheet_entries_minutes_check"
    CHECK ("start_minute" >= 0 AND "end_minute" <= 1440 AND "start_minute" < "end_minute" AND "minutes" = "end_minute" - "start_minute");
ALTER TABLE "leaves" ADD CONSTRAINT "leaves_type_check"
    CHECK ("type" IN ('vacation', 'sick', 'unpaid', 'parental', 'special'));
ALTER TABLE "leaves" ADD CONSTRAINT "leaves_status_check"
    CHECK ("status" IN ('requested', 'approved', 'rejected', 'cancelled'));
ALTER TABLE "leaves" ADD CONSTRAINT "leaves_dates_check" CHECK ("start_date" <= "end_date");
