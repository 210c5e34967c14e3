import { inListOrder, listCount, plannedPerCall, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { DB, Db } from '../db';
import { pageOfList } from '../shared/lists';
import { contactSearchQuery } from './contact-search';
import { CONTACT_SEARCH_COUNT_LIMIT, type Contact, type ContactFilters } from './contact.schemas';

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
const CONTACT_COLUMNS = sql.raw(`contacts.id, contacts.name, contacts.email::text AS email,
  ARRAY(SELECT e.email::text FROM contact_emails e WHERE e.contact_id = contacts.id ORDER BY e.email <> contacts.email, e.email) AS emails,
  contacts.client_id, contacts.phone, contacts.language, contacts.email_status, contacts.created_at, contacts.updated_at`);

/** CONTACT_COLUMNS for a query builder over `contacts`. */
const CONTACT_SELECTION = [
  'contacts.id',
  'contacts.name',
  'contacts.email',
  sql<
    string[]
  >`ARRAY(SELECT e.email::text FROM contact_emails e WHERE e.contact_id = contacts.id ORDER BY e.email <> contacts.email, e.email)`.as(
    'emails',
  ),
  'contacts.client_id',
  'contacts.phone',
  'contacts.language',
  sql<Contact['email_status']>`contacts.email_status`.as('email_status'),
  'contacts.created_at',
  'contacts.updated_at',
] as const;

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
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
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
function filterSql(tenantId: string, filters: ContactFilters): RawBuilder<boolean>[] {
  const out: RawBuilder<boolean>[] = [];
  if (filters.client_id !== undefined) out.push(sql<boolean>`client_id = ${filters.client_id}::uuid`);
  if (filters.email !== undefined) {
    out.push(
      sql<boolean>`id IN (SELECT contact_id FROM contact_emails WHERE tenant_id = ${tenantId}::uuid AND email = ${filters.email}::citext)`,
    );
  }
  if (filters.q !== undefined) {
    // search_words: the words of the name and of every address (kept by triggers). Planned with the
    // query's words: ANALYZE's word frequencies decide between the newest rows and the word index.
    const query = contactSearchQuery(filters.q);
    out.push(plannedPerCall(query === null ? sql<boolean>`false` : sql<boolean>`search_words @@ ${query}::tsquery`));
  }
  return out;
}

/**
 * A search's matches in any order, up to one past CONTACT_SEARCH_COUNT_LIMIT, read once (for the
 * total and the page) when first asked for. Without an order the planner picks by the words'
 * frequencies: the word index for words few contacts have, the tenant's rows for words most have.
 * A page in list order would walk the newest rows for any word the statistics do not know, and a
 * rare word's walk reads the whole tenant.
 */
function matchesOf(filtered: SelectQueryBuilder<DB, 'contacts', object>): () => Promise<string[]> {
  let matches: Promise<string[]> | undefined;
  return () =>
    (matches ??= filtered
      .select('id')
      .limit(CONTACT_SEARCH_COUNT_LIMIT + 1)
      .execute()
      .then((rows) => rows.map((row) => row.id)));
}

/** Newest first, off (tenant_id[, client_id], created_at, id). */
const ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'desc' };

export function createContactsRepository(db: Db, reads: Db = db) {
  async function rows<Row>(query: RawBuilder<Row>): Promise<Row[]> {
    return (await query.execute(db)).rows;
  }

  async function findById(tenantId: string, id: string): Promise<Contact | null> {
    const [row] = await rows(
      sql<ContactSqlRow>`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid`,
    );
    return row ? toContact(row) : null;
  }

  async function findByEmail(tenantId: string, email: string): Promise<Contact | null> {
    const [row] = await rows(
      sql<ContactSqlRow>`SELECT ${CONTACT_COLUMNS} FROM contacts WHERE tenant_id = ${tenantId}::uuid
        AND id = (SELECT contact_id FROM contact_emails WHERE tenant_id = ${tenantId}::uuid AND email = ${email}::citext)`,
    );
    return row ? toContact(row) : null;
  }

  return {
    findById,

    /**
     * Newest first, off (tenant_id[, client_id], created_at, id). The total: unfiltered or by client
     * from list_counts; a search's counted up to CONTACT_SEARCH_COUNT_LIMIT (`totalExact` false past
     * it); an address's by its rows (one at most per filter). A search's page: of its matches when
     * they were all counted, else the newest contacts walked for the words.
     */
    async list(
      tenantId: string,
      filters: ContactFilters,
      page: PageRequest,
    ): Promise<{ items: Contact[]; total: number; totalExact?: boolean }> {
      const scope = reads.selectFrom('contacts').where('tenant_id', '=', tenantId);
      const where = filterSql(tenantId, filters);
      const filtered = where.reduce((query, condition) => query.where(condition), scope);
      const searchMatches = filters.q === undefined ? undefined : matchesOf(filtered);
      const counted = async (): Promise<{ total: number; totalExact?: boolean }> => {
        if (searchMatches !== undefined) {
          const count = (await searchMatches()).length;
          return {
            total: Math.min(count, CONTACT_SEARCH_COUNT_LIMIT),
            totalExact: count <= CONTACT_SEARCH_COUNT_LIMIT,
          };
        }
        if (filters.email !== undefined)
          return {
            total: (await filtered.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow())
              .count,
          };
        const byClient =
          filters.client_id === undefined ? {} : { dimension: 'client_id', value: filters.client_id.toLowerCase() };
        return { total: await listCount(reads, { tenantId, list: 'contacts', ...byClient }) };
      };
      let counts: { total: number; totalExact?: boolean } = { total: 0 };
      const found = await pageOfList(page, {
        scope,
        order: ORDER,
        page: async (window, afterKey) => {
          let rowsOf = filtered;
          if (searchMatches !== undefined) {
            // Every match is known when there are no more than the count's cap: the page is theirs,
            // read by key, whatever the planner would guess of the words.
            const ids = await searchMatches();
            if (ids.length <= CONTACT_SEARCH_COUNT_LIMIT) {
              if (!ids.length) return [];
              rowsOf = scope.where(sql<boolean>`id = ANY(${ids}::uuid[])`);
            }
          }
          return inListOrder(rowsOf.select(CONTACT_SELECTION), ORDER, window, afterKey).execute();
        },
        total: async () => (counts = await counted()).total,
      });
      return { items: found.items.map(toContact), ...counts, total: found.total };
    },

    /** The contact owning this address in the tenant (any of its addresses, in any letter case). */
    findByEmail,

    /** Reads the contact and locks it until the transaction ends. */
    async findForUpdate(tenantId: string, id: string): Promise<Contact | null> {
      const locked = await db
        .selectFrom('contacts')
        .select('id')
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return locked ? findById(tenantId, id) : null;
    },

    /** Throws a unique violation when one of `emails` is another contact's. */
    async create(
      tenantId: string,
      contact: ContactWrite & { name: string; email: string },
      emails: string[],
    ): Promise<Contact> {
      const row = await db
        .insertInto('contacts')
        .values({ tenant_id: tenantId, ...columnsOf(contact), name: contact.name, email: contact.email })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (emails.length)
        await db
          .insertInto('contact_emails')
          .values(emails.map((email) => ({ tenant_id: tenantId, email, contact_id: row.id })))
          .execute();
      return (await findById(tenantId, row.id))!;
    },

    /** `emails` (when given) replaces the addresses; throws a unique violation when one is another contact's. */
    async update(tenantId: string, id: string, changes: ContactWrite, emails?: string[]): Promise<Contact> {
      await db
        .updateTable('contacts')
        .set({ ...columnsOf(changes), updated_at: new Date() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .execute();
      if (emails) {
        let stale = db.deleteFrom('contact_emails').where('tenant_id', '=', tenantId).where('contact_id', '=', id);
        if (emails.length) stale = stale.where('email', 'not in', emails);
        await stale.execute();
        // Only the addresses new to it: one that is another contact's fails on the primary key.
        await sql`INSERT INTO contact_emails (tenant_id, email, contact_id)
          SELECT ${tenantId}::uuid, e, ${id}::uuid FROM unnest(${emails}::text[]) AS e
          WHERE NOT EXISTS (SELECT 1 FROM contact_emails c WHERE c.tenant_id = ${tenantId}::uuid
            AND c.contact_id = ${id}::uuid AND c.email = e::citext)`.execute(db);
      }
      return (await findById(tenantId, id))!;
    },

    async hasTickets(tenantId: string, id: string): Promise<boolean> {
      return (
        (await db
          .selectFrom('tickets')
          .select('id')
          .where('tenant_id', '=', tenantId)
          .where('requester_id', '=', id)
          .limit(1)
          .executeTakeFirst()) !== undefined
      );
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await db.deleteFrom('contacts').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
    },

    /** Marks the contact owning this address bounced; answers it as it is now, or null when none. */
    async markBounced(tenantId: string, email: string): Promise<Contact | null> {
      const updated = await sql`UPDATE contacts SET email_status = 'bounced', updated_at = now()
        WHERE tenant_id = ${tenantId}::uuid AND email_status <> 'bounced'
          AND id = (SELECT contact_id FROM contact_emails WHERE tenant_id = ${tenantId}::uuid AND email = ${email}::citext)`.execute(
        db,
      );
      return Number(updated.numAffectedRows ?? 0) ? findByEmail(tenantId, email) : null;
    },
  };
}

/** The columns a write sets: only the fields it gives (undefined is left out). */
function columnsOf(contact: ContactWrite) {
  return {
    name: contact.name,
    email: contact.email,
    client_id: contact.clientId,
    phone: contact.phone,
    language: contact.language,
    email_status: contact.emailStatus,
  };
}

export type ContactsRepository = ReturnType<typeof createContactsRepository>;
