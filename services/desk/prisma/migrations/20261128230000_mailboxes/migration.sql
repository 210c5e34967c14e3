-- Mailboxes desk reads over IMAP and answers from over SMTP, and the log of every message a poll
-- read. inbound_emails' unique (tenant_id, message_id) makes one message one ticket or comment,
-- whatever polls, instances or mailboxes of the tenant see it; its raw bytes are stored (and
-- committed) before the message is flagged on the server, so nothing read is ever lost.

-- CreateTable
CREATE TABLE "mailboxes" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "address" CITEXT NOT NULL,
    "name" TEXT,
    "imap" JSONB NOT NULL,
    "imap_secret" TEXT,
    "smtp" JSONB NOT NULL,
    "smtp_secret" TEXT,
    "folder" TEXT NOT NULL DEFAULT 'INBOX',
    "processed_folder" TEXT,
    "poll_interval_seconds" INTEGER NOT NULL DEFAULT 60,
    "default_client_id" UUID,
    "unknown_sender" TEXT NOT NULL DEFAULT 'create_contact',
    "closed_ticket_policy" TEXT NOT NULL DEFAULT 'reopen',
    "reopen_within_days" INTEGER NOT NULL DEFAULT 14,
    "max_message_bytes" INTEGER NOT NULL DEFAULT 10485760,
    "auto_acknowledge" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "next_poll_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "failures" INTEGER NOT NULL DEFAULT 0,
    "last_poll_at" TIMESTAMPTZ(3),
    "last_success_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "messages_processed" INTEGER NOT NULL DEFAULT 0,
    "messages_quarantined" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mailboxes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inbound_emails" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "mailbox_id" UUID,
    "message_id" TEXT NOT NULL,
    "from" TEXT NOT NULL DEFAULT '',
    "to" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "subject" TEXT NOT NULL DEFAULT '',
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "size_bytes" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'received',
    "reason" TEXT,
    "ticket_id" UUID,
    "comment_id" UUID,
    "raw" BYTEA,

    CONSTRAINT "inbound_emails_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "mailboxes_tenant_id_created_at_id_idx" ON "mailboxes"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "mailboxes_enabled_next_poll_at_idx" ON "mailboxes"("enabled", "next_poll_at");

-- CreateIndex
CREATE UNIQUE INDEX "mailboxes_tenant_id_address_key" ON "mailboxes"("tenant_id", "address");

-- CreateIndex
CREATE INDEX "inbound_emails_tenant_id_received_at_id_idx" ON "inbound_emails"("tenant_id", "received_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "inbound_emails_ticket_id_idx" ON "inbound_emails"("ticket_id");

-- CreateIndex
CREATE UNIQUE INDEX "inbound_emails_tenant_id_message_id_key" ON "inbound_emails"("tenant_id", "message_id");

-- AddForeignKey
ALTER TABLE "mailboxes" ADD CONSTRAINT "mailboxes_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inbound_emails" ADD CONSTRAINT "inbound_emails_mailbox_id_fkey" FOREIGN KEY ("mailbox_id") REFERENCES "mailboxes"("id") ON DELETE SET NULL ON UPDATE CASCADE;
