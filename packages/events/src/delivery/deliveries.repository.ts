import { isoTimestampSql } from '@msp/db';
import type { TransactionalSql } from '../sql';

/** A delivery claimed for one attempt, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  webhook_id: string;
  attempt: number;
  body: string;
  url: string;
  secret: string;
  event_type: string;
  /** Whether the endpoint's last attempts failed (a success then clears that). */
  endpoint_failing: boolean;
}

export interface AttemptOutcome {
  at: Date;
  response_status: number | null;
  duration_ms: number;
  error: string | null;
}

/** The body of an event's delivery (`{type, timestamp, data}`), the same bytes on every attempt, from the events row `alias`. */
export const eventBodySql = (alias: string) =>
  `json_build_object('type', ${alias}.type, 'timestamp', ${isoTimestampSql(`${alias}.occurred_at`)}, 'data', ${alias}.data)::text`;

// Relaying holds this transaction-scoped advisory lock, so one relay at a time per database puts
// deliveries in the order of the events, whatever the number of instances.
const RELAY_LOCK = 0x6d73_7065; // "mspe"

/**
 * The claim (`$1` how many, `$2` the lease in ms): the oldest due deliveries, locked and leased.
 * The endpoint's check and the earlier pending delivery's are scalar subqueries, run per row as
 * the index is walked (see `claim`).
 */
export const CLAIM_DUE = `WITH due AS (
  SELECT d.id FROM webhook_deliveries d
  WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until <= now())
    AND (SELECT w.enabled FROM webhooks w WHERE w.id = d.webhook_id)
    AND (SELECT 1 FROM webhook_deliveries p
         WHERE p.webhook_id = d.webhook_id AND p.resource_type = d.resource_type AND p.resource_id = d.resource_id
           AND p.status = 'pending' AND p.event_seq < d.event_seq
         LIMIT 1) IS NULL
  ORDER BY d.status, d.next_attempt_at, d.event_seq
  LIMIT $1 FOR UPDATE OF d SKIP LOCKED
)
UPDATE webhook_deliveries d SET locked_until = now() + $2 * interval '1 millisecond', attempt = d.attempt + 1
FROM due, webhooks w WHERE d.id = due.id AND w.id = d.webhook_id
RETURNING d.id::text, d.webhook_id::text, d.attempt, d.body, w.url, w.secret, d.event_type, (w.failing_since IS NOT NULL) AS endpoint_failing`;

/** The dispatcher's queries: the relay from the outbox, and the delivery job queue. */
export function createDeliveriesRepository(db: TransactionalSql) {
  return {
    /**
     * Hands up to `limit` undispatched events to the webhooks subscribed to them, one delivery each,
     * and marks them dispatched, in one statement (all or nothing). Answers how many events it took;
     * 0 also when another instance is relaying right now.
     */
    async relay(limit: number): Promise<number> {
      const [result] = await db.$queryRawUnsafe<{ events: number }[]>(
        `WITH lock AS (SELECT pg_try_advisory_xact_lock(${RELAY_LOCK}) AS held),
         batch AS (
           SELECT e.id, e.seq, e.tenant_id, e.type, e.resource_type, e.resource_id, e.occurred_at, e.data
           FROM events e, lock WHERE lock.held AND e.dispatched_at IS NULL
           ORDER BY e.seq LIMIT $1 FOR UPDATE OF e SKIP LOCKED
         ),
         marked AS (UPDATE events SET dispatched_at = now() FROM batch WHERE events.id = batch.id RETURNING events.id),
         queued AS (
           INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, resource_type, resource_id, event_seq, body, next_attempt_at)
           SELECT b.tenant_id, w.id, b.id, b.type, b.resource_type, b.resource_id, b.seq,
                  ${eventBodySql('b')}, now()
           FROM batch b JOIN webhooks w ON w.tenant_id = b.tenant_id AND w.enabled AND (b.type = ANY (w.events) OR '*' = ANY (w.events))
             -- A webhook receives what happened after it was subscribed, however late the relay runs.
             AND w.created_at <= b.occurred_at
           RETURNING 1
         )
         SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM queued)::int AS deliveries`,
        limit,
      );
      return result!.events;
    },

    /**
     * Claims up to `limit` due deliveries for one attempt each, under a lease of `leaseMs` (after
     * which another worker may take one whose worker died). Only the oldest pending delivery of a
     * resource to an endpoint is due: a resource's events arrive in order. Disabled endpoints wait.
     * Oldest due first, in the order of the pending-queue index.
     *
     * Its cost must not grow with the backlog: the claim walks that index and stops at `limit`.
     * Left to itself the planner sometimes did otherwise: whenever its statistics had fewer pending
     * rows than there were (a table never analysed, or analysed while the queue was empty, i.e.
     * every burst), it read every due delivery, joined them all and sorted them for the first few:
     * a claim then cost time in PostgreSQL's CPU growing with the backlog, paid again by every
     * claim of a fan-out. So the checks of the endpoint and of
     * the earlier pending delivery are per-row subqueries (never hashed over the whole backlog), and
     * sorting is off for this one statement: the index's order is then the only plan.
     */
    async claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
      return db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('SET LOCAL enable_sort = off');
        return tx.$queryRawUnsafe<ClaimedDelivery[]>(CLAIM_DUE, limit, leaseMs);
      });
    },

    /** Records an attempt: `nextAttemptAt` null ends the delivery (succeeded, or failed for good). */
    async recordAttempt(
      delivery: ClaimedDelivery,
      outcome: AttemptOutcome,
      status: 'pending' | 'succeeded' | 'failed',
      nextAttemptAt: Date | null,
    ): Promise<void> {
      const entry = JSON.stringify([
        {
          attempt: delivery.attempt,
          at: outcome.at.toISOString(),
          response_status: outcome.response_status,
          duration_ms: outcome.duration_ms,
          error: outcome.error,
        },
      ]);
      await db.$executeRawUnsafe(
        `UPDATE webhook_deliveries SET status = $2, response_status = $3, duration_ms = $4, error = $5,
           attempts = attempts || $6::jsonb, next_attempt_at = $7::timestamptz, locked_until = NULL, last_attempt_at = $8::timestamptz
         WHERE id = $1::uuid AND attempt = $9`,
        delivery.id,
        status,
        outcome.response_status,
        outcome.duration_ms,
        outcome.error,
        entry,
        nextAttemptAt,
        outcome.at,
        delivery.attempt,
      );
    },

    /**
     * Encrypts the signing secrets stored before they were (plain `whsec_…`); each row only if it
     * still holds what was read, so two instances starting together do not seal twice. Answers how many.
     */
    async sealPlainSecrets(seal: (plain: string) => string): Promise<number> {
      const plain = await db.$queryRawUnsafe<{ id: string; secret: string }[]>(
        "SELECT id::text, secret FROM webhooks WHERE secret LIKE 'whsec\\_%'",
      );
      let sealed = 0;
      for (const row of plain) {
        sealed += await db.$executeRawUnsafe(
          'UPDATE webhooks SET secret = $3 WHERE id = $1::uuid AND secret = $2',
          row.id,
          row.secret,
          seal(row.secret),
        );
      }
      return sealed;
    },

    async markEndpointHealthy(webhookId: string): Promise<void> {
      await db.$executeRawUnsafe(
        'UPDATE webhooks SET failing_since = NULL WHERE id = $1::uuid AND failing_since IS NOT NULL',
        webhookId,
      );
    },

    /**
     * Notes a failure; an endpoint failing since `disableBefore` or earlier is disabled with
     * `reason`. Answers whether this call disabled it.
     */
    async markEndpointFailing(webhookId: string, disableBefore: Date, reason: string): Promise<boolean> {
      const [row] = await db.$queryRawUnsafe<{ disabled: boolean }[]>(
        `UPDATE webhooks SET
           failing_since = COALESCE(failing_since, now()),
           enabled = CASE WHEN failing_since <= $2::timestamptz THEN false ELSE enabled END,
           disabled_reason = CASE WHEN failing_since <= $2::timestamptz THEN $3 ELSE disabled_reason END,
           updated_at = CASE WHEN failing_since <= $2::timestamptz THEN now() ELSE updated_at END
         WHERE id = $1::uuid
         RETURNING (failing_since <= $2::timestamptz) AS disabled`,
        webhookId,
        disableBefore,
        reason,
      );
      return Boolean(row?.disabled);
    },
  };
}

export type DeliveriesRepository = ReturnType<typeof createDeliveriesRepository>;
