import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { AppError, validationFailed } from './errors';
import type { Logger } from './logger';

/*
 * Idempotency-Key (IETF httpapi draft "The Idempotency-Key HTTP Header Field") on every POST that
 * creates: the same key with the same request within 24 hours replays the first response with
 * `Idempotent-Replayed: true` and creates nothing; the same key with another request is 422; a
 * request arriving while the first with that key still runs is 409. Keys are per API client.
 *
 * The records live in Redis when the service has one (so every instance sees them), else in the
 * process. A Redis outage does not take creating down with it: the request runs without the
 * guarantee, and that is logged once per outage, as for the rate limiter.
 */

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** How long a claim holds without an answer: a process that died mid-request frees its keys after this. */
const RUNNING_TTL_MS = 60_000;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

type Record_ = { state: 'running'; fingerprint: string } | { state: 'done'; fingerprint: string; response: StoredResponse };

export interface IdempotencyStore {
  /** Takes the key for this request, or returns what holds it already. */
  claim(key: string, fingerprint: string): Promise<'claimed' | Record_>;
  complete(key: string, fingerprint: string, response: StoredResponse): Promise<void>;
  release(key: string): Promise<void>;
}

export function memoryIdempotencyStore(): IdempotencyStore {
  const records = new Map<string, { record: Record_; expires: number }>();
  const live = (key: string) => {
    const entry = records.get(key);
    if (entry && entry.expires <= Date.now()) records.delete(key);
    return records.get(key)?.record;
  };
  return {
    async claim(key, fingerprint) {
      const existing = live(key);
      if (existing) return existing;
      records.set(key, { record: { state: 'running', fingerprint }, expires: Date.now() + RUNNING_TTL_MS });
      // Expired entries of other keys go as new ones come: the map stays as large as a day's keys.
      if (records.size % 1000 === 0) for (const other of records.keys()) live(other);
      return 'claimed';
    },
    async complete(key, fingerprint, response) {
      records.set(key, { record: { state: 'done', fingerprint, response }, expires: Date.now() + IDEMPOTENCY_WINDOW_MS });
    },
    async release(key) {
      records.delete(key);
    },
  };
}

export function redisIdempotencyStore(redis: Redis, prefix: string): IdempotencyStore {
  return {
    async claim(key, fingerprint) {
      // SET NX: of two requests with one key, exactly one claims it, on any instance.
      const set = await redis.set(prefix + key, JSON.stringify({ state: 'running', fingerprint }), 'PX', RUNNING_TTL_MS, 'NX');
      if (set === 'OK') return 'claimed';
      const existing = await redis.get(prefix + key);
      // Expired between the two commands: claim again.
      if (existing === null) return this.claim(key, fingerprint);
      return JSON.parse(existing) as Record_;
    },
    async complete(key, fingerprint, response) {
      await redis.set(prefix + key, JSON.stringify({ state: 'done', fingerprint, response }), 'PX', IDEMPOTENCY_WINDOW_MS);
    },
    async release(key) {
      await redis.del(prefix + key);
    },
  };
}

// What identifies "the same request": the route and the parsed body, keys sorted.
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  return value;
}

function fingerprintOf(req: Request): string {
  return createHash('sha256').update(`${req.method} ${req.baseUrl}${req.path}\n${JSON.stringify(canonical(req.body ?? null))}`).digest('hex');
}

/** The header's value: a structured-field string (`"…"`) or, leniently, the bare token. */
function keyOf(raw: string): string {
  const value = raw.trim();
  const unquoted = /^"(.*)"$/.exec(value)?.[1] ?? value;
  if (!/^[\x21-\x7e]{1,255}$/.test(unquoted) || unquoted.includes('"')) {
    throw validationFailed([{ field: 'Idempotency-Key', message: 'must be 1–255 visible ASCII characters, e.g. a UUID' }], 'The Idempotency-Key header is not valid.');
  }
  return unquoted;
}

const REPLAYED_HEADERS = ['location', 'content-location', 'etag'];

export interface Idempotency {
  /**
   * Runs `handle` at most once per client and key: a replay answers the stored response instead.
   * Without the header, `handle` simply runs.
   */
  run(req: Request, res: Response, handle: () => Promise<unknown>): Promise<void>;
}

export function createIdempotency(store: IdempotencyStore, logger: Logger): Idempotency {
  let outage = false;
  const storeFailed = (error: unknown) => {
    if (outage) return;
    outage = true;
    logger.error('idempotency store failed; creating without replay protection until it is back', { error: error instanceof Error ? error.message : String(error) });
  };
  const storeWorked = () => {
    if (!outage) return;
    outage = false;
    logger.info('idempotency store recovered');
  };

  return {
    async run(req, res, handle) {
      const raw = req.get('Idempotency-Key');
      if (raw === undefined) {
        await handle();
        return;
      }
      const principal = req.principal;
      const key = `${principal?.tenantId ?? '-'}:${principal?.clientId ?? '-'}:${keyOf(raw)}`;
      const fingerprint = fingerprintOf(req);

      let claim: Awaited<ReturnType<IdempotencyStore['claim']>>;
      try {
        claim = await store.claim(key, fingerprint);
        storeWorked();
      } catch (error) {
        storeFailed(error);
        await handle();
        return;
      }
      if (claim !== 'claimed') {
        if (claim.fingerprint !== fingerprint) {
          throw new AppError(422, 'This Idempotency-Key was used with another request (another body or another route); use a new key for a new request.', {
            code: 'idempotency-key-reused',
          });
        }
        if (claim.state === 'running') {
          throw new AppError(409, 'A request with this Idempotency-Key is still being processed; retry after it has finished.', {
            code: 'idempotency-key-in-use',
            headers: { 'Retry-After': '1' },
          });
        }
        res.status(claim.response.status).set(claim.response.headers).set('Idempotent-Replayed', 'true').json(claim.response.body);
        return;
      }

      // Capture what the handler answers, to store it once it is sent.
      let captured: StoredResponse | undefined;
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        const headers: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const value = res.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        captured = { status: res.statusCode, headers, body };
        return json(body);
      };
      try {
        await handle();
      } catch (error) {
        // Nothing was created: the key is free for a corrected retry.
        await store.release(key).catch(storeFailed);
        throw error;
      }
      if (captured && captured.status < 500) await store.complete(key, fingerprint, captured).catch(storeFailed);
      else await store.release(key).catch(storeFailed);
    },
  };
}
