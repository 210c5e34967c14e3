import { createHash } from 'node:crypto';
import type { Logger } from '@msp/http';
import { linkEvents } from '../events/link-events';
import type { ConnectorDirectories } from '../connectors/connector-directories';
import { secretUnreadable } from '../connectors/connector-types';
import type { JobQueue } from '../jobs/job-queue';
import { syncRunJson } from './sync.mapper';
import { DEFAULT_FULL_SYNC_INTERVAL_MS, synchronise, type SyncSource } from './sync.mirror';
import { OpenRunExistsError, type SyncsRepository } from './syncs.repository';

/**
 * Sync runs on the job queue. The run row is the truth; a job only names it. link retries a run
 * itself (3 attempts in all) so it can wait what the directory asks in Retry-After, and so each
 * attempt is recorded: network errors, timeouts, 429 and 5xx are retried with backoff; 401, 403,
 * 404 and answers that are not SCIM fail at once. A worker that dies (link restarted, the job's
 * heartbeat lost) fails its pg-boss job, which lands in the dead-letter queue, whose handler
 * retries the run or fails it saying so: no run stays `running`.
 */

export const SYNC_QUEUE = 'connector-sync';
export const SYNC_DEAD_LETTER_QUEUE = 'connector-sync-dead';
export const SYNC_MAX_ATTEMPTS = 3;

export interface SyncRunnerOptions {
  /** First retry waits this long, then twice as long (default 5 s). */
  retryDelayMs?: number;
  /** A Retry-After longer than this is cut to it (default 10 min). */
  maxRetryDelayMs?: number;
  /** Users/Groups asked for per SCIM page (the directory may send fewer). */
  pageSize?: number;
  /** Users a full sync compares with the mirror per query, once that many are read (default 1,000). */
  compareBatchSize?: number;
  /** A sync job still active after this long is failed by pg-boss and retried by link (default 1 h). */
  jobExpireSeconds?: number;
  /** A full sync at least this often, deltas in between (FULL_SYNC_INTERVAL_HOURS; default 24 h). */
  fullSyncIntervalMs?: number;
}

/** A run whose attempt began, with what the attempt needs (SyncsRepository.beginAttempt). */
type BegunRun = NonNullable<Awaited<ReturnType<SyncsRepository['beginAttempt']>>>;

interface SyncJob {
  runId: string;
}

/** A UUID-shaped, stable job id per run and attempt: a duplicated send is ignored by pg-boss. */
function jobIdOf(runId: string, attempt: number): string {
  const hex = createHash('sha256').update(`${runId}|${attempt}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The job queue refused the run's job; the run is recorded as failed. */
export class QueueUnavailableError extends Error {
  constructor(
    readonly runId: string,
    cause: unknown,
  ) {
    super('the job queue is unavailable', { cause });
    this.name = 'QueueUnavailableError';
  }
}

export function createSyncRunner(deps: {
  queue: JobQueue;
  syncs: SyncsRepository;
  directories: ConnectorDirectories;
  logger: Logger;
  options?: SyncRunnerOptions;
}) {
  const { queue, syncs, directories, logger } = deps;
  const retryDelayMs = deps.options?.retryDelayMs ?? 5000;
  const maxRetryDelayMs = deps.options?.maxRetryDelayMs ?? 600_000;

  /**
   * Ends attempt `attempt` of the run (see the repository's finishAttempt) with the connector's
   * event: `connector.sync.succeeded` or `.failed`, the run as `object`.
   */
  function finishAttempt(
    runId: string,
    attempt: number,
    outcome: Parameters<SyncsRepository['finishAttempt']>[2],
  ): Promise<boolean> {
    return syncs.finishAttempt(runId, attempt, outcome, (tx, { ownerTenantId, before, after }) =>
      linkEvents.record(tx, {
        type: `connector.sync.${outcome.status}`,
        tenantId: ownerTenantId,
        resourceType: 'connector',
        resourceId: after.connectorId,
        object: syncRunJson(after),
        before: syncRunJson(before),
      }),
    );
  }

  async function enqueue(runId: string, attempt: number, startAfter?: Date) {
    await queue.send(SYNC_QUEUE, { runId }, { id: jobIdOf(runId, attempt), startAfter });
  }

  /** After a failed attempt: another one later, or the run fails. */
  async function retryOrFail(
    runId: string,
    attempt: number,
    message: string,
    retryable: boolean,
    retryAfterMs?: number,
  ) {
    if (retryable && attempt < SYNC_MAX_ATTEMPTS) {
      const backoff = retryDelayMs * 2 ** (attempt - 1);
      const delay = Math.min(maxRetryDelayMs, Math.max(backoff, retryAfterMs ?? 0));
      const at = new Date(Date.now() + delay);
      if (
        await syncs.requeue(
          runId,
          attempt,
          `attempt ${attempt} of ${SYNC_MAX_ATTEMPTS} failed: ${message}; retrying at ${at.toISOString()}`,
        )
      ) {
        await enqueue(runId, attempt + 1, at);
      }
      return;
    }
    const prefix = retryable ? `all ${SYNC_MAX_ATTEMPTS} attempts failed; the last: ` : '';
    await finishAttempt(runId, attempt, { status: 'failed', error: `${prefix}${message}` });
  }

  async function execute({ runId }: SyncJob, job: { signal: AbortSignal }) {
    const run = await syncs.beginAttempt(runId);
    if (!run) return; // finished or gone (its connector deleted): nothing to do
    let client;
    try {
      client = directories.syncSourceOf(run.connector, { signal: job.signal, pageSize: deps.options?.pageSize });
    } catch {
      // GCM refuses a token sealed under another key: retrying cannot help, a technician can.
      await finishAttempt(runId, run.attempts, { status: 'failed', error: secretUnreadable(run.connector.type) });
      return;
    }
    try {
      await attempt(runId, run, client, job.signal);
    } finally {
      await client.close?.();
    }
  }

  /** One attempt of the run, its outcome recorded: succeeded, retried later, or failed. */
  async function attempt(runId: string, run: BegunRun, client: SyncSource, signal: AbortSignal) {
    try {
      const stats = await synchronise(run.connectorId, client, syncs, run.baseline, {
        fullSyncIntervalMs: deps.options?.fullSyncIntervalMs ?? DEFAULT_FULL_SYNC_INTERVAL_MS,
        compareBatchSize: deps.options?.compareBatchSize,
      });
      await finishAttempt(runId, run.attempts, { status: 'succeeded', error: null, stats });
      logger.info('sync run succeeded', {
        run_id: runId,
        connector_id: run.connectorId,
        attempt: run.attempts,
        ...stats,
      });
    } catch (error) {
      // pg-boss aborted the job (it expired, or its worker is stopping): the directory did nothing
      // wrong, and pg-boss fails the job into the dead-letter queue, whose handler retries the run
      // saying why. Recording the aborted request here as well would race it for the run's error.
      if (signal.aborted) return;
      const failure = directories.failureOf(error);
      if (!failure) throw error; // a fault of link itself: pg-boss fails the job → dead letter
      logger.warn('sync attempt failed', {
        run_id: runId,
        connector_id: run.connectorId,
        attempt: run.attempts,
        kind: failure.kind,
        error: failure.message,
      });
      // An LDAP failure leads with its name (credentials_refused, directory_unreachable, …), as a run task's does.
      const name = directories.failureName(error);
      await retryOrFail(
        runId,
        run.attempts,
        name ? `${name}: ${failure.message}` : failure.message,
        failure.retryable,
        failure.retryAfterMs,
      );
    }
  }

  /** A job pg-boss gave up on: its worker died, it expired, or link itself failed. */
  async function executeDead({ runId }: SyncJob) {
    const run = await syncs.findById(runId);
    if (!run || (run.status !== 'queued' && run.status !== 'running')) return;
    const attempt = Math.max(run.attempts, 1);
    await retryOrFail(
      runId,
      attempt,
      'the sync worker stopped before it finished (link restarted, or the job expired or failed inside link)',
      true,
    );
  }

  return {
    /** Defines the queues on the job queue (before it starts). */
    define() {
      // The dead-letter queue first: pg-boss requires it to exist when the main queue names it.
      queue.define<SyncJob>(SYNC_DEAD_LETTER_QUEUE, { retryLimit: 2, retryDelay: 5 }, (data) => executeDead(data));
      queue.define<SyncJob>(
        SYNC_QUEUE,
        // No pg-boss retries: link retries runs itself. A heartbeat lets a dead worker's job be
        // failed after a minute instead of after the whole expiry.
        {
          retryLimit: 0,
          expireInSeconds: deps.options?.jobExpireSeconds ?? 3600,
          heartbeatSeconds: 30,
          deadLetter: SYNC_DEAD_LETTER_QUEUE,
        },
        (data, job) => execute(data, job),
      );
    },

    /** Creates a queued run and its job; OpenRunExistsError when one is already open. */
    async start(connectorId: string, trigger: 'manual' | 'schedule') {
      const run = await syncs.create(connectorId, trigger);
      try {
        await enqueue(run.id, 1);
      } catch (error) {
        // A run without a job would stay queued for ever and block the connector's next one.
        await finishAttempt(run.id, 0, {
          status: 'failed',
          error: "the run could not be queued (link's job queue is unavailable); start it again",
        });
        throw new QueueUnavailableError(run.id, error);
      }
      return run;
    },

    /** Queues a scheduled run of every enabled connector that has had none for `intervalMs`. */
    async scheduleDue(intervalMs: number): Promise<number> {
      // A little slack, so a tick that comes a moment early does not skip a whole interval.
      const since = new Date(Date.now() - intervalMs * 0.9);
      let started = 0;
      for (const connectorId of await syncs.dueForSchedule(since)) {
        try {
          await this.start(connectorId, 'schedule');
          started++;
        } catch (error) {
          if (!(error instanceof OpenRunExistsError)) throw error;
        }
      }
      return started;
    },
  };
}

export type SyncRunner = ReturnType<typeof createSyncRunner>;
