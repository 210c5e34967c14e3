-- Names and e-mail addresses compare case-insensitively (see schema.prisma).
CREATE EXTENSION IF NOT EXISTS citext;

-- CreateEnum
CREATE TYPE "ticket_status" AS ENUM ('open', 'in_progress', 'pending', 'resolved', 'closed');

-- CreateEnum
CREATE TYPE "ticket_priority" AS ENUM ('low', 'normal', 'high', 'urgent');

-- CreateEnum
CREATE TYPE "ticket_category" AS ENUM ('network', 'hardware', 'software', 'account', 'email', 'security', 'other');

-- CreateEnum
CREATE TYPE "user_role" AS ENUM ('technician', 'lead', 'admin');

-- CreateTable
CREATE TABLE "clients" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" CITEXT NOT NULL,
    "email" TEXT,
    "phone" TEXT,
    "notes" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "clients_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "email" CITEXT NOT NULL,
    "role" "user_role" NOT NULL DEFAULT 'technician',
    "active" BOOLEAN NOT NULL DEFAULT true,
    "deactivated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tickets" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "number" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "priority" "ticket_priority" NOT NULL DEFAULT 'normal',
    "category" "ticket_category" NOT NULL DEFAULT 'other',
    "status" "ticket_status" NOT NULL DEFAULT 'open',
    "client_id" UUID NOT NULL,
    "assignee_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(3),

    CONSTRAINT "tickets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ticket_sequences" (
    "tenant_id" UUID NOT NULL,
    "last_number" INTEGER NOT NULL,

    CONSTRAINT "ticket_sequences_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateTable
CREATE TABLE "ticket_counts" (
    "tenant_id" UUID NOT NULL,
    "dimension" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "ticket_counts_pkey" PRIMARY KEY ("tenant_id","dimension","value")
);

-- CreateTable
CREATE TABLE "ticket_comments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "ticket_id" UUID NOT NULL,
    "body" TEXT NOT NULL,
    "internal" BOOLEAN NOT NULL DEFAULT false,
    "author" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ticket_comments_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "clients_tenant_id_created_at_id_idx" ON "clients"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "clients_tenant_id_name_key" ON "clients"("tenant_id", "name");

-- CreateIndex
CREATE INDEX "users_tenant_id_active_created_at_id_idx" ON "users"("tenant_id", "active", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "users_tenant_id_email_key" ON "users"("tenant_id", "email");

-- CreateIndex
CREATE INDEX "tickets_tenant_id_created_at_id_idx" ON "tickets"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tickets_tenant_id_status_created_at_id_idx" ON "tickets"("tenant_id", "status", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tickets_tenant_id_priority_created_at_id_idx" ON "tickets"("tenant_id", "priority", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tickets_tenant_id_category_created_at_id_idx" ON "tickets"("tenant_id", "category", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tickets_tenant_id_client_id_created_at_id_idx" ON "tickets"("tenant_id", "client_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tickets_tenant_id_assignee_id_created_at_id_idx" ON "tickets"("tenant_id", "assignee_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "tickets_tenant_id_number_key" ON "tickets"("tenant_id", "number");

-- CreateIndex
CREATE INDEX "ticket_comments_ticket_id_created_at_id_idx" ON "ticket_comments"("ticket_id", "created_at", "id");

-- AddForeignKey
ALTER TABLE "clients" ADD CONSTRAINT "clients_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_assignee_id_fkey" FOREIGN KEY ("assignee_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ticket_sequences" ADD CONSTRAINT "ticket_sequences_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ticket_comments" ADD CONSTRAINT "ticket_comments_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ticket_comments" ADD CONSTRAINT "ticket_comments_ticket_id_fkey" FOREIGN KEY ("ticket_id") REFERENCES "tickets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- ticket_counts: the totals a list answers with, kept exact by statement-level triggers in the
-- transaction that changes tickets (so a rejected request leaves them untouched too). Rows are
-- upserted in key order, so concurrent transactions lock the counter rows in one order and
-- cannot deadlock on them. Prisma knows nothing of functions and triggers and leaves them alone.
CREATE FUNCTION "ticket_counts_apply"(deltas JSONB) RETURNS void LANGUAGE sql AS $$
    INSERT INTO "ticket_counts" AS c ("tenant_id", "dimension", "value", "count")
    SELECT (d->>'tenant_id')::uuid, k.dimension, k.value, SUM((d->>'delta')::bigint)
      FROM jsonb_array_elements(deltas) d
      CROSS JOIN LATERAL (VALUES
          ('all', ''),
          ('status', d->>'status'),
          ('priority', d->>'priority'),
          ('category', d->>'category'),
          ('client_id', d->>'client_id'),
          ('assignee_id', d->>'assignee_id')
      ) AS k(dimension, value)
     WHERE k.value IS NOT NULL
     GROUP BY 1, 2, 3
    HAVING SUM((d->>'delta')::bigint) <> 0
     ORDER BY 1, 2, 3
    ON CONFLICT ("tenant_id", "dimension", "value") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
$$;

CREATE FUNCTION "ticket_counts_after_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "ticket_counts_apply"((SELECT jsonb_agg(to_jsonb(n) || '{"delta": 1}') FROM new_rows n));
    RETURN NULL;
END $$;

CREATE FUNCTION "ticket_counts_after_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "ticket_counts_apply"((
        SELECT jsonb_agg(row) FROM (
            SELECT to_jsonb(n) || '{"delta": 1}' AS row FROM new_rows n
            UNION ALL
            SELECT to_jsonb(o) || '{"delta": -1}' FROM old_rows o
        ) changes));
    RETURN NULL;
END $$;

CREATE FUNCTION "ticket_counts_after_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM "ticket_counts_apply"((SELECT jsonb_agg(to_jsonb(o) || '{"delta": -1}') FROM old_rows o));
    RETURN NULL;
END $$;

CREATE TRIGGER "tickets_count_insert" AFTER INSERT ON "tickets"
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_counts_after_insert"();
CREATE TRIGGER "tickets_count_update" AFTER UPDATE ON "tickets"
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_counts_after_update"();
CREATE TRIGGER "tickets_count_delete" AFTER DELETE ON "tickets"
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "ticket_counts_after_delete"();
