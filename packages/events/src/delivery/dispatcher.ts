import type { Logger } from '@msp/http';
import { OutboundBlockedError, OutboundTimeoutError, type Outbound } from '@msp/outbound';
import type { SecretBox } from '@msp/secrets';
import { onEventRecorded } from '../record';
import { DEFAULT_DISABLE_AFTER_MS, DEFAULT_RETRY_DELAYS_MS, nextDelay } from '../retry-schedule';
import { signatureHeaders } from '../signing';
import { openWebhookSecret, WEBHOOK_KEY_VARIABLE } from '../webhook-secrets';
import type { ClaimedDelivery, DeliveriesRepository } from './deliveries.repository';

export interface DispatcherOptions {
  deliveries: DeliveriesRepository;
  /** Calls to the endpoints: address policy and timeout (a slow receiver holds a worker no longer). */
  outbound: Outbound;
  /** Opens the endpoints' signing secrets (WEBHOOK_ENCRYPTION_KEY). */
  secrets: SecretBox;
  logger: Logger;
  /** Deliveries in flight at once per instance (default 32). */
  concurrency?: number;
  /**
   * How often to look for due work when nothing wakes it (default 250 ms): events of other
   * instances are found this way; this process's own wake it up.
   */
  pollMs?: number;
  retryDelaysMs?: readonly number[];
  disableAfterMs?: number;
}

/** Most of a receiver's answer that is read (and thrown away): enough to finish the exchange. */
const MAX_RESPONSE_BYTES = 64 * 1024;

async function drain(response: Response): Promise<void> {
  if (!response.body) return;
  let read = 0;
  for await (const chunk of response.body) {
    read += (chunk as Uint8Array).byteLength;
    if (read > MAX_RESPONSE_BYTES) break;
  }
}

/**
 * Moves events from the outbox to the endpoints: relays committed events into deliveries, then
 * sends due deliveries, `concurrency` at a time. Woken shortly after this process records an
 * event, when slots free up, and by its callers; polling finds the rest (other instances' events,
 * retries coming due, a delivery left pending by a restart). Any number of instances may run:
 * relaying is serialised by an advisory lock, deliveries are claimed with SKIP LOCKED under a lease.
 */
export function createDispatcher(options: DispatcherOptions) {
  const { deliveries, outbound, secrets, logger } = options;
  const concurrency = options.concurrency ?? 32;
  const pollMs = options.pollMs ?? 250;
  // An event recorded here is committed a moment later; waiting this long lets one relay take
  // the events of many concurrent writes.
  const settleMs = 20;
  // While events keep coming (a mailbox drained, an import), a relay every settleMs would cost the
  // database a relay and a claim for a handful of events each: after a relay woken by events, the
  // next one waits until this long after it. A lone event still goes out after settleMs.
  const streamMs = 200;
  // Free slots are refilled in batches, not one claim per finished delivery.
  const refillAt = Math.max(1, Math.floor(concurrency / 4));
  const delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const disableAfterMs = options.disableAfterMs ?? DEFAULT_DISABLE_AFTER_MS;
  // The lease outlasts the timeout, so a claimed delivery is never sent twice at once.
  const leaseMs = outbound.timeoutMs + 30_000;

  let running = false;
  let pumping = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let databaseFailing = false;
  const inFlight = new Set<Promise<void>>();

  function schedule(ms: number) {
    if (!running) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void pump(), ms);
  }

  /** Wakes the dispatcher now: an event was committed, or a delivery became due. */
  function wake() {
    if (pumping) again = true;
    else schedule(0);
  }

  /** Wakes it shortly (at most once per streamMs while events keep coming), unless it is woken sooner anyway. */
  let settling = false;
  let lastEventWake = -Infinity;
  function wakeSoon() {
    if (settling || !running) return;
    settling = true;
    const delay = Math.max(settleMs, lastEventWake + streamMs - performance.now());
    setTimeout(() => {
      settling = false;
      lastEventWake = performance.now();
      wake();
    }, delay).unref();
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const at = new Date();
    const started = performance.now();
    let responseStatus: number | null = null;
    let error: string | null = null;
    let secret: string | undefined;
    try {
      secret = openWebhookSecret(secrets, delivery.secret);
    } catch {
      error = `the signing secret cannot be decrypted (was ${WEBHOOK_KEY_VARIABLE} changed?); nothing was sent`;
    }
    if (secret !== undefined) {
      try {
        const response = await outbound.fetch(delivery.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'msp-webhooks/1',
            ...signatureHeaders(secret, delivery.id, delivery.body, at),
          },
          body: delivery.body,
        });
        responseStatus = response.status;
        await drain(response).catch(() => undefined);
        if (response.status < 200 || response.status > 299) error = `HTTP ${response.status}`;
      } catch (caught) {
        if (caught instanceof OutboundTimeoutError) error = `no answer within ${outbound.timeoutMs} ms`;
        else if (caught instanceof OutboundBlockedError) error = `refused: ${caught.message}`;
        else
          error = `could not connect: ${(caught as Error & { cause?: Error }).cause?.message ?? (caught as Error).message}`;
      }
    }
    const outcome = {
      at,
      response_status: responseStatus,
      duration_ms: Math.round(performance.now() - started),
      error,
    };
    // The endpoint's health is written before the attempt: recording the attempt makes its retry
    // claimable, and a retry that succeeds before this attempt's failure was noted would otherwise
    // leave a healthy endpoint marked failing (and a reader who sees `succeeded` sees it healthy).
    if (!error) {
      if (delivery.endpoint_failing) await deliveries.markEndpointHealthy(delivery.webhook_id);
      await deliveries.recordAttempt(delivery, outcome, 'succeeded', null);
      return;
    }
    const reason = `Disabled at ${new Date().toISOString()}: every delivery failed for ${Math.round(disableAfterMs / 3_600_000)} hours (last: ${error}).`;
    if (await deliveries.markEndpointFailing(delivery.webhook_id, new Date(Date.now() - disableAfterMs), reason)) {
      // The URL may hold a token in its query: log the webhook id only, never the URL or the secret.
      logger.warn('webhook disabled after failing', { webhook_id: delivery.webhook_id, error });
    }
    const delay = nextDelay(delays, delivery.attempt);
    await deliveries.recordAttempt(
      delivery,
      outcome,
      delay === undefined ? 'failed' : 'pending',
      delay === undefined ? null : new Date(Date.now() + delay),
    );
  }

  function start(delivery: ClaimedDelivery) {
    const task = attempt(delivery)
      .catch((error: Error) => {
        logger.error('webhook delivery could not be recorded', { delivery_id: delivery.id, error: error.message });
      })
      .finally(() => {
        inFlight.delete(task);
        if (concurrency - inFlight.size >= refillAt) wake();
      });
    inFlight.add(task);
  }

  async function pump(): Promise<void> {
    if (!running || pumping) return;
    pumping = true;
    try {
      do {
        again = false;
        while ((await deliveries.relay(500)) === 500) {
          /* a backlog: keep relaying */
        }
        const free = concurrency - inFlight.size;
        if (free > 0) {
          const claimed = await deliveries.claim(free, leaseMs);
          for (const delivery of claimed) start(delivery);
        }
      } while (again && running);
      if (databaseFailing) logger.info('webhook dispatcher reaches its database again');
      databaseFailing = false;
    } catch (error) {
      // The database is away (an outage, a restart): say so once, keep polling.
      if (!databaseFailing)
        logger.error('webhook dispatcher cannot reach its database', { error: (error as Error).message });
      databaseFailing = true;
    } finally {
      pumping = false;
    }
    schedule(pollMs);
  }

  return {
    wake,
    async start() {
      if (running) return;
      running = true;
      const sealed = await deliveries.sealPlainSecrets((plain) => secrets.seal(plain));
      if (sealed) logger.info('webhook signing secrets stored in plain text were encrypted', { webhooks: sealed });
      unsubscribe = onEventRecorded(wakeSoon);
      schedule(0);
    },
    /** Stops taking work and waits for the attempts in flight (each ends within the timeout). */
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      unsubscribe?.();
      await Promise.allSettled([...inFlight]);
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
