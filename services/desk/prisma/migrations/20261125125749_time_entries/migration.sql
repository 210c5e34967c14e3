-- CreateTable
CREATE TABLE "time_entries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "ticket_id" UUID NOT NULL,
    "client_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "minutes" INTEGER NOT NULL,
    "date" DATE NOT NULL,
    "billable" BOOLEAN NOT NULL DEFAULT true,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "time_entries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "time_entries_tenant_date_idx" ON "time_entries"("tenant_id", "date" DESC, "created_at" DESC, "id" DESC, "minutes", "billable");

-- CreateIndex
CREATE INDEX "time_entries_tenant_user_date_idx" ON "time_entries"("tenant_id", "user_id", "date" DESC, "created_at" DESC, "id" DESC, "minutes", "billable");

-- CreateIndex
CREATE INDEX "time_entries_tenant_client_date_idx" ON "time_entries"("tenant_id", "client_id", "date" DESC, "created_at" DESC, "id" DESC, "minutes", "billable");

-- CreateIndex
CREATE INDEX "time_entries_ticket_date_idx" ON "time_entries"("ticket_id", "date" DESC, "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_ticket_id_fkey" FOREIGN KEY ("ticket_id") REFERENCES "tickets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A day's entry is at least a minute and at most the day (Prisma does not model CHECK constraints).
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_minutes_check" CHECK ("minutes" BETWEEN 1 AND 1440);

-- client_id is the ticket's, copied onto each entry so that filtering and summing by client needs
-- no join. When a ticket moves to another client, its entries move with it in the same statement
-- (and so in the same transaction). Prisma knows nothing of functions and triggers and leaves them alone.
CREATE FUNCTION "time_entries_follow_ticket_client"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "time_entries" SET "client_id" = NEW."client_id" WHERE "ticket_id" = NEW."id";
    RETURN NULL;
END $$;

CREATE TRIGGER "tickets_client_to_time_entries" AFTER UPDATE OF "client_id" ON "tickets"
    FOR EACH ROW WHEN (OLD."client_id" IS DISTINCT FROM NEW."client_id") EXECUTE FUNCTION "time_entries_follow_ticket_client"();
