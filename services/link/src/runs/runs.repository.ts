import type { RecordChange } from '@msp/events';
import { listCountSql, sqlRows } from '@msp/db';
import type { ListWindow } from '@msp/http';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../lists';
import { lockRow, violatedUniqueConstraint, type Db } from '../db';
import { OPEN_STATUSES, type RunEndStatus, type RunRecord, type RunStatus, type RunTable } from './run-kind';
import { TASK_ORDER, taskColumns, type RunTaskRecord } from './run-tasks.repository';
import { runPageReader } from './run-page-reads';

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

const baseColumns = { id: true, ownerTenantId: true, status: true, createdAt: true, updatedAt: true, startedAt: true, finishedAt: true, cancelledAt: true } as const;

// The few Prisma calls the engine makes, the same on every run table.
type Args = Record<string, unknown>;
interface RunDelegate {
  create(args: Args): Promise<unknown>;
  findMany(args: Args): Promise<unknown[]>;
  findFirst(args: Args): Promise<unknown>;
  findUnique(args: Args): Promise<unknown>;
  update(args: Args): Promise<unknown>;
  updateMany(args: Args): Promise<{ count: number }>;
  count(args: Args): Promise<number>;
}

/**
 * The bookkeeping of one kind's runs, the same for every kind: its table (the kind's input
 * columns plus the run's status and times) and its rows of `run_tasks`.
 */
export function createRunsRepository<R extends RunRecord>(db: Db, spec: RunTable) {
  const select = { ...baseColumns, ...spec.columns, tasks: { select: taskColumns, orderBy: TASK_ORDER } };
  const runs = (client: Db | Prisma.TransactionClient) => (client as unknown as Record<string, RunDelegate>)[spec.model]!;
  const tasksOf = (id: string) => ({ [spec.taskKey]: id });
  const listRows = sqlRows(db, db.pool);
  const runsOf = runPageReader<R>(db.pool, spec, Object.keys({ ...baseColumns, ...spec.columns }), Object.keys(taskColumns));

  /** Locks the run and reads it (the "before" of a change); null when there is none. */
  async function locked(tx: Prisma.TransactionClient, id: string): Promise<R | null> {
    if (!(await lockRow(tx, spec.table, id))) return null;
    return (await runs(tx).findUnique({ where: { id }, select })) as R | null;
  }

  async function withOpenKey<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (violatedUniqueConstraint(error) === spec.openIndex) throw new OpenRunExists();
      throw error;
    }
  }

  return {
    /** The run and its tasks (each with its due time) in one transaction; one open run per open key. */
    async create(ownerTenantId: string, input: object, openKey: string, tasks: { name: string; dueAt: Date }[]): Promise<R> {
      return withOpenKey(
        async () =>
          (await runs(db).create({
            data: { ownerTenantId, ...input, [spec.openColumn]: openKey, tasks: { create: tasks.map((task, position) => ({ ...task, position })) } },
            select,
          })) as R,
      );
    },

    /** Whether a run of this open key is scheduled or in progress (a dry run's 409, read only). */
    async hasOpen(ownerTenantId: string, openKey: string): Promise<boolean> {
      return (await runs(db).count({ where: { ownerTenantId, [spec.openColumn]: openKey } })) > 0;
    },

    /**
     * A page of the owner's runs, newest first, and its exact total: the page's ids and the total
     * (a counter of list_counts, whole or by status) in one round trip of plain SQL, by offset or
     * keyset, then those runs with their tasks (two statements of plain SQL: run-page-reads.ts).
     */
    async list(ownerTenantId: string, filter: { status?: RunStatus }, window: ListWindow): Promise<{ items: R[]; total: number }> {
      // Compared as the column's own enum (onboarding_status, …), so the (owner, status, created_at, id) index serves it.
      const status = filter.status === undefined ? [] : [Prisma.sql`status = ${filter.status}::${Prisma.raw(`${spec.model}_status`)}`];
      const { items: page, total } = await lists.keysetListPage<{ id: string }>(
        listRows,
        window,
        {
          table: spec.table,
          select: Prisma.raw('id'),
          scope: Prisma.sql`owner_tenant_id = ${ownerTenantId}::uuid`,
          filters: status,
          columns: ['created_at', 'id'],
          direction: 'desc',
          total: listCountSql(ownerTenantId, spec.table, filter.status === undefined ? undefined : { dimension: 'status', value: filter.status }),
        },
      );
      if (!page.length) return { items: [], total };
      return { items: await runsOf(page.map((row) => row.id)), total };
    },

    async findById(ownerTenantId: string, id: string): Promise<R | null> {
      return (await runs(db).findFirst({ where: { id, ownerTenantId }, select })) as R | null;
    },

    /** For the worker, which acts for whoever created the run. */
    async findForRun(id: string): Promise<R | null> {
      return (await runs(db).findUnique({ where: { id }, select })) as R | null;
    },

    /**
     * scheduled → in_progress, guarded by the status as a cancel is (both lock the row), so of a
     * cancel and the first due task exactly one wins. Answers whether the run is (now) in progress.
     */
    async markStarted(id: string): Promise<boolean> {
      const moved = await runs(db).updateMany({ where: { id, status: 'scheduled' }, data: { status: 'in_progress', startedAt: new Date() } });
      if (moved.count === 1) return true;
      const now = (await runs(db).findUnique({ where: { id }, select: { status: true } })) as { status: RunStatus } | null;
      return now?.status === 'in_progress';
    },

    /** What an executor found or made (the directory's id, the managed tenant). */
    async save(id: string, fields: object): Promise<void> {
      await runs(db).update({ where: { id }, data: fields });
    },

    /** The end, `record`ed in the same transaction, when the run is still open: its key is free again. */
    async finish(id: string, status: Exclude<RunEndStatus, 'cancelled'>, record: RecordChange<RunChange<R>>): Promise<void> {
      await db.$transaction(async (tx) => {
        const before = await locked(tx, id);
        // Already ended (a duplicated job): nothing changes, nothing is recorded.
        if (!before || !OPEN_STATUSES.includes(before.status)) return;
        const after = (await runs(tx).update({ where: { id }, data: { status, finishedAt: new Date(), [spec.openColumn]: null }, select })) as R;
        await record(tx, { type: status, before, after });
      });
    },

    /**
     * → cancelled, when `refusal` of the locked run says nothing against it: its unfinished tasks
     * skipped with `detail`, `record`ed. Answers the refusal (or that there is no such run), else null.
     */
    async cancel(ownerTenantId: string, id: string, rule: { refusal(run: R): string | null; detail(run: R): string }, record: RecordChange<RunChange<R>>): Promise<string | null> {
      return db.$transaction(async (tx) => {
        const before = await locked(tx, id);
        // Another owner's run is not touched (the service has answered 404 for it already).
        if (!before || before.ownerTenantId !== ownerTenantId) return 'not found';
        const refusal = rule.refusal(before);
        if (refusal) return refusal;
        const now = new Date();
        await tx.runTask.updateMany({ where: { ...tasksOf(id), finishedAt: null }, data: { status: 'skipped', detail: rule.detail(before), finishedAt: now } });
        const after = (await runs(tx).update({ where: { id }, data: { status: 'cancelled', cancelledAt: now, finishedAt: now, [spec.openColumn]: null }, select })) as R;
        await record(tx, { type: 'cancelled', before, after });
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
        db.$transaction(async (tx) => {
          const before = await locked(tx, id);
          if (!before || !options.allowed(before)) return null;
          for (const task of before.tasks) {
            if (task.status !== 'failed' && task.status !== 'skipped') continue;
            const dueAt = new Date(Math.max((task.dueAt ?? options.now).getTime(), options.now.getTime()));
            await tx.runTask.update({
              where: { id: task.id },
              data: { status: 'pending', detail: null, attempts: 0, result: Prisma.DbNull, startedAt: null, finishedAt: null, dueAt },
            });
          }
          const tasks = (await tx.runTask.findMany({ where: tasksOf(id), select: taskColumns, orderBy: TASK_ORDER })) as RunTaskRecord[];
          const after = (await runs(tx).update({
            where: { id },
            data: { status: options.statusOf(tasks), finishedAt: null, [spec.openColumn]: options.openKey },
            select,
          })) as R;
          await record(tx, { type: 'retried', before, after });
          return after;
        }),
      );
    },

    /** Runs not finished, with the due times of their unfinished tasks (to re-enqueue after a restart). */
    async openRuns(): Promise<{ id: string; dueTimes: Date[] }[]> {
      const rows = (await runs(db).findMany({
        where: { status: { in: OPEN_STATUSES } },
        select: { id: true, createdAt: true, tasks: { where: { finishedAt: null }, select: { dueAt: true } } },
      })) as { id: string; createdAt: Date; tasks: { dueAt: Date | null }[] }[];
      return rows.map((row) => ({ id: row.id, dueTimes: row.tasks.map((task) => task.dueAt ?? row.createdAt) }));
    },
  };
}

export type RunsRepository<R extends RunRecord> = ReturnType<typeof createRunsRepository<R>>;
