import { listCountSql, sqlRows } from '@msp/db';
import type { ListWindow } from '@msp/http';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../lists';
import type { Db } from '../db';

export type ConnectorType = 'scim';

/** A connector as stored: the bearer token only in its sealed (encrypted) form. */
export interface ConnectorRecord {
  id: string;
  ownerTenantId: string;
  managedTenantId: string;
  type: ConnectorType;
  name: string;
  enabled: boolean;
  baseUrl: string;
  bearerTokenEncrypted: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewConnector {
  managedTenantId: string;
  type: ConnectorType;
  name: string;
  enabled: boolean;
  baseUrl: string;
  bearerTokenEncrypted: string;
}

export interface ConnectorChanges {
  name?: string;
  enabled?: boolean;
  baseUrl?: string;
  bearerTokenEncrypted?: string;
}

export interface ConnectorFilter {
  /** Only enabled connectors (the list's default, as the source has it). */
  enabledOnly: boolean;
  managedTenantId?: string;
}

const columns = {
  id: true,
  ownerTenantId: true,
  managedTenantId: true,
  type: true,
  name: true,
  enabled: true,
  baseUrl: true,
  bearerTokenEncrypted: true,
  createdAt: true,
  updatedAt: true,
} as const;

/** The list's columns in SQL, named as the record names them. */
const CONNECTOR_SQL_COLUMNS = Prisma.sql`id, owner_tenant_id AS "ownerTenantId", managed_tenant_id AS "managedTenantId", type::text AS type, name, enabled,
  base_url AS "baseUrl", bearer_token_encrypted AS "bearerTokenEncrypted", created_at AS "createdAt", updated_at AS "updatedAt"`;

type ConnectorSqlRow = Omit<ConnectorRecord, 'createdAt' | 'updatedAt'> & { createdAt: string | Date; updatedAt: string | Date };

/** Every query of the API is bounded by the owner (the caller's MSP tenant); the workers' are not. */
export function createConnectorsRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  return {
    /**
     * A page, newest first, and its exact total in one round trip (plain SQL on the pool). The
     * total of the default list (enabled only) and of include_disabled is a counter of list_counts;
     * with tenant_id it is count(*) through (managed_tenant_id, enabled, ...): a managed tenant has
     * a connector or two, so that count is bounded by them, not by the owner's size.
     */
    async list(ownerTenantId: string, filter: ConnectorFilter, window: ListWindow): Promise<{ items: ConnectorRecord[]; total: number }> {
      const scope = Prisma.sql`owner_tenant_id = ${ownerTenantId}::uuid`;
      const filters = [
        ...(filter.managedTenantId === undefined ? [] : [Prisma.sql`managed_tenant_id = ${filter.managedTenantId}::uuid`]),
        ...(filter.enabledOnly ? [Prisma.sql`enabled`] : []),
      ];
      const { items, total } = await lists.keysetListPage<ConnectorSqlRow>(
        rows,
        window,
        {
          table: 'connectors',
          select: CONNECTOR_SQL_COLUMNS,
          scope,
          filters,
          columns: ['created_at', 'id'],
          direction: 'desc',
          total:
            filter.managedTenantId === undefined
              ? listCountSql(ownerTenantId, 'connectors', filter.enabledOnly ? { dimension: 'enabled', value: 'true' } : undefined)
              : Prisma.sql`SELECT count(*) FROM connectors WHERE ${Prisma.join([scope, ...filters], ' AND ')}`,
        },
      );
      return { items: items.map((row) => ({ ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) })), total };
    },

    findById(ownerTenantId: string, id: string): Promise<ConnectorRecord | null> {
      return db.connector.findFirst({ where: { id, ownerTenantId }, select: columns });
    },

    /** For workers, which act on a connector whoever owns it. */
    findAnyById(id: string): Promise<ConnectorRecord | null> {
      return db.connector.findUnique({ where: { id }, select: columns });
    },

    create(ownerTenantId: string, input: NewConnector): Promise<ConnectorRecord> {
      return db.connector.create({ data: { ownerTenantId, ...input }, select: columns });
    },

    async update(ownerTenantId: string, id: string, changes: ConnectorChanges): Promise<ConnectorRecord | null> {
      const { count } = await db.connector.updateMany({ where: { id, ownerTenantId }, data: changes });
      return count ? db.connector.findUnique({ where: { id }, select: columns }) : null;
    },

    /** Deletes unless a sync run is queued or running, in one statement (no window for a race). */
    async deleteUnlessSyncOpen(ownerTenantId: string, id: string): Promise<'deleted' | 'not_found' | { openRunId: string }> {
      return db.$transaction(async (tx) => {
        const connector = await tx.connector.findFirst({ where: { id, ownerTenantId }, select: { id: true } });
        if (!connector) return 'not_found';
        // The open run's row is locked by the unique key on open_connector_id; a run created
        // after this read would need the connector row, which the delete below holds.
        await tx.$queryRaw`SELECT id FROM connectors WHERE id = ${id}::uuid FOR UPDATE`;
        const open = await tx.syncRun.findFirst({ where: { openConnectorId: id }, select: { id: true } });
        if (open) return { openRunId: open.id };
        await tx.connector.delete({ where: { id } });
        return 'deleted';
      });
    },

    /** The enabled connector of a managed tenant (the newest when there are several). */
    findEnabledForManagedTenant(managedTenantId: string): Promise<ConnectorRecord | null> {
      return db.connector.findFirst({ where: { managedTenantId, enabled: true }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: columns });
    },

    /** Every enabled connector's id (the schedule). */
    async listEnabledIds(): Promise<string[]> {
      const rows = await db.connector.findMany({ where: { enabled: true }, select: { id: true }, orderBy: { createdAt: 'asc' } });
      return rows.map((row) => row.id);
    },
  };
}

export type ConnectorsRepository = ReturnType<typeof createConnectorsRepository>;
