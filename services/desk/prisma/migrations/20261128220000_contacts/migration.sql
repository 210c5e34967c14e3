-- Contacts (the people of the customers who write to the helpdesk), the mail domains clients own,
-- a ticket's requester and participants, and who wrote a comment. An address is one contact's and
-- a domain one client's per tenant: the primary keys of contact_emails and client_email_domains
-- decide (citext: in any letter case), so two concurrent writers cannot both take one.

-- AlterTable
ALTER TABLE "ticket_comments" ADD COLUMN     "author_contact_id" UUID,
ADD COLUMN     "author_type" TEXT NOT NULL DEFAULT 'technician';

-- AlterTable
ALTER TABLE "tickets" ADD COLUMN     "cc" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "cc_suggested" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "follow_up_of" UUID,
ADD COLUMN     "mailbox_id" UUID,
ADD COLUMN     "requester_id" UUID,
ADD COLUMN     "source" TEXT NOT NULL DEFAULT 'api';

-- CreateTable
CREATE TABLE "contacts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "client_id" UUID,
    "name" TEXT NOT NULL,
    "email" CITEXT NOT NULL,
    "phone" TEXT,
    "language" TEXT,
    "email_status" TEXT NOT NULL DEFAULT 'ok',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "contact_emails" (
    "tenant_id" UUID NOT NULL,
    "email" CITEXT NOT NULL,
    "contact_id" UUID NOT NULL,

    CONSTRAINT "contact_emails_pkey" PRIMARY KEY ("tenant_id","email")
);

-- CreateTable
CREATE TABLE "client_email_domains" (
    "tenant_id" UUID NOT NULL,
    "domain" CITEXT NOT NULL,
    "client_id" UUID NOT NULL,

    CONSTRAINT "client_email_domains_pkey" PRIMARY KEY ("tenant_id","domain")
);

-- CreateIndex
CREATE INDEX "contacts_tenant_id_created_at_id_idx" ON "contacts"("tenant_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "contacts_tenant_id_client_id_created_at_id_idx" ON "contacts"("tenant_id", "client_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "contact_emails_contact_id_idx" ON "contact_emails"("contact_id");

-- CreateIndex
CREATE INDEX "client_email_domains_client_id_idx" ON "client_email_domains"("client_id");

-- CreateIndex
CREATE INDEX "tickets_tenant_id_requester_id_created_at_id_idx" ON "tickets"("tenant_id", "requester_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "tickets_tenant_id_source_created_at_id_idx" ON "tickets"("tenant_id", "source", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contact_emails" ADD CONSTRAINT "contact_emails_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "contact_emails" ADD CONSTRAINT "contact_emails_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "client_email_domains" ADD CONSTRAINT "client_email_domains_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "client_email_domains" ADD CONSTRAINT "client_email_domains_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_requester_id_fkey" FOREIGN KEY ("requester_id") REFERENCES "contacts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ticket_comments" ADD CONSTRAINT "ticket_comments_author_contact_id_fkey" FOREIGN KEY ("author_contact_id") REFERENCES "contacts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- GET /contacts' total, kept like the clients' (the whole list; filtered lists count their rows).
CREATE TRIGGER "contacts_counts_insert" AFTER INSERT ON "contacts" REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_insert('contacts', 'tenant_id');
CREATE TRIGGER "contacts_counts_update" AFTER UPDATE ON "contacts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_update('contacts', 'tenant_id');
CREATE TRIGGER "contacts_counts_delete" AFTER DELETE ON "contacts" REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_on_delete('contacts', 'tenant_id');
