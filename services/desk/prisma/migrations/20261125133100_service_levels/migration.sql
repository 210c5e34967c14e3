-- AlterTable
ALTER TABLE "clients" ADD COLUMN     "sla_policy_id" UUID;

-- CreateTable
CREATE TABLE "calendars" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" CITEXT NOT NULL,
    "time_zone" TEXT NOT NULL,
    "hours" JSONB NOT NULL,
    "holidays" JSONB,
    "closed_days" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "calendars_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sla_policies" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" CITEXT NOT NULL,
    "calendar_id" UUID,
    "is_default" BOOLEAN,
    "targets" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sla_policies_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ticket_slas" (
    "ticket_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "policy_id" UUID NOT NULL,
    "calendar" JSONB,
    "targets" JSONB NOT NULL,
    "first_response_due_at" TIMESTAMPTZ(3) NOT NULL,
    "first_response_completed_at" TIMESTAMPTZ(3),
    "first_response_breached_at" TIMESTAMPTZ(3),
    "resolution_due_at" TIMESTAMPTZ(3) NOT NULL,
    "resolution_completed_at" TIMESTAMPTZ(3),
    "resolution_stopped_at" TIMESTAMPTZ(3),
    "resolution_paused_minutes" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "resolution_breached_at" TIMESTAMPTZ(3),

    CONSTRAINT "ticket_slas_pkey" PRIMARY KEY ("ticket_id")
);

-- CreateIndex
CREATE INDEX "calendars_tenant_id_created_at_id_idx" ON "calendars"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "calendars_tenant_id_name_key" ON "calendars"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "sla_policies_tenant_id_created_at_id_idx" ON "sla_policies"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "sla_policies_calendar_id_idx" ON "sla_policies"("calendar_id");

-- CreateIndex
CREATE UNIQUE INDEX "sla_policies_tenant_id_name_key" ON "sla_policies"("tenant_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "sla_policies_tenant_id_is_default_key" ON "sla_policies"("tenant_id", "is_default");

-- CreateIndex
CREATE INDEX "ticket_slas_first_response_due_at_idx" ON "ticket_slas"("first_response_due_at");

-- CreateIndex
CREATE INDEX "ticket_slas_resolution_due_at_idx" ON "ticket_slas"("resolution_due_at");

-- AddForeignKey
ALTER TABLE "clients" ADD CONSTRAINT "clients_sla_policy_id_fkey" FOREIGN KEY ("sla_policy_id") REFERENCES "sla_policies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "calendars" ADD CONSTRAINT "calendars_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sla_policies" ADD CONSTRAINT "sla_policies_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sla_policies" ADD CONSTRAINT "sla_policies_calendar_id_fkey" FOREIGN KEY ("calendar_id") REFERENCES "calendars"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ticket_slas" ADD CONSTRAINT "ticket_slas_ticket_id_fkey" FOREIGN KEY ("ticket_id") REFERENCES "tickets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- is_default is true or NULL, never false: the unique (tenant_id, is_default) then holds one default per tenant.
ALTER TABLE "sla_policies" ADD CONSTRAINT "sla_policies_is_default_true_or_null" CHECK ("is_default");
