import type { Logger } from '@msp/http';
import { isDeskError } from '../desk/desk-client';
import { runChangeRecorder } from './run-events';
import { OPEN_STATUSES, type RunKind, type RunKindDeps, type RunRecord, type RunStep } from './run-kind';
import type { RunLock } from './run-lock';
import type { RunsRepository } from './runs.repository';
import { isUnfinished, runTask, statusFromTasks, type TaskPolicy } from './run-tasks';
import type { RunTaskRecord, RunTasksRepository } from './run-tasks.repository';

export interface RunWorkerDeps<R extends RunRecord> {
  kind: RunKind<R, never, never>;
  runs: RunsRepository<R>;
  tasks: RunTasksRepository;
  directories: RunKindDeps['directories'];
  logger: Logger;
  /** Tries of one step through an outage (desk or directory) before it fails for good. */
  maxAttempts: number;
  /** The engine's clock: what is due is decided by it. */
  now: () => Date;
  /** The run's lock (run-lock.ts), held while a job works on the run. */
  lock: RunLock;
}

/**
 * The job handler of one kind: executes the run's due steps in order, each recorded as it runs,
 * and ends the run once none is left. A job that arrives early, twice, after a restart, or for a
 * cancelled run does nothing wrong: the run's rows decide, not the job, and a finished step is
 * never repeated. The job holds the run's lock from its first read to the run's end, so a cancel or
 * retry of the run (which take the same lock) happens wholly before or wholly after it.
 */
export function createRunWorker<R extends RunRecord>(deps: RunWorkerDeps<R>) {
  const { kind, runs, tasks, directories, logger, now, lock } = deps;
  const steps = new Map<string, RunStep<R, never>>(kind.steps.map((step) => [step.name, step]));
  const record = runChangeRecorder(kind);
  const policy: TaskPolicy = {
    maxAttempts: deps.maxAttempts,
    isRetryable: (error) => (isDeskError(error) ? error.retryable : directories.isRetryable(error)),
    failureName: (error) => (isDeskError(error) ? null : (directories.failureName?.(error) ?? null)),
    logger,
  };

  return async function handle(runId: string): Promise<void> {
    // The owner names the lock; the run is read again, and decided on, once the lock is held.
    const found = await runs.findForRun(runId);
    if (!found || !OPEN_STATUSES.includes(found.status)) return;
    await lock(found.ownerTenantId, runId, () => work(runId));
  };

  async function work(runId: string): Promise<void> {
    const run = await runs.findForRun(runId);
    if (!run || !OPEN_STATUSES.includes(run.status)) return;
    const clock = now().getTime();
    const due = (task: RunTaskRecord) => isUnfinished(task) && (task.dueAt ?? run.createdAt).getTime() <= clock;
    if (!run.tasks.some(due)) return;
    // Lost to a cancel that came first: nothing is touched.
    if (!(await runs.markStarted(runId))) return;
    for (const task of run.tasks) {
      if (!due(task)) continue;
      const step = steps.get(task.name)!;
      const outcome = await runTask(tasks, task, (current) => step.execute(run, current), policy);
      if (outcome === 'failed' && step.skipRestOnFailure) {
        await tasks.skipRest(kind.table.taskKey, runId, task.position + 1, step.skipRestOnFailure);
        break;
      }
    }
    const after = await runs.findForRun(runId);
    if (!after || after.tasks.some(isUnfinished)) return;
    await runs.finish(runId, statusFromTasks(after.tasks) as 'completed' | 'completed_with_errors' | 'failed', record);
  }
}
