import { createHash, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { AppError, isAppError, validationFailed } from './errors';
import type { Logger } from './logger';
import { hasReplicas } from './redis';
import { currentContext } from './request-context';

/*
 * Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header Field") on every POST that
 * creates: the same key with the same request within 24 hours replays the first response with
 * `Idempotent-Replayed: true` and creates nothing; the same key with another request is 422; a
 * request arriving while the first with that key still runs is 409. Keys are per API client.
 * The claim of a running request is kept alive while it runs (however slow its handler), and its
 * answer is stored before it is sent: a client retrying the moment it has the answer gets the
 * replay, never a 409.
 *
 * The records live in Redis when the service has one (so every instance sees them), else in the
 * process. Behind Sentinels a record counts as written once a replica has it too (WAIT), so the
 * replica promoted after the master's loss knows every key that was answered. While Redis cannot
 * be reached a request with a key is answered 503 before anything runs (running it without the
 * guarantee is how a retry becomes a second ticket); once the handler has run, storing its answer
 * is retried through a failover before the answer is sent.
 *
 * A process that dies between its transaction's commit and storing the answer leaves a claim that
 * is no longer renewed. A retry that finds such a stale claim asks the service whether the claim's
 * request committed (its events carry the claim, written in the same transaction as the change:
 * `effectOfClaim`): if it did, the retry is answered from what was recorded and nothing runs
 * again; if not, the retry takes the claim over and runs.
 */

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * How long a claim counts as alive without being renewed: after it, a retry may look at what the
 * claim's request committed and take the key over. A live request renews its claim every third of
 * it, for as long as it runs.
 */
const RUNNING_TTL_MS = 60_000;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** `beat`: when the claim was taken or last renewed (ms since the epoch). */
type Record_ =
  | { state: 'running'; fingerprint: string; claim: string; beat: number }
  | { state: 'done'; fingerprint: string; response: StoredResponse };

export interface IdempotencyStore {
  /** How long a claim counts as alive unless renewed. */
  readonly runningTtlMs: number;
  /** Takes the key for this request (the claim named `claim`), or returns what holds it already. */
  claim(key: string, fingerprint: string, claim: string): Promise<'claimed' | Record_>;
  /** Renews the claim's beat, if the key is still held by it. */
  renew(key: string, fingerprint: string, claim: string): Promise<void>;
  /** Replaces the claim `stale` by `claim`; false when the key is no longer held by `stale`. */
  takeOver(key: string, fingerprint: string, stale: string, claim: string): Promise<boolean>;
  /**
   * Leaves the claim held but no longer alive, if the key is still held by it: a retry at once asks
   * what the claim's request committed (for a request whose outcome could not be told), instead of
   * waiting out the claim or running the request again.
   */
  lapse(key: string, fingerprint: string, claim: string): Promise<void>;
  complete(key: string, fingerprint: string, response: StoredResponse): Promise<void>;
  release(key: string): Promise<void>;
}

/**
 * What a request that holds `claim` committed: the resource of its events of `resourceType` (else
 * of its first event), as that event shows it; nothing when it recorded no event.
 */
export type EffectOfClaim = (
  claim: string,
  resourceType: string,
) => Promise<{ resourceId: string; object: unknown } | undefined>;

/**
 * What a create route makes: its collection's type (`/tickets/:id/comments` → `comment`,
 * `/sla-policies` → `sla_policy`, `/mailboxes` → `mailbox`).
 */
export interface CreateRoute {
  createdStatus: number;
  resourceType: string;
}

export function createRouteOf(path: string, createdStatus: number): CreateRoute {
  const collection =
    path
      .split('/')
      .filter((segment) => segment && !segment.startsWith(':'))
      .pop() ?? '';
  const resourceType = collection
    .replace(/-/g, '_')
    .replace(/ies$/, 'y')
    .replace(/(x|ch|sh|ss)es$/, '$1')
    .replace(/s$/, '');
  return { createdStatus, resourceType };
}

export interface IdempotencyStoreOptions {
  /** How long a claim lives unless renewed (60 s). */
  runningTtlMs?: number;
  /** Replicas a record must reach before it counts (Redis WAIT); by default 1 behind Sentinels, else 0. */
  replicas?: number;
  /** How long WAIT waits for them (1 s); fewer replicas after it are logged, not refused. */
  replicaTimeoutMs?: number;
}

const running = (fingerprint: string, claim: string, beat = Date.now()) =>
  JSON.stringify({ state: 'running', fingerprint, claim, beat });

export function memoryIdempotencyStore(options: IdempotencyStoreOptions = {}): IdempotencyStore {
  const runningTtlMs = options.runningTtlMs ?? RUNNING_TTL_MS;
  const records = new Map<string, { record: Record_; expires: number }>();
  const live = (key: string) => {
    const entry = records.get(key);
    if (entry && entry.expires <= Date.now()) records.delete(key);
    return records.get(key)?.record;
  };
  return {
    runningTtlMs,
    async claim(key, fingerprint, claim) {
      const existing = live(key);
      if (existing) return existing;
      records.set(key, {
        record: { state: 'running', fingerprint, claim, beat: Date.now() },
        expires: Date.now() + IDEMPOTENCY_WINDOW_MS,
      });
      // Expired entries of other keys go as new ones come: the map stays as large as a day's keys.
      if (records.size % 1000 === 0) for (const other of records.keys()) live(other);
      return 'claimed';
    },
    async renew(key, _fingerprint, claim) {
      const entry = records.get(key);
      if (entry && entry.record.state === 'running' && entry.record.claim === claim) entry.record.beat = Date.now();
    },
    async lapse(key, _fingerprint, claim) {
      const entry = records.get(key);
      if (entry && entry.record.state === 'running' && entry.record.claim === claim) entry.record.beat = 0;
    },
    async takeOver(key, fingerprint, stale, claim) {
      const entry = records.get(key);
      if (!entry || entry.record.state !== 'running' || entry.record.claim !== stale) return false;
      entry.record = { state: 'running', fingerprint, claim, beat: Date.now() };
      return true;
    },
    async complete(key, fingerprint, response) {
      records.set(key, {
        record: { state: 'done', fingerprint, response },
        expires: Date.now() + IDEMPOTENCY_WINDOW_MS,
      });
    },
    async release(key) {
      records.delete(key);
    },
  };
}

/**
 * Replaces the record by ARGV[2] only while the key still holds the claim ARGV[1] (not an answer,
 * not another request's claim): a renewal's new beat, or a takeover.
 */
const REPLACE_CLAIM_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local record = cjson.decode(current)
if record.state ~= 'running' or record.claim ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1`;

export function redisIdempotencyStore(
  redis: Redis,
  prefix: string,
  options: IdempotencyStoreOptions = {},
  logger?: Logger,
): IdempotencyStore {
  const runningTtlMs = options.runningTtlMs ?? RUNNING_TTL_MS;
  const replicas = options.replicas ?? (hasReplicas(redis) ? 1 : 0);
  const replicaTimeoutMs = options.replicaTimeoutMs ?? 1000;
  let underReplicated = false;
  /**
   * Waits until `replicas` replicas have every write of this connection so far. A connection lost
   * meanwhile throws: the write may exist on a master that is gone, so it did not happen.
   */
  async function replicated() {
    if (replicas === 0) return;
    const reached = await redis.wait(replicas, replicaTimeoutMs);
    // A replica down (not a failover) leaves the master alone with the records: creating goes on.
    if (reached < replicas && !underReplicated)
      logger?.warn('idempotency records reach fewer Redis replicas than configured', { replicas, reached });
    underReplicated = reached < replicas;
  }
  return {
    runningTtlMs,
    async claim(key, fingerprint, claim) {
      // SET NX: of two requests with one key, exactly one claims it, on any instance.
      const set = await redis.set(prefix + key, running(fingerprint, claim), 'PX', IDEMPOTENCY_WINDOW_MS, 'NX');
      if (set === 'OK') {
        await replicated();
        return 'claimed';
      }
      const existing = await redis.get(prefix + key);
      // Expired between the two commands: claim again.
      if (existing === null) return this.claim(key, fingerprint, claim);
      return JSON.parse(existing) as Record_;
    },
    async renew(key, fingerprint, claim) {
      await redis.eval(REPLACE_CLAIM_SCRIPT, 1, prefix + key, claim, running(fingerprint, claim));
    },
    async lapse(key, fingerprint, claim) {
      await redis.eval(REPLACE_CLAIM_SCRIPT, 1, prefix + key, claim, running(fingerprint, claim, 0));
      await replicated();
    },
    async takeOver(key, fingerprint, stale, claim) {
      const replaced = await redis.eval(REPLACE_CLAIM_SCRIPT, 1, prefix + key, stale, running(fingerprint, claim));
      if (replaced !== 1) return false;
      await replicated();
      return true;
    },
    async complete(key, fingerprint, response) {
      await redis.set(
        prefix + key,
        JSON.stringify({ state: 'done', fingerprint, response }),
        'PX',
        IDEMPOTENCY_WINDOW_MS,
      );
      await replicated();
    },
    async release(key) {
      await redis.del(prefix + key);
    },
  };
}

// What identifies "the same request": the route and the parsed body, keys sorted.
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

function fingerprintOf(req: Request): string {
  // The query is part of the request: `?dry_run=true` and the real POST are two requests, so a key
  // spent on one is never replayed for the other.
  const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
  query.sort();
  return createHash('sha256')
    .update(
      `${req.method} ${req.baseUrl}${req.path}?${query.toString()}\n${JSON.stringify(canonical(req.body ?? null))}`,
    )
    .digest('hex');
}

/** The header's value: a structured-field string (`"…"`) or, leniently, the bare token. */
function keyOf(raw: string): string {
  const value = raw.trim();
  const unquoted = /^"(.*)"$/.exec(value)?.[1] ?? value;
  if (!/^[\x21-\x7e]{1,255}$/.test(unquoted) || unquoted.includes('"')) {
    throw validationFailed(
      [{ field: 'Idempotency-Key', message: 'must be 1–255 visible ASCII characters, e.g. a UUID' }],
      'The Idempotency-Key header is not valid.',
    );
  }
  return unquoted;
}

const REPLAYED_HEADERS = ['location', 'content-location', 'etag'];

export interface Idempotency {
  /**
   * Runs `handle` at most once per client and key: a replay answers the stored response instead.
   * Without the header, `handle` simply runs.
   */
  run(req: Request, res: Response, handle: () => Promise<unknown>, route?: CreateRoute): Promise<void>;
}

export interface IdempotencyOptions {
  /** How long storing a handler's answer is retried (through a Redis failover) before it is sent unstored (15 s). */
  completeRetryMs?: number;
  /** What a claim's request committed (the service's events); without it a stale claim is simply taken over. */
  effectOfClaim?: EffectOfClaim;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createIdempotency(
  store: IdempotencyStore,
  logger: Logger,
  options: IdempotencyOptions = {},
): Idempotency {
  const completeRetryMs = options.completeRetryMs ?? 15_000;
  const { effectOfClaim } = options;

  /**
   * The answer of a claim's request that committed and never stored its answer, rebuilt from what
   * its transaction recorded: the route's status, the resource as its event shows it, and its
   * Location by the API's convention (the collection's path and the id).
   */
  async function answerOfCommitted(
    req: Request,
    claim: string,
    route: CreateRoute,
  ): Promise<StoredResponse | undefined> {
    const effect = effectOfClaim ? await effectOfClaim(claim, route.resourceType) : undefined;
    if (!effect) return undefined;
    return {
      status: route.createdStatus,
      headers: { location: `${`${req.baseUrl}${req.path}`.replace(/\/+$/, '')}/${effect.resourceId}` },
      body: effect.object,
    };
  }

  let outage = false;
  const storeFailed = (error: unknown) => {
    if (outage) return;
    outage = true;
    logger.error('idempotency store failed; requests with an Idempotency-Key are answered 503 until it is back', {
      error: error instanceof Error ? error.message : String(error),
    });
  };
  /** The handler's effect is done: its answer must be findable by a retry, so storing it outlasts a failover. */
  async function completeDurably(key: string, fingerprint: string, response: StoredResponse) {
    const deadline = Date.now() + completeRetryMs;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await store.complete(key, fingerprint, response);
        storeWorked();
        return;
      } catch (error) {
        storeFailed(error);
        if (Date.now() >= deadline) {
          logger.error(
            'the answer to a request with an Idempotency-Key could not be stored; a retry with that key may run it again',
            {
              error: error instanceof Error ? error.message : String(error),
            },
          );
          return;
        }
        await sleep(Math.min(100 * attempt, 1000));
      }
    }
  }
  const storeWorked = () => {
    if (!outage) return;
    outage = false;
    logger.info('idempotency store recovered');
  };

  return {
    async run(req, res, handle, route = createRouteOf(req.path, 201)) {
      const raw = req.get('Idempotency-Key');
      if (raw === undefined) {
        await handle();
        return;
      }
      const principal = req.principal;
      const key = `${principal?.tenantId ?? '-'}:${principal?.clientId ?? '-'}:${keyOf(raw)}`;
      const fingerprint = fingerprintOf(req);

      const ours = randomUUID();
      let claim: Awaited<ReturnType<IdempotencyStore['claim']>>;
      try {
        claim = await store.claim(key, fingerprint, ours);
        storeWorked();
      } catch (error) {
        storeFailed(error);
        // Nothing has run: the client's retry with the same key is safe.
        throw new AppError(503, 'Idempotency-Key records cannot be reached just now; retry with the same key.', {
          code: 'service-unavailable',
          headers: { 'Retry-After': '1' },
        });
      }
      if (claim !== 'claimed') {
        if (claim.fingerprint !== fingerprint) {
          throw new AppError(
            422,
            'This Idempotency-Key was used with another request (another body, route or query); use a new key for a new request.',
            {
              code: 'idempotency-key-reused',
            },
          );
        }
        const inUse = () =>
          new AppError(
            409,
            'A request with this Idempotency-Key is still being processed; retry after it has finished.',
            {
              code: 'idempotency-key-in-use',
              headers: { 'Retry-After': '1' },
            },
          );
        let replay = claim.state === 'done' ? claim.response : undefined;
        if (claim.state === 'running') {
          // A claim renewed lately belongs to a request still running somewhere.
          if (Date.now() - claim.beat <= store.runningTtlMs) throw inUse();
          // Its instance died. If its change committed, answer that; else run in its place.
          replay = await answerOfCommitted(req, claim.claim, route);
          if (replay) await completeDurably(key, fingerprint, replay);
          else if (!(await store.takeOver(key, fingerprint, claim.claim, ours))) throw inUse();
        }
        if (replay) {
          res.status(replay.status).set(replay.headers).set('Idempotent-Replayed', 'true').json(replay.body);
          return;
        }
      }
      // The events this request records carry its claim (see answerOfCommitted).
      const context = currentContext();
      if (context) context.idempotencyClaim = ours;

      // However long the handler runs, the key stays claimed: a retry meanwhile is 409, never a
      // second run (a claim that lapsed mid-request let one through).
      const renewal = setInterval(
        () => {
          store.renew(key, fingerprint, ours).then(storeWorked, storeFailed);
        },
        Math.max(1, Math.floor(store.runningTtlMs / 3)),
      );
      renewal.unref();

      // What the handler answers is held back until it is stored: a client that retries the moment
      // it has the answer finds it there (replayed), not the claim (409).
      let captured: StoredResponse | undefined;
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        const headers: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const value = res.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        captured = { status: res.statusCode, headers, body };
        return res;
      };
      try {
        await handle();
      } catch (error) {
        // Stopped before lapse() below: a renewal landing after it would make the claim alive again.
        clearInterval(renewal);
        // An error after the change committed (the connection lost on the way back) is answered as
        // the change; otherwise nothing was created and the key is free for a corrected retry.
        // A refusal (4xx) is thrown before anything commits: only other failures are looked up.
        const refused = isAppError(error) && error.status < 500;
        let committed: StoredResponse | undefined;
        try {
          committed = refused ? undefined : await answerOfCommitted(req, ours, route);
        } catch {
          // Whether it committed cannot be told now (the database is away): a retry that ran it
          // again could make it twice, so the key stays claimed, lapsed, and the retry asks again.
          await store.lapse(key, fingerprint, ours).catch(storeFailed);
          throw error;
        }
        if (!committed) {
          await store.release(key).catch(storeFailed);
          throw error;
        }
        captured = committed;
        res.status(committed.status).set(committed.headers);
      } finally {
        clearInterval(renewal);
        res.json = json;
      }
      if (captured && captured.status < 500) await completeDurably(key, fingerprint, captured);
      else await store.release(key).catch(storeFailed);
      if (captured) json(captured.body);
    },
  };
}
