import { Type } from '@sinclair/typebox';
import type { Logger } from '@msp/http';
import type { Sql } from './sql';
import { RECOVER_MAX_DAYS } from './webhooks/webhook.schemas';

/** The retention's settings, in every service's config schema (docs/configuration.md lists them). */
export const eventsRetentionConfigProperties = {
  EVENTS_RETENTION_DAYS: Type.Integer({
    // A webhook recovery re-sends up to RECOVER_MAX_DAYS back: those events must still be there.
    minimum: RECOVER_MAX_DAYS + 1,
    maximum: 36_500,
    default: 400,
    description:
      'Events (the audit log) older than this many days are removed in the background, in short batches, except ' +
      'those not yet relayed or with a webhook delivery still pending; so are finished deliveries that old. At ' +
      'least one day more than a webhook recovery reaches back.',
  }),
  EVENTS_RETENTION_INTERVAL_MS: Type.Integer({
    minimum: 0,
    maximum: 7 * 86_400_000,
    default: 3_600_000,
    description: 'How often the retention sweep runs (and once right after the start); `0` disables it.',
  }),
};

export interface EventsRetentionOptions {
  db: Sql;
  logger: Logger;
  /** EVENTS_RETENTION_DAYS. */
  days: number;
  /** EVENTS_RETENTION_INTERVAL_MS; 0: start() does nothing (sweep() still runs when called). */
  intervalMs: number;
  /**
   * Rows one statement deletes: its transaction holds its rows' locks and the counters of their
   * tenants (list_counts) until it commits, so it is kept short. Default 500: larger batches delete
   * somewhat faster but hold those locks several times longer (docs/performance.md).
   */
  batchSize?: number;
  /** Pause between batches, so writers waiting on a counter row get their turn. Default 20 ms. */
  pauseMs?: number;
}

export interface SweepResult {
  events: number;
  deliveries: number;
  batches: number;
  /** The longest batch (one statement, one transaction), in ms: the longest any lock of the sweep was held. */
  longestBatchMs: number;
  ms: number;
}

// Any number of instances may run the sweep: each batch takes this transaction-level advisory lock
// or does nothing, so the batches of two instances never queue on the same counter rows.
const SWEEP_LOCK = 7_342_025;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Removes events older than `days`, in batches of a few hundred rows by primary key, each one
 * short statement (its own transaction), walking the relay's index (dispatched_at, seq) from the
 * oldest: an event not yet relayed is never removed, nor one with a delivery still pending (or
 * retrying: also `pending`). The counters (list_counts) follow in the same statements (their
 * triggers), so totals stay exact during and after a sweep. Finished deliveries older than `days`
 * go too, through each webhook's (webhook_id, created_at) index. Nothing is kept in memory
 * between sweeps: an interrupted sweep (a restart) simply continues at the next one, which runs
 * right after the start and then every `intervalMs`.
 *
 * A delivery of such an old event made pending again while its event is being removed (a manual
 * retry in that very moment) is still delivered: a delivery holds its body.
 */
export function createEventsRetention({
  db,
  logger,
  days,
  intervalMs,
  batchSize = 500,
  pauseMs = 20,
}: EventsRetentionOptions) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopping = false;

  async function timed<T>(work: () => Promise<T>, result: SweepResult): Promise<T> {
    const started = performance.now();
    const value = await work();
    result.longestBatchMs = Math.max(result.longestBatchMs, performance.now() - started);
    result.batches += 1;
    return value;
  }

  async function sweepEvents(cutoff: Date, result: SweepResult) {
    let after: { at: Date | string; seq: string } = { at: new Date(0), seq: '0' };
    const tenants = new Set<string>();
    while (!stopping) {
      const [batch] = await timed(
        () =>
          db.$queryRawUnsafe<
            {
              held: boolean;
              deleted: number;
              last_at: Date | string | null;
              last_seq: string | null;
              tenants: string[] | null;
            }[]
          >(
            `WITH lock AS (SELECT pg_try_advisory_xact_lock(${SWEEP_LOCK}) AS held),
             doomed AS (
               SELECT e.id FROM events e, lock
               WHERE lock.held AND e.dispatched_at < $1::timestamptz AND e.occurred_at < $1::timestamptz
                 AND (e.dispatched_at, e.seq) > ($3::timestamptz, $4::bigint)
                 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
               ORDER BY e.dispatched_at, e.seq
               LIMIT $2
               FOR UPDATE OF e SKIP LOCKED
             ),
             gone AS (DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING e.tenant_id, e.dispatched_at, e.seq)
             SELECT (SELECT held FROM lock) AS held, count(*)::int AS deleted,
                    (array_agg(dispatched_at ORDER BY dispatched_at DESC, seq DESC))[1] AS last_at,
                    max(seq)::text AS last_seq,
                    array_agg(DISTINCT tenant_id::text) AS tenants
             FROM gone`,
            cutoff,
            batchSize,
            after.at,
            after.seq,
          ),
        result,
      );
      if (!batch!.held) return tenants; // another instance is sweeping
      result.events += batch!.deleted;
      for (const tenant of batch!.tenants ?? []) tenants.add(tenant);
      if (batch!.deleted < batchSize) return tenants;
      // The batch's last (dispatched_at, seq): the next one starts after it, not over its dead entries.
      after = { at: batch!.last_at!, seq: batch!.last_seq! };
      if (pauseMs) await sleep(pauseMs);
    }
    return tenants;
  }

  async function sweepDeliveries(cutoff: Date, result: SweepResult) {
    while (!stopping) {
      // Each webhook's (webhook_id, created_at) index probed once per batch (a skip scan by hand):
      // no index of its own for the sweep on the fan-out's hot table.
      const deleted = await timed(
        () =>
          db.$executeRawUnsafe(
            `DELETE FROM webhook_deliveries WHERE id IN (
               SELECT d.id FROM webhooks w CROSS JOIN LATERAL (
                 SELECT id FROM webhook_deliveries d
                 WHERE d.webhook_id = w.id AND d.created_at < $1::timestamptz AND d.status <> 'pending'
                 ORDER BY d.created_at DESC, d.id DESC LIMIT $2 FOR UPDATE SKIP LOCKED) AS d
               LIMIT $2)`,
            cutoff,
            batchSize,
          ),
        result,
      );
      result.deliveries += deleted;
      if (deleted < batchSize) return;
      if (pauseMs) await sleep(pauseMs);
    }
  }

  /** One sweep over the whole database; answers what it removed and its longest batch. */
  async function sweep(now = new Date()): Promise<SweepResult> {
    const started = performance.now();
    const cutoff = new Date(now.getTime() - days * 86_400_000);
    const result: SweepResult = { events: 0, deliveries: 0, batches: 0, longestBatchMs: 0, ms: 0 };
    const tenants = await sweepEvents(cutoff, result);
    await sweepDeliveries(cutoff, result);
    if (tenants.size) {
      // The time buckets of days now empty (their counters at 0): no range asks for them again.
      await db.$executeRawUnsafe(
        `DELETE FROM list_counts WHERE tenant_id = ANY ($1::uuid[]) AND list = 'audit-events'
           AND dimension IN ('occurred_day', 'occurred_hour') AND value < $2 AND count = 0`,
        [...tenants],
        cutoff.toISOString().slice(0, 10),
      );
    }
    result.ms = performance.now() - started;
    return result;
  }

  async function tick() {
    try {
      const result = await sweep();
      if (result.events || result.deliveries)
        logger.info('events retention sweep', {
          ...result,
          longestBatchMs: Math.round(result.longestBatchMs),
          ms: Math.round(result.ms),
          days,
        });
    } catch (error) {
      logger.warn('events retention sweep failed; it runs again at the next interval', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  function schedule(ms: number) {
    timer = setTimeout(() => {
      running = tick().finally(() => {
        running = undefined;
        if (!stopping) schedule(intervalMs);
      });
    }, ms);
    timer.unref();
  }

  return {
    sweep,
    /** Sweeps right away, then every intervalMs; does nothing when intervalMs is 0. */
    start() {
      if (intervalMs <= 0 || timer) return;
      stopping = false;
      schedule(0);
    },
    /** Stops after the batch in progress (its transaction commits or rolls back whole). */
    async stop() {
      stopping = true;
      clearTimeout(timer);
      timer = undefined;
      await running;
      stopping = false;
    },
  };
}

export type EventsRetention = ReturnType<typeof createEventsRetention>;
