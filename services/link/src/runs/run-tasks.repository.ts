import type { Selectable } from 'kysely';
import type { RunTask } from '../generated/kysely/database';
import type { Db } from '../db';

export type RunTaskStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

export interface RunTaskRecord {
  id: string;
  position: number;
  name: string;
  status: RunTaskStatus;
  detail: string | null;
  dueAt: Date | null;
  attempts: number;
  result: unknown;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** The column of `run_tasks` that names a task's run, one per kind of run. */
export type RunTaskKey = 'onboarding_id' | 'offboarding_id' | 'move_id';

export const TASK_COLUMNS = [
  'id',
  'position',
  'name',
  'status',
  'detail',
  'due_at',
  'attempts',
  'result',
  'started_at',
  'finished_at',
] as const;

export function toRunTask(row: Pick<Selectable<RunTask>, (typeof TASK_COLUMNS)[number]>): RunTaskRecord {
  return {
    id: row.id,
    position: row.position,
    name: row.name,
    status: row.status,
    detail: row.detail,
    dueAt: row.due_at,
    attempts: row.attempts,
    result: row.result,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

/** The step bookkeeping every kind of run shares: one row per task, written as it runs. */
export function createRunTasksRepository(db: Db) {
  return {
    /** A try begins: `running`, one more attempt, the first start kept. */
    async begin(task: RunTaskRecord): Promise<RunTaskRecord> {
      const row = await db
        .updateTable('run_tasks')
        .set((eb) => ({
          status: 'running',
          attempts: eb('attempts', '+', 1),
          started_at: task.startedAt ?? new Date(),
          detail: task.detail,
        }))
        .where('id', '=', task.id)
        .returning(TASK_COLUMNS)
        .executeTakeFirstOrThrow();
      return toRunTask(row);
    },

    /** The step's final word. */
    async finish(
      id: string,
      outcome: { status: 'succeeded' | 'failed' | 'skipped'; detail: string; result?: unknown },
    ): Promise<void> {
      await db
        .updateTable('run_tasks')
        .set({
          status: outcome.status,
          detail: outcome.detail,
          result: outcome.result ?? undefined,
          finished_at: new Date(),
        })
        .where('id', '=', id)
        .execute();
    },

    /** A try failed for a reason that may pass (an outage): failed for now, no finish time, tried again. */
    async failForRetry(id: string, detail: string): Promise<void> {
      await db.updateTable('run_tasks').set({ status: 'failed', detail }).where('id', '=', id).execute();
    },

    /** Every not yet finished task of the run from `fromPosition` on is skipped, saying why. */
    async skipRest(taskKey: RunTaskKey, runId: string, fromPosition: number, detail: string): Promise<void> {
      await db
        .updateTable('run_tasks')
        .set({ status: 'skipped', detail, finished_at: new Date() })
        .where(taskKey, '=', runId)
        .where('position', '>=', fromPosition)
        .where('finished_at', 'is', null)
        .execute();
    },
  };
}

export type RunTasksRepository = ReturnType<typeof createRunTasksRepository>;
