import type { JobQueue } from '../jobs/job-queue';
import type { RunHandlers } from './runs';

export interface RunQueueSettings {
  /** Tries of one step through an outage before it fails for good. */
  maxAttempts: number;
  /** The most steps a run of any kind has: all of them may fall due in one job. */
  stepsPerJob: number;
  /** First retry delay in seconds, doubled each time (pg-boss backoff). */
  retryDelaySeconds: number;
}

/**
 * The run queues on link's job queue. A step that hit an outage throws RetryLater: pg-boss retries
 * the job with backoff, and the run's rows say which step resumes.
 */
export function defineRunQueues(
  jobs: Pick<JobQueue, 'define'>,
  handlers: RunHandlers,
  settings: RunQueueSettings,
): void {
  for (const [queue, handle] of Object.entries(handlers) as [keyof RunHandlers, RunHandlers[keyof RunHandlers]][]) {
    jobs.define<{ runId: string }>(
      queue,
      {
        // Every step of a run may be due in one job, each with its own tries, plus slack for a lost worker.
        retryLimit: settings.maxAttempts * settings.stepsPerJob + 2,
        retryDelay: settings.retryDelaySeconds,
        retryBackoff: true,
        retryDelayMax: 3600,
        // A step makes a few HTTP calls, each with its timeout: a job silent this long lost its worker.
        expireInSeconds: 15 * 60,
      },
      (data) => handle(data),
    );
  }
}
