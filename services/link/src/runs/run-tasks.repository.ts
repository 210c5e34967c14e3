import type { Prisma } from '../generated/prisma/client';
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

export const taskColumns = {
  id: true,
  position: true,
  name: true,
  status: true,
  detail: true,
  dueAt: true,
  attempts: true,
  result: true,
  startedAt: true,
  finishedAt: true,
} as const;

export const TASK_ORDER = { position: 'asc' } as const;

/** The step bookkeeping both kinds of run share: one row per task, written as it runs. */
export function createRunTasksRepository(db: Db) {
  return {
    /** A try begins: `running`, one more attempt, the first start kept. */
    async begin(task: RunTaskRecord): Promise<RunTaskRecord> {
      return db.runTask.update({
        where: { id: task.id },
        data: { status: 'running', attempts: { increment: 1 }, startedAt: task.startedAt ?? new Date(), detail: task.detail },
        select: taskColumns,
      });
    },

    /** The step's final word. */
    async finish(id: string, outcome: { status: 'succeeded' | 'failed' | 'skipped'; detail: string; result?: unknown }): Promise<void> {
      await db.runTask.update({
        where: { id },
        data: { status: outcome.status, detail: outcome.detail, result: (outcome.result ?? undefined) as Prisma.InputJsonValue | undefined, finishedAt: new Date() },
      });
    },

    /** A try failed for a reason that may pass (an outage): failed for now, no finish time, tried again. */
    async failForRetry(id: string, detail: string): Promise<void> {
      await db.runTask.update({ where: { id }, data: { status: 'failed', detail } });
    },

    /** Every not yet finished task of the run from `fromPosition` on is skipped, saying why. */
    async skipRest(run: Record<string, string>, fromPosition: number, detail: string): Promise<void> {
      await db.runTask.updateMany({
        where: { ...run, position: { gte: fromPosition }, finishedAt: null },
        data: { status: 'skipped', detail, finishedAt: new Date() },
      });
    },
  };
}

export type RunTasksRepository = ReturnType<typeof createRunTasksRepository>;
