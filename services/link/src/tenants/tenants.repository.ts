import { afterKeyOf, inListOrder, listCount, listPage, rawSqlOverKysely, uniqueViolation } from '@msp/db';
import type { RecordChange } from '@msp/events';
import { unknownAfterItem, type ListWindow } from '@msp/http';
import type { Selectable } from 'kysely';
import type { ManagedTenant } from '../generated/kysely/database';
import type { Db } from '../db';
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

const COLUMNS = ['id', 'name', 'domain', 'client_id', 'status', 'created_at', 'updated_at'] as const;

const NEWEST_FIRST = { columns: ['created_at', 'id'], direction: 'desc' } as const;

function toTenant(row: Pick<Selectable<ManagedTenant>, (typeof COLUMNS)[number]>): TenantRecord {
  return {
    id: row.id,
    name: row.name,
    domain: row.domain,
    clientId: row.client_id,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Every query is bounded by the owner, the MSP tenant named by the caller's token: another
 * owner's rows are simply not found.
 *
 * `reads` serves the lists' pages and totals alone (the read replica, tolerating its lag; `db` when
 * there is none); everything else, and every read in a write, goes through `db`.
 */
export function createTenantsRepository(db: Db, reads: Db = db) {
  const ownedBy = (ownerTenantId: string, on: Db = db) =>
    on.selectFrom('managed_tenants').where('owner_tenant_id', '=', ownerTenantId);

  return {
    /**
     * A page, newest first, and its exact total. The total of the whole list or of one filter is a
     * counter of list_counts; both filters at once count the rows (through the client's index,
     * bounded by the client's tenants).
     */
    async list(
      ownerTenantId: string,
      filter: TenantFilter,
      window: ListWindow,
    ): Promise<{ items: TenantRecord[]; total: number }> {
      let rows = ownedBy(ownerTenantId, reads);
      if (filter.status !== undefined) rows = rows.where('status', '=', filter.status);
      if (filter.clientId !== undefined) rows = rows.where('client_id', '=', filter.clientId);
      const filtered = rows;
      const { items, total } = await listPage({
        window,
        afterKey: (id) => afterKeyOf(ownedBy(ownerTenantId, reads), NEWEST_FIRST, id),
        page: (key) => inListOrder(filtered.select(COLUMNS), NEWEST_FIRST, window, key).execute(),
        total: async () => {
          if (filter.status !== undefined && filter.clientId !== undefined) {
            return (await filtered.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow())
              .count;
          }
          const counted =
            filter.status !== undefined
              ? { dimension: 'status', value: filter.status }
              : filter.clientId !== undefined
                ? { dimension: 'client_id', value: filter.clientId }
                : {};
          return listCount(reads, { tenantId: ownerTenantId, list: 'managed_tenants', ...counted });
        },
        unknownAfter: unknownAfterItem,
      });
      return { items: items.map(toTenant), total };
    },

    async findById(ownerTenantId: string, id: string): Promise<TenantRecord | null> {
      const row = await ownedBy(ownerTenantId).select(COLUMNS).where('id', '=', id).executeTakeFirst();
      return row ? toTenant(row) : null;
    },

    /** The owner's managed tenant of a DNS domain (any case). */
    async findByDomain(ownerTenantId: string, domain: string): Promise<TenantRecord | null> {
      const row = await ownedBy(ownerTenantId)
        .select(COLUMNS)
        .where('domain', '=', domain.toLowerCase())
        .executeTakeFirst();
      return row ? toTenant(row) : null;
    },

    /** Null when the owner has no such tenant; else `record` is given the tenant before and after, in the transaction. */
    update(
      ownerTenantId: string,
      id: string,
      changes: { name?: string; status?: TenantStatus },
      record: RecordChange<{ before: TenantRecord; after: TenantRecord }>,
    ): Promise<TenantRecord | null> {
      return db.transaction().execute(async (tx) => {
        // Locked before it is read: `before` is exact, and the tenant's events commit in the order of its changes.
        const locked = await tx
          .selectFrom('managed_tenants')
          .select(COLUMNS)
          .where('id', '=', id)
          .where('owner_tenant_id', '=', ownerTenantId)
          .forUpdate()
          .executeTakeFirst();
        if (!locked) return null;
        const before = toTenant(locked);
        const after = toTenant(
          await tx
            .updateTable('managed_tenants')
            .set({ name: changes.name, status: changes.status, updated_at: new Date() })
            .where('id', '=', id)
            .returning(COLUMNS)
            .executeTakeFirstOrThrow(),
        );
        await record(rawSqlOverKysely(tx), { before, after });
        return after;
      });
    },

    /** The tenant, and `record` (its event) in the same transaction. */
    async create(ownerTenantId: string, input: NewTenant, record: RecordChange<TenantRecord>): Promise<TenantRecord> {
      try {
        return await db.transaction().execute(async (tx) => {
          const tenant = toTenant(
            await tx
              .insertInto('managed_tenants')
              .values({
                owner_tenant_id: ownerTenantId,
                name: input.name,
                domain: input.domain,
                client_id: input.clientId,
                status: input.status,
              })
              .returning(COLUMNS)
              .executeTakeFirstOrThrow(),
          );
          await record(rawSqlOverKysely(tx), tenant);
          return tenant;
        });
      } catch (error) {
        if (uniqueViolation(error) === DOMAIN_PER_OWNER_KEY) throw new DuplicateDomainError(input.domain);
        throw error;
      }
    },
  };
}

export type TenantsRepository = ReturnType<typeof createTenantsRepository>;
