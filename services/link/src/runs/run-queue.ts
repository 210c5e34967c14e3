import { createHash } from 'node:crypto';

/**
 * The job queue as the runs use it (pg-boss underneath). Jobs carry only a run's id: the run's
 * rows are the truth, so a duplicated, late or retried job does no harm.
 */
export interface RunQueue {
  /** Enqueues once: a second send with the same `id` is ignored. */
  send(queue: string, data: { runId: string }, options: { id: string; startAfter?: Date }): Promise<void>;
  /** Drops a job that has not started (a cancelled run); unknown ids are ignored. */
  cancel(queue: string, id: string): Promise<void>;
}

/** The queue of a kind of run: `onboarding-run`, `offboarding-run`, … */
export const queueOf = <K extends string>(kind: K) => `${kind}-run` as const;

export const ONBOARDING_QUEUE = queueOf('onboarding');
export const OFFBOARDING_QUEUE = queueOf('offboarding');
export const MOVE_QUEUE = queueOf('move');

/** A stable job id per run and step group (UUID-shaped, as pg-boss requires). */
export function jobIdOf(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('|')).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The jobs of a run: one per distinct due time, its id stable, so sending them again (after a
 * restart) is a no-op and one due time never has two jobs. Only when the engine's clock runs
 * ahead of the real time (a test moving it) is a due time that has come by that clock, but not
 * yet in fact, a job of its own to run now: the waiting job would otherwise hold it back.
 */
function jobsOf(kind: string, runId: string, due: Date[], now: Date): { id: string; startAfter?: Date }[] {
  const distinct = [...new Set(due.map((date) => date.getTime()))].map((ms) => new Date(ms));
  const real = Date.now();
  return distinct.map((dueAt) =>
    dueAt.getTime() <= now.getTime() && dueAt.getTime() > real
      ? { id: jobIdOf(kind, runId, dueAt.toISOString(), 'due') }
      : { id: jobIdOf(kind, runId, dueAt.toISOString()), startAfter: dueAt },
  );
}

export async function enqueueRun(queue: RunQueue, kind: string, runId: string, due: Date[], now: Date): Promise<void> {
  for (const job of jobsOf(kind, runId, due, now)) await queue.send(queueOf(kind), { runId }, job);
}

/** Drops the run's waiting jobs (a cancelled run); the worker checks the run's state anyway. */
export async function dropRunJobs(queue: RunQueue, kind: string, runId: string, due: Date[]): Promise<void> {
  const distinct = [...new Set(due.map((date) => date.toISOString()))];
  for (const dueAt of distinct) {
    for (const id of [jobIdOf(kind, runId, dueAt), jobIdOf(kind, runId, dueAt, 'due')])
      await queue.cancel(queueOf(kind), id).catch(() => undefined);
  }
}
