import { isoOf, listCountSql, sqlRows, type Queryable } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type Client as ClientRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { Client, ClientChanges, NewClient } from './client.schemas';

type ClientRecord = ClientRow & { emailDomains: string[] | { domain: string }[] };

function toClient(row: ClientRecord): Client {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    notes: row.notes,
    email_domains: row.emailDomains.map((entry) => (typeof entry === 'string' ? entry : entry.domain)).sort(),
    sla_policy_id: row.slaPolicyId,
    hourly_rate: row.hourlyRate,
    currency: row.currency as Client['currency'],
    created_at: isoOf(row.createdAt),
    updated_at: isoOf(row.updatedAt),
  };
}

/** `connection`: where the SQL of `exists` runs when given (the pool); inside a transaction, through it. */
/** `reads`: where the list's page and total are read when given (the read replica's pool, DATABASE_READ_URL); the rest reads the primary. */
export function createClientsRepository(db: DbTx, connection?: Queryable, reads?: Queryable) {
  const rows = sqlRows(db, connection);

  async function findById(tenantId: string, id: string): Promise<Client | null> {
    const row = await db.client.findFirst({ where: { id, tenantId }, include: { emailDomains: { select: { domain: true } } } });
    return row && toClient(row);
  }

  return {
    /** Newest first, off (tenant_id, created_at, id); the total from list_counts. Through Prisma's connection, as the model reads were. */
    async list(tenantId: string, page: PageRequest): Promise<{ items: Client[]; total: number }> {
      const found = await lists.keysetListPage<ClientRecord>(
        sqlRows(db, reads),
        listWindow(page),
        {
          table: 'clients',
          select: Prisma.raw(`id, tenant_id AS "tenantId", name::text AS name, email, phone, notes, ARRAY(SELECT domain::text FROM client_email_domains d WHERE d.client_id = clients.id) AS "emailDomains", sla_policy_id AS "slaPolicyId", hourly_rate AS "hourlyRate", currency, created_at AS "createdAt", updated_at AS "updatedAt"`),
          scope: Prisma.sql`tenant_id = ${tenantId}::uuid`,
          columns: ['created_at', 'id'],
          direction: 'desc',
          total: listCountSql(tenantId, 'clients'),
        },
      );
      return { items: found.items.map(toClient), total: found.total };
    },

    findById,

    /** Reads the client and locks it until the transaction ends, so changes to one client queue (and their events keep their order). */
    async findForUpdate(tenantId: string, id: string): Promise<Client | null> {
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM clients WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      return locked.length ? findById(tenantId, id) : null;
    },

    /** SQL: a check, on the pool outside a transaction. */
    async exists(tenantId: string, id: string): Promise<boolean> {
      return (await rows(Prisma.sql`SELECT 1 FROM clients WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid`)).length > 0;
    },

    /** Throws a unique violation when the tenant already has a client of that name. */
    async create(tenantId: string, client: NewClient): Promise<Client> {
      const { sla_policy_id: slaPolicyId, hourly_rate: hourlyRate, email_domains: emailDomains = [], ...fields } = client;
      // The service passes no domains here (it sets them after, to tell their conflict from the name's).
      return toClient(
        await db.client.create({
          data: { ...fields, slaPolicyId, hourlyRate, tenantId, emailDomains: { create: emailDomains.map((domain) => ({ domain, tenantId })) } },
          include: { emailDomains: { select: { domain: true } } },
        }),
      );
    },

    /**
     * Makes `domains` the client's mail domains. Only the domains new to it are inserted: one that
     * is another client's fails on the primary key (a unique violation).
     */
    async setEmailDomains(tenantId: string, id: string, domains: string[]): Promise<void> {
      await db.clientEmailDomain.deleteMany({ where: { tenantId, clientId: id, domain: { notIn: domains } } });
      await db.$executeRaw`INSERT INTO client_email_domains (tenant_id, domain, client_id)
        SELECT ${tenantId}::uuid, d, ${id}::uuid FROM unnest(${domains}::text[]) AS d
        WHERE NOT EXISTS (SELECT 1 FROM client_email_domains c WHERE c.tenant_id = ${tenantId}::uuid AND c.client_id = ${id}::uuid AND c.domain = d::citext)`;
    },

    /** The client owning the mail domain in the tenant, if any. */
    async findByEmailDomain(tenantId: string, domain: string): Promise<Client | null> {
      const owner = await db.clientEmailDomain.findUnique({ where: { tenantId_domain: { tenantId, domain } } });
      return owner ? findById(tenantId, owner.clientId) : null;
    },

    /** Throws a unique violation when the new name is taken. */
    async update(tenantId: string, id: string, changes: Omit<ClientChanges, 'email_domains'>): Promise<Client> {
      const { sla_policy_id: slaPolicyId, hourly_rate: hourlyRate, ...fields } = changes;
      if (Object.keys(changes).length) await db.client.update({ where: { id, tenantId }, data: { ...fields, slaPolicyId, hourlyRate } });
      else await db.client.update({ where: { id, tenantId }, data: { updatedAt: new Date() } });
      return (await findById(tenantId, id))!;
    },
  };
}

export type ClientsRepository = ReturnType<typeof createClientsRepository>;
