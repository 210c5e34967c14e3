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

export const ONBOARDING_QUEUE = 'onboarding-run';
export const OFFBOARDING_QUEUE = 'offboarding-run';

/** A stable job id per run and step group (UUID-shaped, as pg-boss requires). */
export function jobIdOf(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('|')).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
