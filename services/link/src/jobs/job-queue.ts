// pg-boss is an ES module and link is CommonJS: types are imported as such, the class at start().
import type { Job, PgBoss, Queue } from 'pg-boss' with { 'resolution-mode': 'import' };
import { SYSTEM_ACTOR } from '@msp/events';
import { runAs, type Logger } from '@msp/http';

/**
 * link's job queue: pg-boss in link's own database (schema `pgboss`), so queued work survives a
 * restart and needs nothing but PostgreSQL. Resources define their queues and handlers while the
 * app is built; `start()` creates the queues and begins working, `stop()` lets running handlers
 * end (pg-boss fails what is still active after the timeout, which retries it or dead-letters it).
 */

export interface JobContext {
  id: string;
  /** 0 on the first execution of this job, then 1, 2, … for pg-boss's own retries. */
  retryCount: number;
  /** Aborted when the worker stops or loses the job (expired heartbeat). */
  signal: AbortSignal;
}

export type JobHandler<T> = (data: T, job: JobContext) => Promise<void>;

/** pg-boss queue options (retryLimit, retryDelay, retryBackoff, expireInSeconds, heartbeatSeconds, deadLetter, …). */
export type QueueSettings = Omit<Queue, 'name'>;

export interface SendOptions {
  /** A UUID; a second send with the same id is ignored (at-most-once enqueue). */
  id?: string;
  /** Not before this time. */
  startAfter?: Date;
}

export interface JobQueue {
  /** Declares a queue and its handler; call before start(). A dead-letter queue must be defined first. */
  define<T extends object>(queue: string, settings: QueueSettings, handler: JobHandler<T>): void;
  /** Enqueues a job; resolves when it is stored. */
  send(queue: string, data: object, options?: SendOptions): Promise<void>;
  /** Drops a job that has not started; unknown ids are ignored. */
  cancel(queue: string, id: string): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface JobQueueOptions {
  databaseUrl: string;
  logger: Logger;
  /** How often idle workers look for jobs (seconds); pg-boss's default is 2. */
  pollingIntervalSeconds?: number;
  /** How often expired and heartbeat-less jobs are failed (seconds); pg-boss's default is 60. */
  superviseIntervalSeconds?: number;
  /** How long stop() waits for running handlers (ms). */
  stopTimeoutMs?: number;
  /** false: only send jobs, run none (an API-only instance; tests that look at queued runs). */
  work?: boolean;
}

export const JOB_SCHEMA = 'pgboss';

export function createJobQueue(options: JobQueueOptions): JobQueue {
  const definitions: { queue: string; settings: QueueSettings; handler: JobHandler<object> }[] = [];
  let boss: PgBoss | undefined;

  return {
    define(queue, settings, handler) {
      if (boss) throw new Error(`queue ${queue} defined after the job queue started`);
      definitions.push({ queue, settings, handler: handler as JobHandler<object> });
    },

    async send(queue, data, sendOptions = {}) {
      if (!boss) throw new Error('the job queue is not started');
      await boss.send(queue, data, { id: sendOptions.id, startAfter: sendOptions.startAfter });
    },

    async cancel(queue, id) {
      if (!boss) throw new Error('the job queue is not started');
      await boss.cancel(queue, id).catch(() => undefined);
    },

    async start() {
      const { PgBoss: PgBossClass } = await import('pg-boss');
      boss = new PgBossClass({
        connectionString: options.databaseUrl,
        schema: JOB_SCHEMA,
        // pg-boss refuses an option present but undefined.
        ...(options.superviseIntervalSeconds ? { superviseIntervalSeconds: options.superviseIntervalSeconds } : {}),
      });
      boss.on('error', (error: Error) => options.logger.error('job queue error', { error: error.message }));
      await boss.start();
      const existing = new Set((await boss.getQueues()).map((queue) => queue.name));
      for (const { queue, settings } of definitions) {
        if (existing.has(queue)) await boss.updateQueue(queue, withoutCreateOnly(settings));
        else await boss.createQueue(queue, settings);
      }
      for (const { queue, handler } of options.work === false ? [] : definitions) {
        await boss.work<object>(
          queue,
          { pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2 },
          async (jobs: Job<object>[]) => {
            for (const job of jobs) {
              try {
                // Outside any request, a job acts as link itself (`system`: runs do not record who
                // started them), under an id of its own that its log lines and events share.
                await runAs(SYSTEM_ACTOR, () =>
                  handler(job.data, { id: job.id, retryCount: job.retryCount, signal: job.signal }),
                );
              } catch (error) {
                options.logger.warn('job failed', {
                  queue,
                  job_id: job.id,
                  retry_count: job.retryCount,
                  error: error instanceof Error ? error.message : String(error),
                });
                throw error;
              }
            }
          },
        );
      }
    },

    async stop() {
      const running = boss;
      boss = undefined;
      await running?.stop({ graceful: true, timeout: options.stopTimeoutMs ?? 10_000 });
    },
  };
}

/** Options pg-boss only takes when a queue is created (policy, partition, deadLetter, heartbeat). */
function withoutCreateOnly(settings: QueueSettings) {
  const {
    expireInSeconds,
    retentionSeconds,
    deleteAfterSeconds,
    retryLimit,
    retryDelay,
    retryBackoff,
    heartbeatSeconds,
  } = settings;
  const changes = {
    expireInSeconds,
    retentionSeconds,
    deleteAfterSeconds,
    retryLimit,
    retryDelay,
    retryBackoff,
    heartbeatSeconds: heartbeatSeconds ?? null,
  };
  // pg-boss refuses an option given as undefined: only the ones set are sent.
  return Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
}
