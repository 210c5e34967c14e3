import { listCountSql, sqlRows, type Queryable } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { Contact, ContactFilters } from './contact.schemas';

interface ContactSqlRow {
  id: string;
  name: string;
  email: string;
  emails: string[] | null;
  client_id: string | null;
  phone: string | null;
  language: string | null;
  email_status: Contact['email_status'];
  created_at: Date;
  updated_at: Date;
}

/** The contact's columns; its addresses from contact_emails, the primary first. */
const CONTACT_COLUMNS = Prisma.raw(`contacts.id, contacts.name, contacts.email::text AS email,
  ARRAY(SELECT e.email::text FROM contact_emails e WHERE e.contact_id = contacts.id ORDER BY e.email <> contacts.email, e.email) AS emails,
  contacts.client_id, contacts.phone, contacts.language, contacts.email_status, contacts.created_at, contacts.updated_at`);

function toContact(row: ContactSqlRow): Contact {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    emails: row.emails ?? [row.email],
    client_id: row.client_id,
    phone: row.phone,
    language: row.language,
    email_status: row.email_status,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export interface ContactWrite {
  name?: string;
  email?: string;
  clientId?: string | null;
  phone?: string | null;
  language?: string | null;
  emailStatus?: Contact['email_status'];
}

/** Each list filter as SQL (unqualified: the list reads `contacts`). */
function filterSql(tenantId: string, filters: ContactFilters): Prisma.Sql[] {
  const out: Prisma.Sql[] = [];
  if (filters.client_id !== undefined) out.push(Prisma.sql`client_id = ${filters.client_id}::uuid`);
  if (filters.email !== undefined) {
    out.push(Prisma.sql`id IN (SELECT contact_id FROM contact_emails WHERE tenant_id = ${tenantId}::uuid AND email = ${filters.email}::citext)`);
  }
  if (filters.q !== undefined) {
    const pattern = `%${filters.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    out.push(Prisma.sql`(name ILIKE ${pattern} OR id IN (SELECT contact_id FROM contact_emails WHERE tenant_id = ${tenantId}::uuid AND email::text ILIKE ${pattern}))`);
  }
  return out;
}

export function createContactsRepository(db: DbTx, connection?: Queryable) {
  const rows = sqlRows(db, connection);
  const txRows = sqlRows(db);

  async function findById(tenantId: string, id: string): Promise<Contact | null> {
    const [row] = await rows<ContactSqlRow>(Prisma.sql`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid`);
    return row ? toContact(row) : null;
  }

  return {
    findById,

    /** Newest first, off (tenant_id[, client_id], created_at, id); the unfiltered total from list_counts. */
    async list(tenantId: string, filters: ContactFilters, page: PageRequest): Promise<{ items: Contact[]; total: number }> {
      const scope = Prisma.sql`tenant_id = ${tenantId}::uuid`;
      const where = filterSql(tenantId, filters);
      const found = await lists.keysetListPage<ContactSqlRow>(txRows, listWindow(page), {
        table: 'contacts',
        select: CONTACT_COLUMNS,
        scope,
        filters: where,
        columns: ['created_at', 'id'],
        direction: 'desc',
        total: where.length ? Prisma.sql`SELECT count(*) FROM contacts WHERE ${Prisma.join([scope, ...where], ' AND ')}` : listCountSql(tenantId, 'contacts'),
      });
      return { items: found.items.map(toContact), total: found.total };
    },

    /** The contact owning this address in the tenant (any of its addresses, in any letter case). */
    async findByEmail(tenantId: string, email: string): Promise<Contact | null> {
      const [row] = await rows<ContactSqlRow>(
        Prisma.sql`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE tenant_id = ${tenantId}::uuid
          AND id = (SELECT contact_id FROM contact_emails WHERE tenant_id = ${tenantId}::uuid AND email = ${email}::citext)`,
      );
      return row ? toContact(row) : null;
    },

    /** Reads the contact and locks it until the transaction ends. */
    async findForUpdate(tenantId: string, id: string): Promise<Contact | null> {
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM contacts WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      return locked.length ? findById(tenantId, id) : null;
    },

    /** Throws a unique violation when one of `emails` is another contact's. */
    async create(tenantId: string, contact: ContactWrite & { name: string; email: string }, emails: string[]): Promise<Contact> {
      const row = await db.contact.create({ data: { tenantId, ...contact } });
      await db.contactEmail.createMany({ data: emails.map((email) => ({ tenantId, email, contactId: row.id })) });
      return (await findById(tenantId, row.id))!;
    },

    /** `emails` (when given) replaces the addresses; throws a unique violation when one is another contact's. */
    async update(tenantId: string, id: string, changes: ContactWrite, emails?: string[]): Promise<Contact> {
      await db.contact.update({ where: { id, tenantId }, data: changes });
      if (emails) {
        await db.contactEmail.deleteMany({ where: { tenantId, contactId: id, email: { notIn: emails } } });
        // Only the addresses new to it: one that is another contact's fails on the primary key.
        await db.$executeRaw`INSERT INTO contact_emails (tenant_id, email, contact_id)
          SELECT ${tenantId}::uuid, e, ${id}::uuid FROM unnest(${emails}::text[]) AS e
          WHERE NOT EXISTS (SELECT 1 FROM contact_emails c WHERE c.tenant_id = ${tenantId}::uuid AND c.contact_id = ${id}::uuid AND c.email = e::citext)`;
      }
      return (await findById(tenantId, id))!;
    },

    async hasTickets(tenantId: string, id: string): Promise<boolean> {
      return (await txRows(Prisma.sql`SELECT 1 FROM tickets WHERE tenant_id = ${tenantId}::uuid AND requester_id = ${id}::uuid LIMIT 1`)).length > 0;
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await db.contact.delete({ where: { id, tenantId } });
    },

    /** Marks the contact owning this address bounced; answers it as it is now, or null when none. */
    async markBounced(tenantId: string, email: string): Promise<Contact | null> {
      const updated = await db.$executeRaw`UPDATE contacts SET email_status = 'bounced', updated_at = now()
        WHERE tenant_id = ${tenantId}::uuid AND email_status <> 'bounced'
          AND id = (SELECT contact_id FROM contact_emails WHERE tenant_id = ${tenantId}::uuid AND email = ${email}::citext)`;
      return updated ? this.findByEmail(tenantId, email) : null;
    },
  };
}

export type ContactsRepository = ReturnType<typeof createContactsRepository>;
