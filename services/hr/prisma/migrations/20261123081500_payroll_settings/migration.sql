-- CreateTable
CREATE TABLE "payroll_settings" (
    "tenant_id" UUID NOT NULL,
    "consultant_number" VARCHAR(7),
    "client_number" VARCHAR(5),
    "wage_types" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payroll_settings_pkey" PRIMARY KEY ("tenant_id")
);
