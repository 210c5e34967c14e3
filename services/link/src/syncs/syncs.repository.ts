import type { RecordChange } from '@msp/events';
import { afterKeyOf, inListOrder, listCount, listPage, rawSqlOverKysely, uniqueViolation } from '@msp/db';
import { unknownAfterItem, type ListWindow } from '@msp/http';
import { sql, type Selectable } from 'kysely';
import type { DirectoryGroup, DirectoryUser, SyncRun } from '../generated/kysely/database';
import type { Db } from '../db';
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
  /** The directory's change counter when the attempt began, where it has one (AD). */
  directoryCursor?: string | null;
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
  /** The change counter the latest successful run began at (AD's highest committed USN), if any. */
  lastDirectoryCursor?: string | null;
}

export interface MirrorUser {
  scimId: string;
  externalId: string | null;
  userName: string;
  displayName: string | null;
  email: string | null;
  active: boolean;
  groups: string[];
  department: string | null;
  /** The directory id of the user's manager. */
  manager: string | null;
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

const RUN_COLUMNS = [
  'id',
  'connector_id',
  'status',
  'trigger',
  'attempts',
  'error',
  'created_at',
  'started_at',
  'finished_at',
  'users_seen',
  'users_added',
  'users_updated',
  'users_removed',
  'groups_seen',
  'mode',
  'mode_reason',
  'delta_since',
] as const;

/** RUN_COLUMNS of `sync_runs r`, for the statements that join the run's connector. */
const RUN_COLUMNS_OF_R = RUN_COLUMNS.map((column) => `r.${column}` as const);

type SyncRunRow = Pick<Selectable<SyncRun>, (typeof RUN_COLUMNS)[number]>;

function toSyncRun(row: SyncRunRow): SyncRunRecord {
  return {
    id: row.id,
    connectorId: row.connector_id,
    status: row.status,
    trigger: row.trigger,
    attempts: row.attempts,
    error: row.error,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    usersSeen: row.users_seen,
    usersAdded: row.users_added,
    usersUpdated: row.users_updated,
    usersRemoved: row.users_removed,
    groupsSeen: row.groups_seen,
    mode: row.mode,
    modeReason: row.mode_reason,
    deltaSince: row.delta_since,
  };
}

const MIRROR_USER_COLUMNS = [
  'scim_id',
  'external_id',
  'user_name',
  'display_name',
  'email',
  'active',
  'groups',
  'department',
  'manager',
  'deleted_at',
] as const;

function toMirrorUser(row: Pick<Selectable<DirectoryUser>, (typeof MIRROR_USER_COLUMNS)[number]>): StoredMirrorUser {
  return {
    scimId: row.scim_id,
    externalId: row.external_id,
    userName: row.user_name,
    displayName: row.display_name,
    email: row.email,
    active: row.active,
    groups: row.groups,
    department: row.department,
    manager: row.manager,
    deletedAt: row.deleted_at,
  };
}

const GROUP_ROW_COLUMNS = ['scim_id', 'display_name', 'member_count', 'synced_at'] as const;

function toGroupRow(row: Pick<Selectable<DirectoryGroup>, (typeof GROUP_ROW_COLUMNS)[number]>): MirrorGroupRow {
  return { scimId: row.scim_id, displayName: row.display_name, memberCount: row.member_count, syncedAt: row.synced_at };
}

const toMirrorGroup = (row: Pick<Selectable<DirectoryGroup>, 'scim_id' | 'display_name' | 'members'>): MirrorGroup => ({
  scimId: row.scim_id,
  displayName: row.display_name,
  members: row.members,
});

const OPEN_RUN_KEY = 'sync_runs_open_connector_id_key';

/** What an attempt needs of its connector to call the directory. */
type AttemptConnector = Pick<ConnectorRecord, 'type' | 'baseUrl' | 'bearerTokenEncrypted' | 'settings'>;

/** The mirror's lists are in name order, then by the SCIM id that `after` names. */
const BY_USER_NAME = { columns: ['user_name', 'scim_id'], direction: 'asc' } as const;
const BY_DISPLAY_NAME = { columns: ['display_name', 'scim_id'], direction: 'asc' } as const;
const NEWEST_FIRST = { columns: ['created_at', 'id'], direction: 'desc' } as const;

/** Rows written per statement when the mirror is applied: a directory of 10,000 users is two statements. */
const CHUNK = 5000;

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

/**
 * `reads` serves the lists' pages and totals alone (the read replica, tolerating its lag; `db` when
 * there is none); everything else, and every read in a write, goes through `db`.
 */
export function createSyncsRepository(db: Db, reads: Db = db) {
  const findOpen = async (connectorId: string): Promise<SyncRunRecord | null> => {
    const row = await db
      .selectFrom('sync_runs')
      .select(RUN_COLUMNS)
      .where('open_connector_id', '=', connectorId)
      .executeTakeFirst();
    return row ? toSyncRun(row) : null;
  };

  return {
    findOpen,

    /** A queued run; the unique open-run key refuses a second one even under a race. */
    async create(connectorId: string, trigger: SyncTrigger): Promise<SyncRunRecord> {
      try {
        const row = await db
          .insertInto('sync_runs')
          .values({ connector_id: connectorId, trigger, open_connector_id: connectorId })
          .returning(RUN_COLUMNS)
          .executeTakeFirstOrThrow();
        return toSyncRun(row);
      } catch (error) {
        if (uniqueViolation(error) === OPEN_RUN_KEY) throw new OpenRunExistsError(await findOpen(connectorId));
        throw error;
      }
    },

    /** A page of the connector's runs, newest first, and its exact total (a counter of list_counts kept per connector). */
    async list(connectorId: string, window: ListWindow): Promise<{ items: SyncRunRecord[]; total: number }> {
      const runs = reads.selectFrom('sync_runs').where('connector_id', '=', connectorId);
      const { items, total } = await listPage({
        window,
        afterKey: (id) => afterKeyOf(runs, NEWEST_FIRST, id),
        page: (key) => inListOrder(runs.select(RUN_COLUMNS), NEWEST_FIRST, window, key).execute(),
        total: () => listCount(reads, { tenantId: connectorId, list: 'sync_runs' }),
        unknownAfter: unknownAfterItem,
      });
      return { items: items.map(toSyncRun), total };
    },

    async find(connectorId: string, runId: string): Promise<SyncRunRecord | null> {
      const row = await db
        .selectFrom('sync_runs')
        .select(RUN_COLUMNS)
        .where('id', '=', runId)
        .where('connector_id', '=', connectorId)
        .executeTakeFirst();
      return row ? toSyncRun(row) : null;
    },

    async findById(runId: string): Promise<SyncRunRecord | null> {
      const row = await db.selectFrom('sync_runs').select(RUN_COLUMNS).where('id', '=', runId).executeTakeFirst();
      return row ? toSyncRun(row) : null;
    },

    /**
     * Starts an attempt of an open run: running, one more attempt. Null when the run is no longer
     * open (or its connector is gone). With the run as it now is, the connector's address and
     * sealed token, and where this sync starts from (SyncBaseline), in the same statement: the
     * attempt needs nothing else before its first call to the directory (a delta that finds
     * nothing costs link one round trip before it asks). The subselects read the runs as they were
     * before this update; the run is not yet `succeeded`, so it is never its own baseline.
     */
    async beginAttempt(
      runId: string,
    ): Promise<(SyncRunRecord & { connector: AttemptConnector; baseline: SyncBaseline }) | null> {
      const row = await db
        .updateTable('sync_runs as r')
        .from('connectors as c')
        .set((eb) => ({
          status: 'running',
          attempts: eb('r.attempts', '+', 1),
          started_at: eb.fn.coalesce('r.started_at', sql<Date>`now()`),
          attempt_started_at: sql<Date>`now()`,
        }))
        .where('r.id', '=', runId)
        .where('r.status', 'in', ['queued', 'running'])
        .whereRef('c.id', '=', 'r.connector_id')
        .returning((eb) => [
          ...RUN_COLUMNS_OF_R,
          'c.type',
          'c.base_url',
          'c.bearer_token_encrypted',
          'c.ldap_config',
          eb
            .selectFrom('sync_runs as b')
            .select('b.directory_started_at')
            .whereRef('b.connector_id', '=', 'r.connector_id')
            .where('b.status', '=', 'succeeded')
            .where('b.directory_started_at', 'is not', null)
            .orderBy('b.finished_at', (order) => order.desc().nullsLast())
            .limit(1)
            .as('last_directory_started_at'),
          eb
            .selectFrom('sync_runs as b')
            .select('b.directory_cursor')
            .whereRef('b.connector_id', '=', 'r.connector_id')
            .where('b.status', '=', 'succeeded')
            .where('b.directory_started_at', 'is not', null)
            .orderBy('b.finished_at', (order) => order.desc().nullsLast())
            .limit(1)
            .as('last_directory_cursor'),
          eb
            .selectFrom('sync_runs as b')
            .select('b.attempt_started_at')
            .whereRef('b.connector_id', '=', 'r.connector_id')
            .where('b.status', '=', 'succeeded')
            .where('b.mode', '=', 'full')
            .where('b.attempt_started_at', 'is not', null)
            .orderBy('b.finished_at', (order) => order.desc().nullsLast())
            .limit(1)
            .as('last_full_started_at'),
        ])
        .executeTakeFirst();
      if (!row) return null;
      return {
        ...toSyncRun(row),
        connector: {
          type: row.type,
          baseUrl: row.base_url,
          bearerTokenEncrypted: row.bearer_token_encrypted,
          settings: row.ldap_config,
        },
        baseline: {
          lastDirectoryStartedAt: row.last_directory_started_at,
          lastFullStartedAt: row.last_full_started_at,
          lastDirectoryCursor: row.last_directory_cursor,
        },
      };
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
      return db.transaction().execute(async (tx) => {
        // The run locked and read with its owner in one statement.
        const locked = await tx
          .selectFrom('sync_runs as r')
          .innerJoin('connectors as c', 'c.id', 'r.connector_id')
          .select([...RUN_COLUMNS_OF_R, 'c.owner_tenant_id'])
          .where('r.id', '=', runId)
          .forUpdate('r')
          .executeTakeFirst();
        if (!locked || locked.attempts !== attempt || (locked.status !== 'queued' && locked.status !== 'running'))
          return false;
        const { stats } = outcome;
        const after = await tx
          .updateTable('sync_runs')
          .set({
            status: outcome.status,
            error: outcome.error,
            finished_at: new Date(),
            open_connector_id: null,
            ...(stats
              ? {
                  users_seen: stats.usersSeen,
                  users_added: stats.usersAdded,
                  users_updated: stats.usersUpdated,
                  users_removed: stats.usersRemoved,
                  groups_seen: stats.groupsSeen,
                  mode: stats.mode,
                  mode_reason: stats.modeReason,
                  delta_since: stats.deltaSince,
                  directory_started_at: stats.directoryStartedAt,
                  directory_cursor: stats.directoryCursor ?? null,
                }
              : {}),
          })
          .where('id', '=', runId)
          .returning(RUN_COLUMNS)
          .executeTakeFirstOrThrow();
        await record(rawSqlOverKysely(tx), {
          ownerTenantId: locked.owner_tenant_id,
          before: toSyncRun(locked),
          after: toSyncRun(after),
        });
        return true;
      });
    },

    /** Back to queued after a failed attempt that will be retried; the error says what happened. */
    async requeue(runId: string, attempt: number, error: string): Promise<boolean> {
      const result = await db
        .updateTable('sync_runs')
        .set({ status: 'queued', error })
        .where('id', '=', runId)
        .where('attempts', '=', attempt)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** The latest finished runs, newest first (health). */
    async latestFinished(
      connectorId: string,
      take: number,
    ): Promise<{ id: string; status: SyncRunStatus; finishedAt: Date | null }[]> {
      const rows = await db
        .selectFrom('sync_runs')
        .select(['id', 'status', 'finished_at'])
        .where('connector_id', '=', connectorId)
        .where('finished_at', 'is not', null)
        .orderBy('finished_at', 'desc')
        .orderBy('id', 'desc')
        .limit(take)
        .execute();
      return rows.map((row) => ({ id: row.id, status: row.status, finishedAt: row.finished_at }));
    },

    async lastSuccessAt(connectorId: string): Promise<{ finishedAt: Date | null } | null> {
      const row = await db
        .selectFrom('sync_runs')
        .select('finished_at')
        .where('connector_id', '=', connectorId)
        .where('status', '=', 'succeeded')
        .orderBy('finished_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row ? { finishedAt: row.finished_at } : null;
    },

    /** Connectors due for a scheduled run: enabled, of an active managed tenant, nothing open, no scheduled run since `since`. */
    async dueForSchedule(since: Date): Promise<string[]> {
      const rows = await db
        .selectFrom('connectors as c')
        .select('c.id')
        .where('c.enabled', '=', true)
        .where(({ exists, not, selectFrom }) =>
          exists(
            // a suspended managed tenant is kept but not acted on
            selectFrom('managed_tenants as t')
              .select('t.id')
              .whereRef('t.id', '=', 'c.managed_tenant_id')
              .where('t.status', '=', 'active'),
          )
            .and(not(exists(selectFrom('sync_runs as r').select('r.id').whereRef('r.open_connector_id', '=', 'c.id'))))
            .and(
              not(
                exists(
                  selectFrom('sync_runs as r')
                    .select('r.id')
                    .whereRef('r.connector_id', '=', 'c.id')
                    .where('r.trigger', '=', 'schedule')
                    .where('r.created_at', '>', since),
                ),
              ),
            ),
        )
        .orderBy('c.created_at')
        .execute();
      return rows.map((row) => row.id);
    },

    // --- the mirror ---------------------------------------------------------------------------

    /** A page of the mirror's users (deleted ones too) by user name, and its exact total (list_counts, per connector). */
    async listMirror(connectorId: string, window: ListWindow): Promise<{ items: StoredMirrorUser[]; total: number }> {
      const users = reads.selectFrom('directory_users').where('connector_id', '=', connectorId);
      const { items, total } = await listPage({
        window,
        afterKey: (scimId) => afterKeyOf(users, BY_USER_NAME, scimId, 'scim_id'),
        page: (key) => inListOrder(users.select(MIRROR_USER_COLUMNS), BY_USER_NAME, window, key).execute(),
        total: () => listCount(reads, { tenantId: connectorId, list: 'directory_users' }),
        unknownAfter: unknownAfterItem,
      });
      return { items: items.map(toMirrorUser), total };
    },

    /** A page of the mirror's groups by display name, and its exact total (list_counts, per connector). */
    async listGroups(connectorId: string, window: ListWindow): Promise<{ items: MirrorGroupRow[]; total: number }> {
      const groups = reads.selectFrom('directory_groups').where('connector_id', '=', connectorId);
      const { items, total } = await listPage({
        window,
        afterKey: (scimId) => afterKeyOf(groups, BY_DISPLAY_NAME, scimId, 'scim_id'),
        page: (key) => inListOrder(groups.select(GROUP_ROW_COLUMNS), BY_DISPLAY_NAME, window, key).execute(),
        total: () => listCount(reads, { tenantId: connectorId, list: 'directory_groups' }),
        unknownAfter: unknownAfterItem,
      });
      return { items: items.map(toGroupRow), total };
    },

    /** The mirror's users of `scimIds` (deleted ones too). */
    async loadMirror(connectorId: string, scimIds: string[]): Promise<StoredMirrorUser[]> {
      if (!scimIds.length) return [];
      const users = await db
        .selectFrom('directory_users')
        .select(MIRROR_USER_COLUMNS)
        .where('connector_id', '=', connectorId)
        .where((eb) => eb('scim_id', '=', eb.fn.any(eb.val(scimIds))))
        .execute();
      return users.map(toMirrorUser);
    },

    /** The ids of the mirror's users not marked deleted: those a full sync marks deleted unless it lists them. */
    async liveMirrorIds(connectorId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('directory_users')
        .select('scim_id')
        .where('connector_id', '=', connectorId)
        .where('deleted_at', 'is', null)
        .execute();
      return rows.map((row) => row.scim_id);
    },

    /** The mirror's groups, or only those of `scimIds`, or those with a member of `memberIds`. */
    async loadGroups(connectorId: string, only?: { scimIds?: string[]; memberIds?: string[] }): Promise<MirrorGroup[]> {
      const groups = db
        .selectFrom('directory_groups')
        .select(['scim_id', 'display_name', 'members'])
        .where('connector_id', '=', connectorId);
      if (!only) return (await groups.execute()).map(toMirrorGroup);
      const { scimIds = [], memberIds = [] } = only;
      if (!scimIds.length && !memberIds.length) return [];
      const rows = await groups
        .where((eb) =>
          eb.or([
            ...(scimIds.length ? [eb('scim_id', '=', eb.fn.any(eb.val(scimIds)))] : []),
            ...(memberIds.length ? [eb('members', '&&', eb.val(memberIds))] : []),
          ]),
        )
        .execute();
      return rows.map(toMirrorGroup);
    },

    /**
     * Applies a sync's differences in one transaction, so the mirror is never half old, half new.
     * Upserts (INSERT … ON CONFLICT) are idempotent: a delta that overlaps the previous run (its
     * safety margin) rewrites the same rows. Users gone from a full sync are marked deleted, not
     * removed; groups gone from one are removed. One statement per CHUNK rows through
     * jsonb_to_recordset (a column definition list, which the builder does not say), not a row each.
     */
    async applyMirror(
      connectorId: string,
      changes: { upsert: MirrorUser[]; markDeleted: string[]; upsertGroups?: MirrorGroup[]; removeGroups?: string[] },
    ): Promise<void> {
      const { upsert, markDeleted, upsertGroups = [], removeGroups = [] } = changes;
      if (!upsert.length && !markDeleted.length && !upsertGroups.length && !removeGroups.length) return;
      await db.transaction().execute(async (tx) => {
        for (let i = 0; i < markDeleted.length; i += CHUNK) {
          const gone = markDeleted.slice(i, i + CHUNK);
          await tx
            .updateTable('directory_users')
            .set({ deleted_at: sql<Date>`now()`, synced_at: sql<Date>`now()` })
            .where('connector_id', '=', connectorId)
            .where('deleted_at', 'is', null)
            .where((eb) => eb('scim_id', '=', eb.fn.any(eb.val(gone))))
            .execute();
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
              department: user.department,
              manager: user.manager,
            })),
          );
          await sql`
            INSERT INTO directory_users (connector_id, scim_id, external_id, user_name, display_name, email, active,
              groups, department, manager, synced_at, deleted_at)
            SELECT ${connectorId}::uuid, r.scim_id, r.external_id, r.user_name, r.display_name, r.email, r.active,
              r.groups, r.department, r.manager, now(), NULL
            FROM jsonb_to_recordset(${rows}::jsonb)
              AS r(scim_id text, external_id text, user_name text, display_name text, email text, active boolean, groups text[], department text, manager text)
            ON CONFLICT (connector_id, scim_id) DO UPDATE SET
              external_id = EXCLUDED.external_id, user_name = EXCLUDED.user_name, display_name = EXCLUDED.display_name, email = EXCLUDED.email,
              active = EXCLUDED.active, groups = EXCLUDED.groups, department = EXCLUDED.department,
                manager = EXCLUDED.manager, synced_at = EXCLUDED.synced_at, deleted_at = NULL`.execute(tx);
        }
        if (removeGroups.length) {
          await tx
            .deleteFrom('directory_groups')
            .where('connector_id', '=', connectorId)
            .where((eb) => eb('scim_id', '=', eb.fn.any(eb.val(removeGroups))))
            .execute();
        }
        for (let i = 0; i < upsertGroups.length; i += CHUNK) {
          const rows = JSON.stringify(
            upsertGroups
              .slice(i, i + CHUNK)
              .map((group) => ({ scim_id: group.scimId, display_name: group.displayName, members: group.members })),
          );
          await sql`
            INSERT INTO directory_groups (connector_id, scim_id, display_name, members, member_count, synced_at)
            SELECT ${connectorId}::uuid, r.scim_id, r.display_name, r.members, cardinality(r.members), now()
            FROM jsonb_to_recordset(${rows}::jsonb) AS r(scim_id text, display_name text, members text[])
            ON CONFLICT (connector_id, scim_id) DO UPDATE SET
              display_name = EXCLUDED.display_name, members = EXCLUDED.members, member_count = EXCLUDED.member_count,
              synced_at = EXCLUDED.synced_at`.execute(tx);
        }
      });
    },
  };
}

export type SyncsRepository = ReturnType<typeof createSyncsRepository>;
