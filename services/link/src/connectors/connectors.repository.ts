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

/** Every query of the API is bounded by the owner (the caller's MSP tenant); the workers' are not. */
export function createConnectorsRepository(db: Db) {
  return {
    async list(ownerTenantId: string, filter: ConnectorFilter, window: { skip: number; take: number }) {
      const where = { ownerTenantId, managedTenantId: filter.managedTenantId, ...(filter.enabledOnly ? { enabled: true } : {}) };
      const [items, total] = await db.$transaction([
        db.connector.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: columns, ...window }),
        db.connector.count({ where }),
      ]);
      return { items, total };
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
