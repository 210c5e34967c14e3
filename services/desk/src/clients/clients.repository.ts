import { inListOrder, listCount, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import { sql, type ExpressionBuilder } from 'kysely';
import type { DB, Db } from '../db';
import { pageOfList } from '../shared/lists';
import type { Client, ClientChanges, NewClient } from './client.schemas';

/** A row of `clients` with its mail domains, as every read selects it. */
interface ClientRecord {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  notes: string | null;
  email_domains: string[];
  sla_policy_id: string | null;
  hourly_rate: number | null;
  currency: string;
  created_at: Date;
  updated_at: Date;
}

function toClient(row: ClientRecord): Client {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    notes: row.notes,
    email_domains: [...row.email_domains].sort(),
    sla_policy_id: row.sla_policy_id,
    hourly_rate: row.hourly_rate,
    currency: row.currency as Client['currency'],
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The client's columns and its domains (as text: citext reads as text anyway). */
const CLIENT_COLUMNS = [
  'clients.id',
  'clients.name',
  'clients.email',
  'clients.phone',
  'clients.notes',
  'clients.sla_policy_id',
  'clients.hourly_rate',
  'clients.currency',
  'clients.created_at',
  'clients.updated_at',
] as const;
const emailDomains = (eb: ExpressionBuilder<DB, 'clients'>) =>
  sql<string[]>`ARRAY(${eb
    .selectFrom('client_email_domains as d')
    .select(sql<string>`d.domain::text`.as('domain'))
    .whereRef('d.client_id', '=', 'clients.id')})`.as('email_domains');

/** Newest first, off (tenant_id, created_at, id). */
const ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'desc' };

/** `reads`: where the list's page and total are read (the read replica with DATABASE_READ_URL); the rest reads `db`. */
export function createClientsRepository(db: Db, reads: Db = db) {
  async function findById(tenantId: string, id: string): Promise<Client | null> {
    const row = await db
      .selectFrom('clients')
      .select(CLIENT_COLUMNS)
      .select(emailDomains)
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return row ? toClient(row) : null;
  }

  return {
    /** Newest first, off (tenant_id, created_at, id); the total from list_counts. */
    async list(tenantId: string, page: PageRequest): Promise<{ items: Client[]; total: number }> {
      const scope = reads.selectFrom('clients').where('tenant_id', '=', tenantId);
      const found = await pageOfList(page, {
        scope,
        order: ORDER,
        page: (window, afterKey) =>
          inListOrder(scope.select(CLIENT_COLUMNS).select(emailDomains), ORDER, window, afterKey).execute(),
        total: () => listCount(reads, { tenantId, list: 'clients' }),
      });
      return { items: found.items.map(toClient), total: found.total };
    },

    findById,

    /** Reads the client and locks it until the transaction ends, so changes to one client queue (and their events keep their order). */
    async findForUpdate(tenantId: string, id: string): Promise<Client | null> {
      const locked = await db
        .selectFrom('clients')
        .select('id')
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return locked ? findById(tenantId, id) : null;
    },

    async exists(tenantId: string, id: string): Promise<boolean> {
      return (
        (await db
          .selectFrom('clients')
          .select(sql`1`.as('one'))
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .executeTakeFirst()) !== undefined
      );
    },

    /** Throws a unique violation when the tenant already has a client of that name. */
    async create(tenantId: string, client: NewClient): Promise<Client> {
      const { email_domains: domains = [], ...fields } = client;
      // The service passes no domains here (it sets them after, to tell their conflict from the name's).
      const row = await db
        .insertInto('clients')
        .values({ ...fields, tenant_id: tenantId })
        .returning([
          'id',
          'name',
          'email',
          'phone',
          'notes',
          'sla_policy_id',
          'hourly_rate',
          'currency',
          'created_at',
          'updated_at',
        ])
        .executeTakeFirstOrThrow();
      if (domains.length)
        await db
          .insertInto('client_email_domains')
          .values(domains.map((domain) => ({ tenant_id: tenantId, client_id: row.id, domain })))
          .execute();
      return toClient({ ...row, email_domains: domains });
    },

    /**
     * Makes `domains` the client's mail domains. Only the domains new to it are inserted: one that
     * is another client's fails on the primary key (a unique violation).
     */
    async setEmailDomains(tenantId: string, id: string, domains: string[]): Promise<void> {
      let stale = db.deleteFrom('client_email_domains').where('tenant_id', '=', tenantId).where('client_id', '=', id);
      if (domains.length) stale = stale.where('domain', 'not in', domains);
      await stale.execute();
      await sql`INSERT INTO client_email_domains (tenant_id, domain, client_id)
        SELECT ${tenantId}::uuid, d, ${id}::uuid FROM unnest(${domains}::text[]) AS d
        WHERE NOT EXISTS (SELECT 1 FROM client_email_domains c WHERE c.tenant_id = ${tenantId}::uuid
          AND c.client_id = ${id}::uuid AND c.domain = d::citext)`.execute(db);
    },

    /** The client owning the mail domain in the tenant, if any. */
    async findByEmailDomain(tenantId: string, domain: string): Promise<Client | null> {
      const owner = await db
        .selectFrom('client_email_domains')
        .select('client_id')
        .where('tenant_id', '=', tenantId)
        .where('domain', '=', domain)
        .executeTakeFirst();
      return owner ? findById(tenantId, owner.client_id) : null;
    },

    /** Throws a unique violation when the new name is taken. */
    async update(tenantId: string, id: string, changes: Omit<ClientChanges, 'email_domains'>): Promise<Client> {
      await db
        .updateTable('clients')
        .set({ ...changes, updated_at: new Date() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .execute();
      return (await findById(tenantId, id))!;
    },
  };
}

export type ClientsRepository = ReturnType<typeof createClientsRepository>;
