-- The files of inbound mail, kept in PostgreSQL (a message's size, attachments included, is bounded
-- by its mailbox's max_message_bytes). Each ticket and comment carries the description of its files
-- (`[{id, filename, content_type, size_bytes}]`), written once with it: reading a ticket joins nothing.
-- outbound_emails.kind tells an acknowledgement (auto_acknowledge: sent as Auto-Submitted, at most one
-- per sender per ten minutes) from a technician's reply.

-- AlterTable
ALTER TABLE "tickets" ADD COLUMN "attachments" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "ticket_comments" ADD COLUMN "attachments" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "outbound_emails" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'reply';

-- CreateIndex
CREATE INDEX "outbound_emails_tenant_id_kind_created_at_idx" ON "outbound_emails"("tenant_id", "kind", "created_at");

-- CreateTable
CREATE TABLE "attachments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "inbound_email_id" UUID,
    "ticket_id" UUID,
    "comment_id" UUID,
    "filename" TEXT NOT NULL,
    "content_type" TEXT NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "content" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attachments_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "attachments_tenant_id_created_at_id_idx" ON "attachments"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "attachments_ticket_id_idx" ON "attachments"("ticket_id");

-- AddForeignKey
ALTER TABLE "attachments" ADD CONSTRAINT "attachments_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
