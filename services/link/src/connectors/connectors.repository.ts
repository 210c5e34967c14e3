import { afterKeyOf, inListOrder, listCount, listPage } from '@msp/db';
import { unknownAfterItem, type ListWindow } from '@msp/http';
import type { Selectable } from 'kysely';
import type { Connector, ConnectorType } from '../generated/kysely/database';
import type { Db } from '../db';

/** The database's enum (connector_type): each value has its definition in connector-types.ts. */
export type { ConnectorType };

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
  /**
   * The rest of its config as stored (JSON), which only its type's definition reads (connector-types.ts):
   * so a new type needs no column of its own. Null for a type with none (`scim`).
   */
  settings: unknown;
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
  settings?: unknown;
  /** The Idempotency-Key claim of the request creating it, if it has one (findByIdempotencyClaim). */
  idempotencyClaim: string | null;
}

export interface ConnectorChanges {
  name?: string;
  enabled?: boolean;
  baseUrl?: string;
  bearerTokenEncrypted?: string;
  /** Replaces the stored settings whole; left as they are when undefined. */
  settings?: unknown;
}

export interface ConnectorFilter {
  /** Only enabled connectors (the list's default, as the source has it). */
  enabledOnly: boolean;
  managedTenantId?: string;
}

const COLUMNS = [
  'id',
  'owner_tenant_id',
  'managed_tenant_id',
  'type',
  'name',
  'enabled',
  'base_url',
  'bearer_token_encrypted',
  'ldap_config',
  'created_at',
  'updated_at',
] as const;

/** pg would send a JS array as a Postgres array, not JSON: settings are written as their JSON text. */
function jsonOrNull(settings: unknown): string | null {
  return settings === undefined || settings === null ? null : JSON.stringify(settings);
}

const NEWEST_FIRST = { columns: ['created_at', 'id'], direction: 'desc' } as const;

function toConnector(row: Pick<Selectable<Connector>, (typeof COLUMNS)[number]>): ConnectorRecord {
  return {
    id: row.id,
    ownerTenantId: row.owner_tenant_id,
    managedTenantId: row.managed_tenant_id,
    type: row.type,
    name: row.name,
    enabled: row.enabled,
    baseUrl: row.base_url,
    bearerTokenEncrypted: row.bearer_token_encrypted,
    // The settings column keeps its first name through rolling updates (schema.prisma says why).
    settings: row.ldap_config,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Every query of the API is bounded by the owner (the caller's MSP tenant); the workers' are not.
 *
 * `reads` serves the lists' pages and totals alone (the read replica, tolerating its lag; `db` when
 * there is none); everything else, and every read in a write, goes through `db`.
 */
export function createConnectorsRepository(db: Db, reads: Db = db) {
  const ownedBy = (ownerTenantId: string, on: Db = db) =>
    on.selectFrom('connectors').where('owner_tenant_id', '=', ownerTenantId);
  const one = async (query: Promise<Pick<Selectable<Connector>, (typeof COLUMNS)[number]> | undefined>) => {
    const row = await query;
    return row ? toConnector(row) : null;
  };

  return {
    /**
     * A page, newest first, and its exact total. The total of the default list (enabled only) and
     * of include_disabled is a counter of list_counts; with tenant_id it is count(*) through
     * (managed_tenant_id, enabled, ...): a managed tenant has a connector or two, so that count is
     * bounded by them, not by the owner's size.
     */
    async list(
      ownerTenantId: string,
      filter: ConnectorFilter,
      window: ListWindow,
    ): Promise<{ items: ConnectorRecord[]; total: number }> {
      let rows = ownedBy(ownerTenantId, reads);
      if (filter.managedTenantId !== undefined) rows = rows.where('managed_tenant_id', '=', filter.managedTenantId);
      if (filter.enabledOnly) rows = rows.where('enabled', '=', true);
      const filtered = rows;
      const { items, total } = await listPage({
        window,
        afterKey: (id) => afterKeyOf(ownedBy(ownerTenantId, reads), NEWEST_FIRST, id),
        page: (key) => inListOrder(filtered.select(COLUMNS), NEWEST_FIRST, window, key).execute(),
        total: async () =>
          filter.managedTenantId === undefined
            ? listCount(reads, {
                tenantId: ownerTenantId,
                list: 'connectors',
                ...(filter.enabledOnly ? { dimension: 'enabled', value: 'true' } : {}),
              })
            : (await filtered.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count,
        unknownAfter: unknownAfterItem,
      });
      return { items: items.map(toConnector), total };
    },

    findById(ownerTenantId: string, id: string): Promise<ConnectorRecord | null> {
      return one(ownedBy(ownerTenantId).select(COLUMNS).where('id', '=', id).executeTakeFirst());
    },

    /** For workers, which act on a connector whoever owns it. */
    findAnyById(id: string): Promise<ConnectorRecord | null> {
      return one(db.selectFrom('connectors').select(COLUMNS).where('id', '=', id).executeTakeFirst());
    },

    async create(ownerTenantId: string, input: NewConnector): Promise<ConnectorRecord> {
      const row = await db
        .insertInto('connectors')
        .values({
          owner_tenant_id: ownerTenantId,
          managed_tenant_id: input.managedTenantId,
          type: input.type,
          name: input.name,
          enabled: input.enabled,
          base_url: input.baseUrl,
          bearer_token_encrypted: input.bearerTokenEncrypted,
          ldap_config: jsonOrNull(input.settings),
          idempotency_claim: input.idempotencyClaim,
        })
        .returning(COLUMNS)
        .executeTakeFirstOrThrow();
      return toConnector(row);
    },

    /** The connector that the request holding this Idempotency-Key claim created, whoever owns it. */
    findByIdempotencyClaim(claim: string): Promise<ConnectorRecord | null> {
      return one(db.selectFrom('connectors').select(COLUMNS).where('idempotency_claim', '=', claim).executeTakeFirst());
    },

    update(ownerTenantId: string, id: string, changes: ConnectorChanges): Promise<ConnectorRecord | null> {
      return one(
        db
          .updateTable('connectors')
          .set({
            name: changes.name,
            enabled: changes.enabled,
            base_url: changes.baseUrl,
            bearer_token_encrypted: changes.bearerTokenEncrypted,
            ldap_config: changes.settings === undefined ? undefined : jsonOrNull(changes.settings),
            updated_at: new Date(),
          })
          .where('id', '=', id)
          .where('owner_tenant_id', '=', ownerTenantId)
          .returning(COLUMNS)
          .executeTakeFirst(),
      );
    },

    /** Deletes unless a sync run is queued or running, in one statement (no window for a race). */
    async deleteUnlessSyncOpen(
      ownerTenantId: string,
      id: string,
    ): Promise<'deleted' | 'not_found' | { openRunId: string }> {
      return db.transaction().execute(async (tx) => {
        // The open run's row is locked by the unique key on open_connector_id; a run created
        // after this lock would need the connector row, which this transaction holds until its delete.
        const connector = await tx
          .selectFrom('connectors')
          .select('id')
          .where('id', '=', id)
          .where('owner_tenant_id', '=', ownerTenantId)
          .forUpdate()
          .executeTakeFirst();
        if (!connector) return 'not_found';
        const open = await tx
          .selectFrom('sync_runs')
          .select('id')
          .where('open_connector_id', '=', id)
          .executeTakeFirst();
        if (open) return { openRunId: open.id };
        await tx.deleteFrom('connectors').where('id', '=', id).execute();
        return 'deleted';
      });
    },

    /** The enabled connector of a managed tenant (the newest when there are several). */
    findEnabledForManagedTenant(managedTenantId: string): Promise<ConnectorRecord | null> {
      return one(
        db
          .selectFrom('connectors')
          .select(COLUMNS)
          .where('managed_tenant_id', '=', managedTenantId)
          .where('enabled', '=', true)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirst(),
      );
    },

    /** Every enabled connector's id (the schedule). */
    async listEnabledIds(): Promise<string[]> {
      const rows = await db
        .selectFrom('connectors')
        .select('id')
        .where('enabled', '=', true)
        .orderBy('created_at', 'asc')
        .execute();
      return rows.map((row) => row.id);
    },
  };
}

export type ConnectorsRepository = ReturnType<typeof createConnectorsRepository>;
