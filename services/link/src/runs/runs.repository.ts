import type { RecordChange } from '@msp/events';
import { afterKeyOf, inListOrder, listCount, listPage, rawSqlOverKysely, uniqueViolation } from '@msp/db';
import { unknownAfterItem, type ListWindow } from '@msp/http';
import type { ColumnType, Generated, Kysely } from 'kysely';
import type { DB } from '../generated/kysely/database';
import type { Db } from '../db';
import {
  OPEN_STATUSES,
  type RunEndStatus,
  type RunFindings,
  type RunRecord,
  type RunStatus,
  type RunTable,
} from './run-kind';
import { TASK_COLUMNS, toRunTask, type RunTaskRecord } from './run-tasks.repository';

/** A run's status changed: how (`type`, the event's suffix), and the run before and after. */
export interface RunChange<R extends RunRecord> {
  type: RunEndStatus | 'retried';
  before: R;
  after: R;
}

/** Another run of the same open key (e-mail, user) is already scheduled or in progress. */
export class OpenRunExists extends Error {
  constructor() {
    super('another run of this key is open');
    this.name = 'OpenRunExists';
  }
}

/** The columns every run table has (a kind's own are its mapper's business). */
interface RunColumns {
  id: Generated<string>;
  owner_tenant_id: string;
  status: ColumnType<RunStatus, RunStatus | undefined, RunStatus>;
  managed_tenant_id: string | null;
  directory_user_id: string | null;
  open_email: string | null;
  open_user_id: string | null;
  open_key: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  started_at: Date | null;
  finished_at: Date | null;
  cancelled_at: Date | null;
}

/**
 * The run tables as the engine sees them: each with the columns all three share. The engine is
 * one for every kind, so it names the kind's table through this view; Kysely's table types are
 * invariant, hence the cast where a repository is made.
 */
type RunsDatabase = Kysely<Pick<DB, 'run_tasks'> & Record<RunTable['table'], RunColumns>>;

/** The columns every run record has, from a row of any run table: the kinds' mappers start from these. */
export function runColumnsOf(row: Record<string, unknown>, tasks: RunTaskRecord[]): RunRecord {
  const run = row as unknown as RunColumns & { id: string; status: RunStatus; created_at: Date; updated_at: Date };
  return {
    id: run.id,
    ownerTenantId: run.owner_tenant_id,
    status: run.status,
    createdAt: run.created_at,
    updatedAt: run.updated_at,
    startedAt: run.started_at,
    finishedAt: run.finished_at,
    cancelledAt: run.cancelled_at,
    tasks,
  };
}

const NEWEST_FIRST = { columns: ['created_at', 'id'], direction: 'desc' } as const;

/**
 * The bookkeeping of one kind's runs, the same for every kind: its table (the kind's input
 * columns plus the run's status and times) and its rows of `run_tasks`.
 *
 * `reads` serves the lists' pages and totals alone (the read replica, tolerating its lag; `db` when
 * there is none); everything else, and every read in a write, goes through `db`.
 */
export function createRunsRepository<R extends RunRecord, I = never>(db: Db, spec: RunTable<R, I>, reads: Db = db) {
  const { table, taskKey, openColumn } = spec;
  const runsIn = (client: Db) => client as unknown as RunsDatabase;

  /** The tasks of each of `ids`, in execution order. */
  async function tasksOf(client: Db, ids: readonly string[]): Promise<Map<string, RunTaskRecord[]>> {
    const rows = await runsIn(client)
      .selectFrom('run_tasks')
      .select([...TASK_COLUMNS, `${taskKey} as run_id`])
      .where((eb) => eb(taskKey, '=', eb.fn.any(eb.val(ids))))
      .orderBy(taskKey)
      .orderBy('position')
      .execute();
    const byRun = new Map<string, RunTaskRecord[]>();
    for (const row of rows) {
      const tasks = byRun.get(row.run_id!) ?? [];
      tasks.push(toRunTask(row));
      byRun.set(row.run_id!, tasks);
    }
    return byRun;
  }

  /** The run `id` (of `ownerTenantId` when given) with its tasks; `lock`ed for the rest of the transaction. */
  async function read(
    client: Db,
    id: string,
    options: { ownerTenantId?: string; lock?: boolean } = {},
  ): Promise<R | null> {
    let query = runsIn(client).selectFrom(table).selectAll().where('id', '=', id);
    if (options.ownerTenantId !== undefined) query = query.where('owner_tenant_id', '=', options.ownerTenantId);
    if (options.lock) query = query.forUpdate();
    // Locked, the run is read first; else the run and its tasks side by side.
    const [row, tasks] = options.lock
      ? [await query.executeTakeFirst(), await tasksOf(client, [id])]
      : await Promise.all([query.executeTakeFirst(), tasksOf(client, [id])]);
    return row ? spec.toRun(row, tasks.get(id) ?? []) : null;
  }

  async function withOpenKey<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (uniqueViolation(error) === spec.openIndex) throw new OpenRunExists();
      throw error;
    }
  }

  return {
    /** The run and its tasks (each with its due time) in one transaction; one open run per open key. */
    create(ownerTenantId: string, input: I, openKey: string, tasks: { name: string; dueAt: Date }[]): Promise<R> {
      return withOpenKey(() =>
        db.transaction().execute(async (tx) => {
          const run = await runsIn(tx)
            .insertInto(table)
            .values({ owner_tenant_id: ownerTenantId, ...spec.columnsOf(input), [openColumn]: openKey })
            .returningAll()
            .executeTakeFirstOrThrow();
          const rows = tasks.length
            ? await runsIn(tx)
                .insertInto('run_tasks')
                .values(
                  tasks.map((task, position) => ({ [taskKey]: run.id, position, name: task.name, due_at: task.dueAt })),
                )
                .returning(TASK_COLUMNS)
                .execute()
            : [];
          return spec.toRun(run, rows.map(toRunTask));
        }),
      );
    },

    /** Whether a run of this open key is scheduled or in progress (a dry run's 409, read only). */
    async hasOpen(ownerTenantId: string, openKey: string): Promise<boolean> {
      const open = await runsIn(db)
        .selectFrom(table)
        .select('id')
        .where('owner_tenant_id', '=', ownerTenantId)
        .where(openColumn, '=', openKey)
        .executeTakeFirst();
      return open !== undefined;
    },

    /** A page of the owner's runs, newest first, with their tasks, and its exact total (a counter of list_counts, whole or by status). */
    async list(
      ownerTenantId: string,
      filter: { status?: RunStatus },
      window: ListWindow,
    ): Promise<{ items: R[]; total: number }> {
      const owned = runsIn(reads).selectFrom(table).where('owner_tenant_id', '=', ownerTenantId);
      const filtered = filter.status === undefined ? owned : owned.where('status', '=', filter.status);
      const { items, total } = await listPage({
        window,
        afterKey: (id) => afterKeyOf(owned, NEWEST_FIRST, id),
        page: (key) => inListOrder(filtered.selectAll(), NEWEST_FIRST, window, key).execute(),
        total: () =>
          listCount(reads, {
            tenantId: ownerTenantId,
            list: table,
            ...(filter.status === undefined ? {} : { dimension: 'status', value: filter.status }),
          }),
        unknownAfter: unknownAfterItem,
      });
      if (!items.length) return { items: [], total };
      const tasks = await tasksOf(
        reads,
        items.map((run) => run.id),
      );
      return { items: items.map((run) => spec.toRun(run, tasks.get(run.id) ?? [])), total };
    },

    findById(ownerTenantId: string, id: string): Promise<R | null> {
      return read(db, id, { ownerTenantId });
    },

    /** For the worker, which acts for whoever created the run. */
    findForRun(id: string): Promise<R | null> {
      return read(db, id);
    },

    /**
     * scheduled → in_progress, guarded by the status as a cancel is (both lock the row), so of a
     * cancel and the first due task exactly one wins. Answers whether the run is (now) in progress.
     */
    async markStarted(id: string): Promise<boolean> {
      const now = new Date();
      const moved = await runsIn(db)
        .updateTable(table)
        .set({ status: 'in_progress', started_at: now, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'scheduled')
        .executeTakeFirst();
      if (moved.numUpdatedRows === 1n) return true;
      const current = await runsIn(db).selectFrom(table).select('status').where('id', '=', id).executeTakeFirst();
      return current?.status === 'in_progress';
    },

    /** What an executor found or made (the directory's id, the managed tenant). */
    async save(id: string, fields: RunFindings): Promise<void> {
      await runsIn(db)
        .updateTable(table)
        .set({
          managed_tenant_id: fields.managedTenantId,
          directory_user_id: fields.directoryUserId,
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .execute();
    },

    /** The end, `record`ed in the same transaction, when the run is still open: its key is free again. */
    async finish(
      id: string,
      status: Exclude<RunEndStatus, 'cancelled'>,
      record: RecordChange<RunChange<R>>,
    ): Promise<void> {
      await db.transaction().execute(async (tx) => {
        const before = await read(tx, id, { lock: true });
        // Already ended (a duplicated job): nothing changes, nothing is recorded.
        if (!before || !OPEN_STATUSES.includes(before.status)) return;
        const now = new Date();
        const row = await runsIn(tx)
          .updateTable(table)
          .set({ status, finished_at: now, updated_at: now, [openColumn]: null })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await record(rawSqlOverKysely(tx), { type: status, before, after: spec.toRun(row, before.tasks) });
      });
    },

    /**
     * → cancelled, when `refusal` of the locked run says nothing against it: its unfinished tasks
     * skipped with `detail`, `record`ed. Answers the refusal (or that there is no such run), else null.
     */
    async cancel(
      ownerTenantId: string,
      id: string,
      rule: { refusal(run: R): string | null; detail(run: R): string },
      record: RecordChange<RunChange<R>>,
    ): Promise<string | null> {
      return db.transaction().execute(async (tx) => {
        const before = await read(tx, id, { lock: true });
        // Another owner's run is not touched (the service has answered 404 for it already).
        if (!before || before.ownerTenantId !== ownerTenantId) return 'not found';
        const refusal = rule.refusal(before);
        if (refusal) return refusal;
        const now = new Date();
        await runsIn(tx)
          .updateTable('run_tasks')
          .set({ status: 'skipped', detail: rule.detail(before), finished_at: now })
          .where(taskKey, '=', id)
          .where('finished_at', 'is', null)
          .execute();
        const row = await runsIn(tx)
          .updateTable(table)
          .set({ status: 'cancelled', cancelled_at: now, finished_at: now, updated_at: now, [openColumn]: null })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        const tasks = await tasksOf(tx, [id]);
        await record(rawSqlOverKysely(tx), { type: 'cancelled', before, after: spec.toRun(row, tasks.get(id) ?? []) });
        return null;
      });
    },

    /**
     * A finished run's failed tasks (and those skipped because of a failure) back to `pending`,
     * due at `now` at the earliest, their attempts from 0; those that succeeded are kept. The
     * run's status is recomputed from its tasks by `statusOf`, its open key taken again (another
     * open run of it: OpenRunExists). Answers the run after, or null when `allowed` refuses the
     * locked run (it was not retryable any more).
     */
    async retry(
      id: string,
      options: { now: Date; openKey: string; allowed(run: R): boolean; statusOf(tasks: RunTaskRecord[]): RunStatus },
      record: RecordChange<RunChange<R>>,
    ): Promise<R | null> {
      return withOpenKey(() =>
        db.transaction().execute(async (tx) => {
          const before = await read(tx, id, { lock: true });
          if (!before || !options.allowed(before)) return null;
          await runsIn(tx)
            .updateTable('run_tasks')
            .set((eb) => ({
              status: 'pending',
              detail: null,
              attempts: 0,
              result: null,
              started_at: null,
              finished_at: null,
              due_at: eb.fn('greatest', [eb.fn.coalesce('due_at', eb.val(options.now)), eb.val(options.now)]),
            }))
            .where(taskKey, '=', id)
            .where('status', 'in', ['failed', 'skipped'])
            .execute();
          const tasks = (await tasksOf(tx, [id])).get(id) ?? [];
          const row = await runsIn(tx)
            .updateTable(table)
            .set({
              status: options.statusOf(tasks),
              finished_at: null,
              updated_at: new Date(),
              [openColumn]: options.openKey,
            })
            .where('id', '=', id)
            .returningAll()
            .executeTakeFirstOrThrow();
          const after = spec.toRun(row, tasks);
          await record(rawSqlOverKysely(tx), { type: 'retried', before, after });
          return after;
        }),
      );
    },

    /** Runs not finished, with the due times of their unfinished tasks (to re-enqueue after a restart). */
    async openRuns(): Promise<{ id: string; dueTimes: Date[] }[]> {
      const runs = await runsIn(db)
        .selectFrom(table)
        .select(['id', 'created_at'])
        .where('status', 'in', OPEN_STATUSES)
        .execute();
      if (!runs.length) return [];
      const tasks = await runsIn(db)
        .selectFrom('run_tasks')
        .select([`${taskKey} as run_id`, 'due_at'])
        .where((eb) => eb(taskKey, '=', eb.fn.any(eb.val(runs.map((run) => run.id)))))
        .where('finished_at', 'is', null)
        .execute();
      const due = new Map<string, (Date | null)[]>();
      for (const task of tasks) due.set(task.run_id!, [...(due.get(task.run_id!) ?? []), task.due_at]);
      return runs.map((run) => ({
        id: run.id,
        dueTimes: (due.get(run.id) ?? []).map((dueAt) => dueAt ?? run.created_at),
      }));
    },
  };
}

export type RunsRepository<R extends RunRecord, I = never> = ReturnType<typeof createRunsRepository<R, I>>;
