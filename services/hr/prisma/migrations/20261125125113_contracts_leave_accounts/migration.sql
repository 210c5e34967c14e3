-- AlterTable
ALTER TABLE "employees" ADD COLUMN     "employment_end" DATE,
ADD COLUMN     "employment_start" DATE;

-- CreateTable
CREATE TABLE "leave_days" (
    "leave_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "day" DATE NOT NULL,

    CONSTRAINT "leave_days_pkey" PRIMARY KEY ("leave_id","day")
);

-- CreateTable
CREATE TABLE "contracts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "employee_id" UUID NOT NULL,
    "valid_from" DATE NOT NULL,
    "weekly_minutes" INTEGER NOT NULL,
    "working_days" TEXT[],
    "vacation_days_per_year" DECIMAL(5,1) NOT NULL,
    "state" VARCHAR(5) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contracts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leave_adjustments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "employee_id" UUID NOT NULL,
    "year" INTEGER NOT NULL,
    "days" DECIMAL(5,1) NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "leave_adjustments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leave_settings" (
    "tenant_id" UUID NOT NULL,
    "carry_over_expiry" CHAR(5) NOT NULL,
    "allow_negative_balance" BOOLEAN NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "leave_settings_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateIndex
CREATE INDEX "leave_days_tenant_id_user_id_day_idx" ON "leave_days"("tenant_id", "user_id", "day");

-- CreateIndex
CREATE UNIQUE INDEX "contracts_tenant_id_employee_id_valid_from_key" ON "contracts"("tenant_id", "employee_id", "valid_from");

-- CreateIndex
CREATE INDEX "leave_adjustments_tenant_id_employee_id_year_idx" ON "leave_adjustments"("tenant_id", "employee_id", "year");


-- AddForeignKey
ALTER TABLE "leave_days" ADD CONSTRAINT "leave_days_leave_id_fkey" FOREIGN KEY ("leave_id") REFERENCES "leaves"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_employee_id_fkey" FOREIGN KEY ("employee_id") REFERENCES "employees"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "leave_adjustments" ADD CONSTRAINT "leave_adjustments_employee_id_fkey" FOREIGN KEY ("employee_id") REFERENCES "employees"("id") ON DELETE CASCADE ON UPDATE CASCADE;
