import { conflict, listWindow, type Logger, notFound, type PageRequest } from '@msp/http';
import { runChangeRecorder } from './run-events';
import { OPEN_STATUSES, type RunKind, type RunRecord, type RunStatus } from './run-kind';
import type { RunLock } from './run-lock';
import { dropRunJobs, enqueueRun, type RunQueue } from './run-queue';
import { OpenRunExists, type RunsRepository } from './runs.repository';
import { statusFromTasks } from './run-tasks';
import type { StepProblem } from './run-preview';
import type { RunTaskRecord } from './run-tasks.repository';

export interface RunsServiceDeps<R extends RunRecord, B, I extends object> {
  kind: RunKind<R, B, I>;
  runs: RunsRepository<R, I>;
  queue: RunQueue;
  logger: Logger;
  now: () => Date;
  /** The run's lock (run-lock.ts): cancel and retry hold it, as the worker does. */
  lock: RunLock;
}

/** Statuses from which a retry re-queues what failed. */
const RETRYABLE: readonly RunStatus[] = ['completed_with_errors', 'failed'];

/**
 * The routes' side of every kind of run: create (the kind checks the input, the engine stores the
 * run with its dated tasks and enqueues it), read, cancel and retry. Which event a change makes is
 * decided here and recorded in the repository's transaction.
 */
export function createRunsService<R extends RunRecord, B, I extends object>(deps: RunsServiceDeps<R, B, I>) {
  const { kind, runs, queue, logger, now, lock } = deps;
  const record = runChangeRecorder(kind);

  async function get(ownerTenantId: string, id: string): Promise<R> {
    const run = await runs.findById(ownerTenantId, id);
    if (!run) throw notFound(`No ${kind.name} ${id}.`);
    return run;
  }

  /** Should the queue not take the jobs, the start-up sweep of open runs enqueues them again. */
  async function enqueue(run: R): Promise<void> {
    const due = run.tasks.filter((task) => task.finishedAt === null).map((task) => task.dueAt ?? run.createdAt);
    await enqueueRun(queue, kind.name, run.id, due, now()).catch((error: unknown) => {
      logger.error(`could not enqueue an ${kind.name}; the next start enqueues it`, {
        [`${kind.name}_id`]: run.id,
        error: (error as Error).message,
      });
    });
  }

  const notNow = (run: R, detail: string) => conflict(detail, { extensions: { current_status: run.status } });

  return {
    get,

    list(ownerTenantId: string, filter: { status?: RunStatus }, page: PageRequest) {
      return runs.list(ownerTenantId, filter, listWindow(page));
    },

    async create(ownerTenantId: string, body: B): Promise<R> {
      const at = now();
      const input = await kind.prepare(ownerTenantId, body, at);
      const tasks = kind.steps.flatMap((step) => {
        const dueAt = step.due(input, at);
        return dueAt ? [{ name: step.name, dueAt }] : [];
      });
      let run: R;
      try {
        run = await runs.create(ownerTenantId, input, kind.openKey(input), tasks);
      } catch (error) {
        if (error instanceof OpenRunExists) throw kind.openConflict(input);
        throw error;
      }
      await enqueue(run);
      return run;
    },

    /**
     * The run as `create` would make it, read but not written (`?dry_run=true`): the same checks
     * (4xx alike, 409 included), every task with its due time and its `plan`, and the `problems`
     * its steps would meet now. No row, no event, no job, nothing changed in the directory or desk.
     */
    async preview(
      ownerTenantId: string,
      body: B,
    ): Promise<{ run: R; plans: string[]; problems: ({ task: string } & StepProblem)[] }> {
      const at = now();
      const input = await kind.prepare(ownerTenantId, body, at);
      if (await runs.hasOpen(ownerTenantId, kind.openKey(input))) throw kind.openConflict(input);
      const steps = kind.steps.flatMap((step) => {
        const dueAt = step.due(input, at);
        return dueAt ? [{ step, dueAt }] : [];
      });
      const tasks: RunTaskRecord[] = steps.map(({ step, dueAt }, position) => ({
        id: '',
        name: step.name,
        position,
        status: 'pending',
        detail: null,
        attempts: 0,
        result: null,
        dueAt,
        startedAt: null,
        finishedAt: null,
      }));
      const base = {
        id: '',
        ownerTenantId,
        status: 'scheduled',
        createdAt: at,
        updatedAt: at,
        startedAt: null,
        finishedAt: null,
        cancelledAt: null,
        directoryUserId: null,
        tasks,
      };
      const run = { ...base, ...input } as unknown as R;
      const plans: string[] = [];
      const problems: ({ task: string } & StepProblem)[] = [];
      for (const { step } of steps) {
        const preview = await step.preview(run);
        plans.push(preview.plan);
        problems.push(...preview.problems.map((found) => ({ task: step.name, ...found })));
      }
      return { run, plans, problems };
    },

    /**
     * When the kind allows it now: what the run made outside is undone, its tasks skipped, its jobs
     * dropped. All of it under the run's lock, taken before the run is read: a worker step of the
     * run (which holds the same lock) has ended before the cancel decides, or begins after the run
     * is cancelled and does nothing; it never acts while a staged account is being deleted.
     */
    cancel(ownerTenantId: string, id: string): Promise<R> {
      return lock(ownerTenantId, id, () => cancelLocked(ownerTenantId, id));
    },

    /**
     * The failed tasks (and those skipped because of them) back to pending, due now at the earliest;
     * those that succeeded are kept. 409 while the run is open, when it was cancelled, or when
     * nothing failed. Under the run's lock, as cancel.
     */
    retry(ownerTenantId: string, id: string): Promise<R> {
      return lock(ownerTenantId, id, () => retryLocked(ownerTenantId, id));
    },

    /** Re-sends the jobs of every open run; the stable job ids make this a no-op for runs that have theirs. */
    async resume(): Promise<void> {
      for (const run of await runs.openRuns()) await enqueueRun(queue, kind.name, run.id, run.dueTimes, now());
    },
  };

  async function cancelLocked(ownerTenantId: string, id: string): Promise<R> {
    const run = await get(ownerTenantId, id);
    const refusal = kind.cancel.refusal(run);
    if (refusal) throw notNow(run, refusal);
    await kind.cancel.undo?.(run);
    const lost = await runs.cancel(ownerTenantId, id, kind.cancel, record);
    if (lost) {
      const current = await get(ownerTenantId, id);
      throw notNow(current, kind.cancel.refusal(current) ?? lost);
    }
    await dropRunJobs(
      queue,
      kind.name,
      id,
      run.tasks.map((task) => task.dueAt ?? run.createdAt),
    );
    return get(ownerTenantId, id);
  }

  async function retryLocked(ownerTenantId: string, id: string): Promise<R> {
    const run = await get(ownerTenantId, id);
    const refusal = (current: R) =>
      OPEN_STATUSES.includes(current.status)
        ? `The ${kind.name} is ${current.status}: only a finished run is retried.`
        : !RETRYABLE.includes(current.status)
          ? `The ${kind.name} is ${current.status}: it has no failed task to retry.`
          : null;
    const reason = refusal(run);
    if (reason) throw notNow(run, reason);
    let after: R | null;
    try {
      after = await runs.retry(
        id,
        {
          now: now(),
          openKey: kind.openKey(run),
          allowed: (locked) => refusal(locked) === null,
          statusOf: statusFromTasks,
        },
        record,
      );
    } catch (error) {
      if (error instanceof OpenRunExists) throw kind.openConflict(run);
      throw error;
    }
    if (!after) {
      const current = await get(ownerTenantId, id);
      throw notNow(current, refusal(current) ?? `The ${kind.name} changed meanwhile.`);
    }
    await enqueue(after);
    return after;
  }
}

export type RunsService<R extends RunRecord, B> = ReturnType<typeof createRunsService<R, B, object>>;
