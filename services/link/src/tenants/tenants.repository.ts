import { listCountSql, sqlRows, type SqlQuery } from '@msp/db';
import type { RecordChange } from '@msp/events';
import type { ListWindow } from '@msp/http';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../lists';
import { lockRow, violatedUniqueConstraint, type Db } from '../db';
import type { TenantStatus } from './tenant.schemas';

export interface TenantRecord {
  id: string;
  name: string;
  domain: string;
  clientId: string;
  status: TenantStatus;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewTenant {
  name: string;
  domain: string;
  clientId: string;
  status: TenantStatus;
}

export interface TenantFilter {
  status?: TenantStatus;
  clientId?: string;
}

/** The owner already manages a tenant with this domain. */
export class DuplicateDomainError extends Error {
  constructor(readonly domain: string) {
    super(`duplicate managed tenant domain ${domain}`);
    this.name = 'DuplicateDomainError';
  }
}

// Named in the migration by Prisma's convention for @@unique([ownerTenantId, domain]).
const DOMAIN_PER_OWNER_KEY = 'managed_tenants_owner_tenant_id_domain_key';

const columns = { id: true, name: true, domain: true, clientId: true, status: true, createdAt: true, updatedAt: true } as const;

/*
 * The list and the single read are plain SQL on the pool under Prisma (sqlRows of @msp/db): a
 * batch of findMany and count in a Prisma transaction cost several times the CPU of the same
 * SELECTs through pg (bench/README.md, issue 12). Writes keep the model API.
 */
const TENANT_COLUMNS = Prisma.sql`id, name, domain, client_id, status::text AS status, created_at, updated_at`;

interface TenantSqlRow {
  id: string;
  name: string;
  domain: string;
  client_id: string;
  status: TenantStatus;
  created_at: string | Date;
  updated_at: string | Date;
}

function fromSql(row: TenantSqlRow): TenantRecord {
  return { id: row.id, name: row.name, domain: row.domain, clientId: row.client_id, status: row.status, createdAt: new Date(row.created_at), updatedAt: new Date(row.updated_at) };
}

/**
 * Every query is bounded by the owner, the MSP tenant named by the caller's token: another
 * owner's rows are simply not found.
 */
export function createTenantsRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  return {
    /**
     * A page and its exact total in one round trip (keysetListPage); newest first. The total of the
     * whole list or of one filter is a counter of list_counts; both filters at once count the rows
     * (through the client's index, bounded by the client's tenants).
     */
    async list(ownerTenantId: string, filter: TenantFilter, window: ListWindow): Promise<{ items: TenantRecord[]; total: number }> {
      const scope = Prisma.sql`owner_tenant_id = ${ownerTenantId}::uuid`;
      const filters = [
        ...(filter.status === undefined ? [] : [Prisma.sql`status = ${filter.status}::managed_tenant_status`]),
        ...(filter.clientId === undefined ? [] : [Prisma.sql`client_id = ${filter.clientId}::uuid`]),
      ];
      const total: SqlQuery =
        filter.status !== undefined && filter.clientId !== undefined
          ? Prisma.sql`SELECT count(*) FROM managed_tenants WHERE ${Prisma.join([scope, ...filters], ' AND ')}`
          : listCountSql(
              ownerTenantId,
              'managed_tenants',
              filter.status !== undefined ? { dimension: 'status', value: filter.status } : filter.clientId !== undefined ? { dimension: 'client_id', value: filter.clientId } : undefined,
            );
      const { items, total: counted } = await lists.keysetListPage<TenantSqlRow>(rows, window, { table: 'managed_tenants', select: TENANT_COLUMNS, scope, filters, columns: ['created_at', 'id'], direction: 'desc', total });
      return { items: items.map(fromSql), total: counted };
    },

    async findById(ownerTenantId: string, id: string): Promise<TenantRecord | null> {
      const [row] = await rows<TenantSqlRow>(Prisma.sql`SELECT ${TENANT_COLUMNS} FROM managed_tenants WHERE id = ${id}::uuid AND owner_tenant_id = ${ownerTenantId}::uuid`);
      return row ? fromSql(row) : null;
    },

    /** Null when the owner has no such tenant; else `record` is given the tenant before and after, in the transaction. */
    update(
      ownerTenantId: string,
      id: string,
      changes: { name?: string; status?: TenantStatus },
      record: RecordChange<{ before: TenantRecord; after: TenantRecord }>,
    ): Promise<TenantRecord | null> {
      return db.$transaction(async (tx) => {
        const before = (await lockRow(tx, 'managed_tenants', id)) && (await tx.managedTenant.findFirst({ where: { id, ownerTenantId }, select: columns }));
        if (!before) return null;
        const after = await tx.managedTenant.update({ where: { id }, data: changes, select: columns });
        await record(tx, { before, after });
        return after;
      });
    },

    /** The tenant, and `record` (its event) in the same transaction. */
    async create(ownerTenantId: string, input: NewTenant, record: RecordChange<TenantRecord>): Promise<TenantRecord> {
      try {
        return await db.$transaction(async (tx) => {
          const tenant = await tx.managedTenant.create({ data: { ownerTenantId, ...input }, select: columns });
          await record(tx, tenant);
          return tenant;
        });
      } catch (error) {
        if (violatedUniqueConstraint(error) === DOMAIN_PER_OWNER_KEY) throw new DuplicateDomainError(input.domain);
        throw error;
      }
    },
  };
}

export type TenantsRepository = ReturnType<typeof createTenantsRepository>;
