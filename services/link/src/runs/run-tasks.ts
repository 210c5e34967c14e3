import { Type } from '@sinclair/typebox';
import { DateTime, named, Nullable, stringEnum } from '@msp/http';
import type { Logger } from '@msp/http';
import type { RunTaskRecord, RunTasksRepository } from './run-tasks.repository';

export const TASK_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'skipped'] as const;

/** A step that cannot succeed as things are (a refusal, a missing group): it fails at once, no retry. */
export class TaskFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskFailure';
  }
}

/** Thrown out of a job handler when a step should be tried again later: the queue retries the job. */
export class RetryLater extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryLater';
  }
}

export interface TaskOutcome {
  /** `failed` for a step that did part of its work and names what it could not do. */
  status?: 'succeeded' | 'failed';
  detail: string;
  result?: Record<string, unknown>;
}

export interface TaskPolicy {
  /** Tries of one step before an outage counts as its failure. */
  maxAttempts: number;
  /** Whether an error may pass by itself (outage, timeout, 5xx) rather than being a refusal. */
  isRetryable(error: unknown): boolean;
  /** A failure's name (`password_policy`), recorded as the task's `result.error` and leading its detail. */
  failureName?(error: unknown): string | null;
  logger: Logger;
}

/**
 * Runs one step and records it. An error that may pass marks the step failed "for now" (no finish
 * time) and throws RetryLater, so the job comes back; once the tries are used up, or for a
 * refusal, the step is failed for good and the run goes on. The run's own bookkeeping is never
 * touched here.
 */
export async function runTask(
  tasks: RunTasksRepository,
  task: RunTaskRecord,
  work: (task: RunTaskRecord) => Promise<TaskOutcome>,
  policy: TaskPolicy,
): Promise<'succeeded' | 'failed'> {
  const begun = await tasks.begin(task);
  let outcome: TaskOutcome;
  try {
    outcome = await work(begun);
  } catch (error) {
    const name = error instanceof TaskFailure ? null : (policy.failureName?.(error) ?? null);
    const message = name ? `${name}: ${(error as Error).message}` : (error as Error).message;
    const retryable = !(error instanceof TaskFailure) && policy.isRetryable(error);
    if (retryable && begun.attempts < policy.maxAttempts) {
      policy.logger.warn('run task failed; will be retried', {
        task: task.name,
        task_id: task.id,
        attempt: begun.attempts,
        error: message,
      });
      await tasks.failForRetry(
        task.id,
        `${message} (attempt ${begun.attempts} of ${policy.maxAttempts}; will be retried)`,
      );
      throw new RetryLater(message);
    }
    const detail = retryable ? `${message} (gave up after ${begun.attempts} attempts)` : message;
    policy.logger.warn('run task failed', { task: task.name, task_id: task.id, error: message });
    await tasks.finish(task.id, { status: 'failed', detail, ...(name ? { result: { error: name } } : {}) });
    return 'failed';
  }
  const status = outcome.status ?? 'succeeded';
  await tasks.finish(task.id, { status, detail: outcome.detail, result: outcome.result });
  return status;
}

/** Whether a step still has work to do (a failed step awaiting its retry has no finish time). */
export const isUnfinished = (task: RunTaskRecord) => task.finishedAt === null;

/**
 * The Idempotency-Key of a task's call that creates something (a desk ticket): one per task, the
 * same on every try, so a try whose answer was lost (desk committed, link had given up waiting)
 * is answered on the retry with what it created instead of creating it twice.
 */
export const runTaskIdempotencyKey = (task: RunTaskRecord) => `link-run-task-${task.id}`;

/**
 * A run's status read from its steps: `scheduled` while none has begun, `in_progress` while some
 * are still to do, then `completed` (all succeeded), `completed_with_errors` (some did), or
 * `failed` (none did). The engine's one rule for every kind, at the end and after a retry alike.
 */
export function statusFromTasks(
  tasks: RunTaskRecord[],
): 'scheduled' | 'in_progress' | 'completed' | 'completed_with_errors' | 'failed' {
  if (tasks.some(isUnfinished))
    return tasks.some((task) => task.attempts > 0 || task.finishedAt !== null) ? 'in_progress' : 'scheduled';
  if (tasks.every((task) => task.status === 'succeeded')) return 'completed';
  return tasks.some((task) => task.status === 'succeeded') ? 'completed_with_errors' : 'failed';
}

const taskProperties = {
  status: stringEnum(TASK_STATUSES, {
    description:
      '`pending` (not begun), `running`, `succeeded`, `failed` (with no `finished_at` yet: an outage, the step ' +
      'will be retried), or `skipped` (not done because an earlier step failed or the run was cancelled).',
  }),
  detail: Nullable(Type.String({ description: 'What happened, in words a technician can act on.' })),
  attempts: Type.Integer({ minimum: 0, description: 'Tries begun (an outage is retried).' }),
  result: Nullable(
    Type.Object(
      {},
      { additionalProperties: true, description: 'What the step produced (ids in the directory or desk).' },
    ),
  ),
  started_at: Nullable(DateTime()),
  finished_at: Nullable(DateTime()),
};

export function taskSchema<N extends readonly string[]>(
  name: string,
  names: N,
  options: { dueAt: boolean; description: string },
) {
  return named(
    name,
    Type.Object(
      {
        name: stringEnum(names, { description: 'The step, in execution order.' }),
        ...taskProperties,
        ...(options.dueAt
          ? { due_at: DateTime({ description: 'When the step is due; it does not run before.' }) }
          : {}),
      },
      { additionalProperties: false, description: options.description },
    ),
  );
}

export function taskJson(task: RunTaskRecord, options: { dueAt: boolean }) {
  return {
    name: task.name,
    status: task.status,
    detail: task.detail,
    attempts: task.attempts,
    result: (task.result ?? null) as Record<string, unknown> | null,
    started_at: task.startedAt?.toISOString() ?? null,
    finished_at: task.finishedAt?.toISOString() ?? null,
    ...(options.dueAt ? { due_at: (task.dueAt ?? new Date(0)).toISOString() } : {}),
  };
}
