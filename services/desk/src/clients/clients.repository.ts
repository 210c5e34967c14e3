import { listCountSql, sqlRows, type Queryable } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type Client as ClientRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { Client, ClientChanges, NewClient } from './client.schemas';

function toClient(row: ClientRow): Client {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    notes: row.notes,
    sla_policy_id: row.slaPolicyId,
    hourly_rate: row.hourlyRate,
    currency: row.currency as Client['currency'],
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** `connection`: where the SQL of `exists` runs when given (the pool); inside a transaction, through it. */
/** `reads`: where the list's page and total are read when given (the read replica's pool, DATABASE_READ_URL); the rest reads the primary. */
export function createClientsRepository(db: DbTx, connection?: Queryable, reads?: Queryable) {
  const rows = sqlRows(db, connection);

  async function findById(tenantId: string, id: string): Promise<Client | null> {
    const row = await db.client.findFirst({ where: { id, tenantId } });
    return row && toClient(row);
  }

  return {
    /** Newest first, off (tenant_id, created_at, id); the total from list_counts. Through Prisma's connection, as the model reads were. */
    async list(tenantId: string, page: PageRequest): Promise<{ items: Client[]; total: number }> {
      const found = await lists.keysetListPage<ClientRow>(
        sqlRows(db, reads),
        listWindow(page),
        {
          table: 'clients',
          select: Prisma.raw(`id, tenant_id AS "tenantId", name::text AS name, email, phone, notes, sla_policy_id AS "slaPolicyId", hourly_rate AS "hourlyRate", currency, created_at AS "createdAt", updated_at AS "updatedAt"`),
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
      const { sla_policy_id: slaPolicyId, hourly_rate: hourlyRate, ...fields } = client;
      return toClient(await db.client.create({ data: { ...fields, slaPolicyId, hourlyRate, tenantId } }));
    },

    /** Throws a unique violation when the new name is taken. */
    async update(tenantId: string, id: string, changes: ClientChanges): Promise<Client> {
      const { sla_policy_id: slaPolicyId, hourly_rate: hourlyRate, ...fields } = changes;
      return toClient(await db.client.update({ where: { id, tenantId }, data: { ...fields, slaPolicyId, hourlyRate } }));
    },
  };
}

export type ClientsRepository = ReturnType<typeof createClientsRepository>;
