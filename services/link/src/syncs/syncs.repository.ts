import type { RecordChange } from '@msp/events';
import { listCountSql, poolRows, rawSqlOver, sqlRows, typeParsers, withPoolTransaction } from '@msp/db';
import type { ListWindow } from '@msp/http';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../lists';
import { violatedUniqueConstraint, type Db } from '../db';
import type { ConnectorRecord } from '../connectors/connectors.repository';

export type SyncRunStatus = 'queued' | 'running' | 'succeeded' | 'failed';
export type SyncTrigger = 'manual' | 'schedule';
export type SyncMode = 'full' | 'delta';

export interface SyncStats {
  usersSeen: number;
  usersAdded: number;
  usersUpdated: number;
  usersRemoved: number;
  groupsSeen: number;
  mode: SyncMode | null;
  /** Why this mode: a full sync's reason, or the delta's bound. */
  modeReason: string | null;
  deltaSince: Date | null;
}

/** What a successful attempt records beyond its stats: where the next delta starts. */
export interface SyncOutcomeStats extends SyncStats {
  directoryStartedAt: Date;
}

export interface SyncRunRecord extends SyncStats {
  id: string;
  connectorId: string;
  status: SyncRunStatus;
  trigger: SyncTrigger;
  attempts: number;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/**
 * Where the next sync starts from: when the latest successful run began by the directory's clock,
 * and when the latest successful full run began by link's.
 */
export interface SyncBaseline {
  lastDirectoryStartedAt: Date | null;
  lastFullStartedAt: Date | null;
}

export interface MirrorUser {
  scimId: string;
  externalId: string | null;
  userName: string;
  displayName: string | null;
  email: string | null;
  active: boolean;
  groups: string[];
}

/** A mirror user and whether a full sync found it gone. */
export interface StoredMirrorUser extends MirrorUser {
  deletedAt: Date | null;
}

export interface MirrorGroup {
  scimId: string;
  displayName: string;
  /** SCIM ids of the members. */
  members: string[];
}

/** A group as the list shows it. */
export interface MirrorGroupRow {
  scimId: string;
  displayName: string;
  memberCount: number;
  syncedAt: Date;
}

const runColumns = {
  id: true,
  connectorId: true,
  status: true,
  trigger: true,
  attempts: true,
  error: true,
  createdAt: true,
  startedAt: true,
  finishedAt: true,
  usersSeen: true,
  usersAdded: true,
  usersUpdated: true,
  usersRemoved: true,
  groupsSeen: true,
  mode: true,
  modeReason: true,
  deltaSince: true,
} as const;

/** runColumns in SQL, of `sync_runs r`, named as the record names them (a run read or written in one statement). */
const RUN_SQL_COLUMNS = Prisma.sql`r.id, r.connector_id AS "connectorId", r.status::text AS status, r.trigger::text AS trigger, r.attempts, r.error,
  r.created_at AS "createdAt", r.started_at AS "startedAt", r.finished_at AS "finishedAt",
  r.users_seen AS "usersSeen", r.users_added AS "usersAdded", r.users_updated AS "usersUpdated", r.users_removed AS "usersRemoved", r.groups_seen AS "groupsSeen",
  r.mode::text AS mode, r.mode_reason AS "modeReason", r.delta_since AS "deltaSince"`;

const OPEN_RUN_KEY = 'sync_runs_open_connector_id_key';

/** A list of the connector's mirror (users or groups): by `name`, then the SCIM id (text) that `after` names; its total a counter of list_counts. */
function mirrorList(table: 'directory_users' | 'directory_groups', connectorId: string, name: string) {
  return {
    table,
    scope: Prisma.sql`connector_id = ${connectorId}::uuid`,
    columns: [name, 'scim_id'],
    direction: 'asc' as const,
    idColumn: 'scim_id',
    idType: 'text' as const,
    total: listCountSql(connectorId, table),
  };
}

/** What ended a run: the run before and after, and the MSP tenant that owns its connector. */
export interface SyncRunEnd {
  ownerTenantId: string;
  before: SyncRunRecord;
  after: SyncRunRecord;
}

/** The connector already has a queued or running run. */
export class OpenRunExistsError extends Error {
  constructor(readonly openRun: SyncRunRecord | null) {
    super('a sync run is already open');
    this.name = 'OpenRunExistsError';
  }
}

/** pg's own parsers: timestamps as Dates, as through Prisma (for the run's start and end, prepared on the pool). */
const PG_DATES = typeParsers({});

/** A date column of a plain read: an ISO string from the pool. */
const dateOf = (value: string | Date | null): Date | null => (value === null ? null : new Date(value));

export function createSyncsRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  const withDates = poolRows(db.pool, PG_DATES);
  const findOpen = (connectorId: string) => db.syncRun.findFirst({ where: { openConnectorId: connectorId }, select: runColumns });

  return {
    findOpen,

    /** A queued run; the unique open-run key refuses a second one even under a race. */
    async create(connectorId: string, trigger: SyncTrigger): Promise<SyncRunRecord> {
      try {
        return await db.syncRun.create({ data: { connectorId, trigger, openConnectorId: connectorId }, select: runColumns });
      } catch (error) {
        if (violatedUniqueConstraint(error) === OPEN_RUN_KEY) throw new OpenRunExistsError(await findOpen(connectorId));
        throw error;
      }
    },

    /**
     * A page of the connector's runs, newest first, and its exact total (a counter of list_counts
     * kept per connector) in one round trip: plain SQL on the pool, keyset or offset.
     */
    async list(connectorId: string, window: ListWindow): Promise<{ items: SyncRunRecord[]; total: number }> {
      const { items, total } = await lists.keysetListPage<SyncRunRecord>(
        rows,
        window,
        {
          table: 'sync_runs',
          alias: 'r',
          select: RUN_SQL_COLUMNS,
          scope: Prisma.sql`connector_id = ${connectorId}::uuid`,
          columns: ['created_at', 'id'],
          direction: 'desc',
          total: listCountSql(connectorId, 'sync_runs'),
        },
      );
      return {
        items: items.map((run) => ({ ...run, createdAt: new Date(run.createdAt), startedAt: dateOf(run.startedAt), finishedAt: dateOf(run.finishedAt), deltaSince: dateOf(run.deltaSince) })),
        total,
      };
    },

    find(connectorId: string, runId: string): Promise<SyncRunRecord | null> {
      return db.syncRun.findFirst({ where: { id: runId, connectorId }, select: runColumns });
    },

    findById(runId: string): Promise<SyncRunRecord | null> {
      return db.syncRun.findUnique({ where: { id: runId }, select: runColumns });
    },

    /**
     * Starts an attempt of an open run: running, one more attempt. Null when the run is no longer
     * open (or its connector is gone). With the run as it now is, the connector's address and
     * sealed token, and where this sync starts from (SyncBaseline), in the same statement: the
     * attempt needs nothing else before its first call to the directory (a delta that finds
     * nothing costs link one round trip before it asks). The subselects read the runs as they were
     * before this update; the run is not yet `succeeded`, so it is never its own baseline.
     */
    async beginAttempt(runId: string): Promise<(SyncRunRecord & { connector: Pick<ConnectorRecord, 'baseUrl' | 'bearerTokenEncrypted'>; baseline: SyncBaseline }) | null> {
      // On the pool as a prepared statement (pg's Dates, as Prisma's): through $queryRaw the
      // statement was parsed and planned anew and Prisma mapped its row, 2-5 ms of a delta's start.
      const [row] = await withDates<SyncRunRecord & { connectorBaseUrl: string; connectorBearerTokenEncrypted: string } & SyncBaseline>(Prisma.sql`
        UPDATE sync_runs r SET status = 'running', attempts = r.attempts + 1, started_at = COALESCE(r.started_at, now()), attempt_started_at = now()
        FROM connectors c
        WHERE r.id = ${runId}::uuid AND r.status IN ('queued', 'running') AND c.id = r.connector_id
        RETURNING ${RUN_SQL_COLUMNS}, c.base_url AS "connectorBaseUrl", c.bearer_token_encrypted AS "connectorBearerTokenEncrypted",
          (SELECT b.directory_started_at FROM sync_runs b
            WHERE b.connector_id = r.connector_id AND b.status = 'succeeded' AND b.directory_started_at IS NOT NULL
            ORDER BY b.finished_at DESC NULLS LAST LIMIT 1) AS "lastDirectoryStartedAt",
          (SELECT b.attempt_started_at FROM sync_runs b
            WHERE b.connector_id = r.connector_id AND b.status = 'succeeded' AND b.mode = 'full' AND b.attempt_started_at IS NOT NULL
            ORDER BY b.finished_at DESC NULLS LAST LIMIT 1) AS "lastFullStartedAt"`);
      if (!row) return null;
      const { connectorBaseUrl, connectorBearerTokenEncrypted, lastDirectoryStartedAt, lastFullStartedAt, ...run } = row;
      return { ...run, connector: { baseUrl: connectorBaseUrl, bearerTokenEncrypted: connectorBearerTokenEncrypted }, baseline: { lastDirectoryStartedAt, lastFullStartedAt } };
    },

    /**
     * Ends the attempt `attempt` of a run, unless something else (a retry of a lost worker) has
     * moved on meanwhile: a late worker's result never overwrites a newer attempt's. `record` is
     * given the end in the same transaction (the connector's event): a connector has one open run
     * at a time and the next can only begin once this commits, so its events keep the order of
     * its runs.
     */
    finishAttempt(
      runId: string,
      attempt: number,
      outcome: { status: 'succeeded' | 'failed'; error: string | null; stats?: SyncOutcomeStats },
      record: RecordChange<SyncRunEnd>,
    ): Promise<boolean> {
      // A transaction on the pool (withPoolTransaction), its statements prepared: the run's end is
      // taken after the lock, and Prisma's interactive transaction put 2-6 ms before it.
      return withPoolTransaction(db.pool, async (client) => {
        const onClient = poolRows(client, PG_DATES);
        // Locked and read in one statement (lockRow's lock, with the row and its owner): the end of
        // every run pays one round trip less.
        const [before] = await onClient<SyncRunRecord & { ownerTenantId: string }>(Prisma.sql`
          SELECT ${RUN_SQL_COLUMNS}, c.owner_tenant_id::text AS "ownerTenantId"
          FROM sync_runs r JOIN connectors c ON c.id = r.connector_id
          WHERE r.id = ${runId}::uuid FOR UPDATE OF r`);
        if (!before || before.attempts !== attempt || (before.status !== 'queued' && before.status !== 'running')) return false;
        const end = Prisma.sql`status = ${outcome.status}::sync_run_status, error = ${outcome.error}, finished_at = ${new Date()}, open_connector_id = NULL`;
        const { stats } = outcome;
        const [after] = await onClient<SyncRunRecord>(Prisma.sql`
          UPDATE sync_runs r SET ${end}${stats ? Prisma.sql`,
            users_seen = ${stats.usersSeen}, users_added = ${stats.usersAdded}, users_updated = ${stats.usersUpdated},
            users_removed = ${stats.usersRemoved}, groups_seen = ${stats.groupsSeen}, mode = ${stats.mode}::sync_mode,
            mode_reason = ${stats.modeReason}, delta_since = ${stats.deltaSince}, directory_started_at = ${stats.directoryStartedAt}` : Prisma.empty}
          WHERE r.id = ${runId}::uuid
          RETURNING ${RUN_SQL_COLUMNS}`);
        const { ownerTenantId, ...was } = before;
        // The connector's event through @msp/events, in this transaction.
        await record(rawSqlOver(client), { ownerTenantId, before: was, after: after! });
        return true;
      });
    },

    /** Back to queued after a failed attempt that will be retried; the error says what happened. */
    async requeue(runId: string, attempt: number, error: string): Promise<boolean> {
      const { count } = await db.syncRun.updateMany({ where: { id: runId, attempts: attempt, status: { in: ['queued', 'running'] } }, data: { status: 'queued', error } });
      return count > 0;
    },

    /** The latest finished runs, newest first (health). */
    latestFinished(connectorId: string, take: number) {
      return db.syncRun.findMany({
        where: { connectorId, finishedAt: { not: null } },
        orderBy: [{ finishedAt: 'desc' }, { id: 'desc' }],
        take,
        select: { id: true, status: true, finishedAt: true },
      });
    },

    lastSuccessAt(connectorId: string) {
      return db.syncRun.findFirst({ where: { connectorId, status: 'succeeded' }, orderBy: { finishedAt: 'desc' }, select: { finishedAt: true } });
    },

    /** Connectors due for a scheduled run: enabled, of an active managed tenant, nothing open, no scheduled run since `since`. */
    async dueForSchedule(since: Date): Promise<string[]> {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT c.id FROM connectors c
        WHERE c.enabled
          -- a suspended managed tenant is kept but not acted on
          AND EXISTS (SELECT 1 FROM managed_tenants t WHERE t.id = c.managed_tenant_id AND t.status = 'active')
          AND NOT EXISTS (SELECT 1 FROM sync_runs r WHERE r.open_connector_id = c.id)
          AND NOT EXISTS (SELECT 1 FROM sync_runs r WHERE r.connector_id = c.id AND r.trigger = 'schedule' AND r.created_at > ${since})
        ORDER BY c.created_at`;
      return rows.map((row) => row.id);
    },

    // --- the mirror ---------------------------------------------------------------------------

    /** A page of the mirror's users (deleted ones too) by user name, and its exact total (list_counts, per connector). */
    async listMirror(connectorId: string, window: ListWindow): Promise<{ items: StoredMirrorUser[]; total: number }> {
      const { items, total } = await lists.keysetListPage<StoredMirrorUser>(
        rows,
        window,
        {
          ...mirrorList('directory_users', connectorId, 'user_name'),
          select: Prisma.raw(`scim_id AS "scimId", external_id AS "externalId", user_name AS "userName", display_name AS "displayName", email, active, groups,
            deleted_at AS "deletedAt"`),
        },
      );
      return { items: items.map((user) => ({ ...user, deletedAt: dateOf(user.deletedAt) })), total };
    },

    /** A page of the mirror's groups by display name, and its exact total (list_counts, per connector). */
    async listGroups(connectorId: string, window: ListWindow): Promise<{ items: MirrorGroupRow[]; total: number }> {
      const { items, total } = await lists.keysetListPage<MirrorGroupRow>(rows, window, { ...mirrorList('directory_groups', connectorId, 'display_name'), select: Prisma.raw(`scim_id AS "scimId", display_name AS "displayName", member_count AS "memberCount", synced_at AS "syncedAt"`) });
      return { items: items.map((group) => ({ ...group, syncedAt: new Date(group.syncedAt) })), total };
    },

    /** The mirror's users (deleted ones too), or only those of `scimIds`. */
    async loadMirror(connectorId: string, scimIds?: string[]): Promise<StoredMirrorUser[]> {
      if (scimIds && !scimIds.length) return [];
      return db.directoryUser.findMany({
        where: { connectorId, ...(scimIds ? { scimId: { in: scimIds } } : {}) },
        select: { scimId: true, externalId: true, userName: true, displayName: true, email: true, active: true, groups: true, deletedAt: true },
      });
    },

    /** The mirror's groups, or only those of `scimIds`, or those with a member of `memberIds`. */
    async loadGroups(connectorId: string, only?: { scimIds?: string[]; memberIds?: string[] }): Promise<MirrorGroup[]> {
      const select = { scimId: true, displayName: true, members: true } as const;
      if (!only) return db.directoryGroup.findMany({ where: { connectorId }, select });
      const or = [
        ...(only.scimIds?.length ? [{ scimId: { in: only.scimIds } }] : []),
        ...(only.memberIds?.length ? [{ members: { hasSome: only.memberIds } }] : []),
      ];
      return or.length ? db.directoryGroup.findMany({ where: { connectorId, OR: or }, select }) : [];
    },

    /**
     * Applies a sync's differences in one transaction, so the mirror is never half old, half new.
     * Upserts (INSERT … ON CONFLICT) are idempotent: a delta that overlaps the previous run (its
     * safety margin) rewrites the same rows. Users gone from a full sync are marked deleted, not
     * removed; groups gone from one are removed. One statement per 5,000 rows through
     * jsonb_to_recordset: a directory of 10,000 users is two round trips, not 10,000 rows of an
     * ORM batch.
     */
    async applyMirror(
      connectorId: string,
      changes: { upsert: MirrorUser[]; markDeleted: string[]; upsertGroups?: MirrorGroup[]; removeGroups?: string[] },
    ): Promise<void> {
      const CHUNK = 5000;
      const { upsert, markDeleted, upsertGroups = [], removeGroups = [] } = changes;
      if (!upsert.length && !markDeleted.length && !upsertGroups.length && !removeGroups.length) return;
      await db.$transaction(
        async (tx) => {
          for (let i = 0; i < markDeleted.length; i += CHUNK) {
            await tx.$executeRaw`UPDATE directory_users SET deleted_at = now(), synced_at = now() WHERE connector_id = ${connectorId}::uuid AND deleted_at IS NULL AND scim_id = ANY(${markDeleted.slice(i, i + CHUNK)}::text[])`;
          }
          for (let i = 0; i < upsert.length; i += CHUNK) {
            const rows = JSON.stringify(
              upsert.slice(i, i + CHUNK).map((user) => ({
                scim_id: user.scimId,
                external_id: user.externalId,
                user_name: user.userName,
                display_name: user.displayName,
                email: user.email,
                active: user.active,
                groups: user.groups,
              })),
            );
            await tx.$executeRaw`
              INSERT INTO directory_users (connector_id, scim_id, external_id, user_name, display_name, email, active, groups, synced_at, deleted_at)
              SELECT ${connectorId}::uuid, r.scim_id, r.external_id, r.user_name, r.display_name, r.email, r.active, r.groups, now(), NULL
              FROM jsonb_to_recordset(${rows}::jsonb) AS r(scim_id text, external_id text, user_name text, display_name text, email text, active boolean, groups text[])
              ON CONFLICT (connector_id, scim_id) DO UPDATE SET
                external_id = EXCLUDED.external_id, user_name = EXCLUDED.user_name, display_name = EXCLUDED.display_name, email = EXCLUDED.email,
                active = EXCLUDED.active, groups = EXCLUDED.groups, synced_at = EXCLUDED.synced_at, deleted_at = NULL`;
          }
          if (removeGroups.length) {
            await tx.$executeRaw`DELETE FROM directory_groups WHERE connector_id = ${connectorId}::uuid AND scim_id = ANY(${removeGroups}::text[])`;
          }
          for (let i = 0; i < upsertGroups.length; i += CHUNK) {
            const rows = JSON.stringify(upsertGroups.slice(i, i + CHUNK).map((group) => ({ scim_id: group.scimId, display_name: group.displayName, members: group.members })));
            await tx.$executeRaw`
              INSERT INTO directory_groups (connector_id, scim_id, display_name, members, member_count, synced_at)
              SELECT ${connectorId}::uuid, r.scim_id, r.display_name, r.members, cardinality(r.members), now()
              FROM jsonb_to_recordset(${rows}::jsonb) AS r(scim_id text, display_name text, members text[])
              ON CONFLICT (connector_id, scim_id) DO UPDATE SET
                display_name = EXCLUDED.display_name, members = EXCLUDED.members, member_count = EXCLUDED.member_count, synced_at = EXCLUDED.synced_at`;
          }
        },
        { timeout: 120_000, isolationLevel: Prisma.TransactionIsolationLevel.ReadCommitted },
      );
    },
  };
}

export type SyncsRepository = ReturnType<typeof createSyncsRepository>;
