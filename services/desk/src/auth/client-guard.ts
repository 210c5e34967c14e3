import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError, type Logger } from '@msp/http';

/**
 * Limits secret guessing per client id, across addresses: an attacker spreading guesses over many
 * addresses still meets one limit per client id.
 *
 * The per-address limiter of the token endpoint cannot stop a guesser who spreads attempts over
 * many addresses (or sends X-Forwarded-For through a trusted proxy). So every attempt at a client
 * id counts in one counter per client id, in Redis (shared by every desk instance), over a fixed
 * window; a successful attempt takes its count back. Past `failureLimit` in the window, attempts at
 * that client id are answered 429 before any secret is checked.
 *
 * That would let an attacker lock the real client out, so an address that authenticated the client
 * successfully (within `knownAddressTtlMs`) is remembered and bypasses the counter: the real client
 * keeps getting tokens from where it always did. A new address of the real client waits for the
 * window to end, as a guesser does. An attempt is counted before the secret is checked, not after
 * it failed, so a burst of parallel guesses cannot all slip past the check.
 *
 * Fails open like the rate limiter: if Redis fails, attempts are served unguarded and it is logged.
 */
export interface ClientGuardOptions {
  redis?: Redis;
  /** Redis key prefix: the same prefix means the same counters across instances. */
  prefix: string;
  /** Failed authentications per client id per window, from addresses not known to the client. */
  failureLimit: number;
  windowMs: number;
  /** How long a successful address stays known (default 30 days, renewed by each success). */
  knownAddressTtlMs?: number;
  logger: Logger;
}

/** One authentication attempt let through; say whether it succeeded. */
export interface GuardedAttempt {
  succeeded(): Promise<void>;
}

export interface ClientGuard {
  /** Before the secret is checked: counts the attempt, or refuses it with 429 while the client id is locked for this address. */
  begin(clientId: string, address: string): Promise<GuardedAttempt>;
}

interface GuardStore {
  /** Counts one attempt; answers the count in the window and the ms until the window ends. */
  count(key: string, windowMs: number): Promise<{ count: number; resetMs: number }>;
  /** Takes one attempt back (never below zero, never recreating an ended window). */
  refund(key: string): Promise<void>;
  remember(key: string, ttlMs: number): Promise<void>;
  knows(key: string): Promise<boolean>;
}

const REFUND = `local n = tonumber(redis.call('GET', KEYS[1]) or '0') if n > 0 then return redis.call('DECR', KEYS[1]) end return 0`;

function redisStore(redis: Redis): GuardStore {
  return {
    async count(key, windowMs) {
      // The window starts with the first attempt and is never extended (PEXPIRE NX).
      const results = await redis.multi().incr(key).pexpire(key, windowMs, 'NX').pttl(key).exec();
      const failed = results?.find(([error]) => error);
      if (!results || failed) throw failed?.[0] ?? new Error('the guard transaction was discarded');
      return { count: Number(results[0]![1]), resetMs: Math.max(0, Number(results[2]![1])) };
    },
    async refund(key) {
      await redis.eval(REFUND, 1, key);
    },
    async remember(key, ttlMs) {
      await redis.set(key, '1', 'PX', ttlMs);
    },
    async knows(key) {
      return (await redis.exists(key)) === 1;
    },
  };
}

/** How many keys the in-memory store keeps (the oldest go first). */
const MEMORY_KEYS_KEPT = 10_000;

/** Without REDIS_URL (the embedded default): the same rules, in this process only. */
function memoryStore(): GuardStore {
  const counters = new Map<string, { count: number; resetAt: number }>();
  const known = new Map<string, number>();
  const keep = <V>(map: Map<string, V>, key: string, value: V) => {
    map.delete(key);
    if (map.size >= MEMORY_KEYS_KEPT) map.delete(map.keys().next().value!);
    map.set(key, value);
  };
  return {
    async count(key, windowMs) {
      const now = Date.now();
      const current = counters.get(key);
      const counter = current && current.resetAt > now ? current : { count: 0, resetAt: now + windowMs };
      counter.count += 1;
      keep(counters, key, counter);
      return { count: counter.count, resetMs: counter.resetAt - now };
    },
    async refund(key) {
      const counter = counters.get(key);
      if (counter && counter.resetAt > Date.now() && counter.count > 0) counter.count -= 1;
    },
    async remember(key, ttlMs) {
      keep(known, key, Date.now() + ttlMs);
    },
    async knows(key) {
      const until = known.get(key);
      return until !== undefined && until > Date.now();
    },
  };
}

/** Defaults of TOKEN_CLIENT_FAILURE_LIMIT and TOKEN_CLIENT_FAILURE_WINDOW_SEC. */
export const DEFAULT_CLIENT_FAILURE_LIMIT = 20;
export const DEFAULT_CLIENT_FAILURE_WINDOW_SEC = 900;
const DEFAULT_KNOWN_ADDRESS_TTL_MS = 30 * 86_400_000;
const UNGUARDED: GuardedAttempt = { succeeded: async () => {} };

export function createClientGuard(options: ClientGuardOptions): ClientGuard {
  const store = options.redis ? redisStore(options.redis) : memoryStore();
  const knownTtl = options.knownAddressTtlMs ?? DEFAULT_KNOWN_ADDRESS_TTL_MS;
  // One log line per outage, as the rate limiter does.
  let outage = false;
  const failedOpen = (error: unknown): GuardedAttempt => {
    if (!outage) {
      outage = true;
      options.logger.error('client guard store failed; secret attempts are not counted per client until it is back', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
    return UNGUARDED;
  };
  const recovered = () => {
    if (!outage) return;
    outage = false;
    options.logger.info('client guard store recovered; secret attempts are counted per client again');
  };

  return {
    async begin(clientId, address) {
      // Hashed: a client id is whatever the caller sent, of any length.
      const id = createHash('sha256').update(clientId).digest('hex').slice(0, 32);
      const failures = `${options.prefix}failures:${id}`;
      const knownAddress = `${options.prefix}known:${id}:${address}`;
      const remember = () => store.remember(knownAddress, knownTtl).catch(failedOpen);
      try {
        if (await store.knows(knownAddress)) {
          recovered();
          return { succeeded: async () => void (await remember()) };
        }
        const { count, resetMs } = await store.count(failures, options.windowMs);
        recovered();
        if (count > options.failureLimit) {
          const retryAfter = Math.max(1, Math.ceil(resetMs / 1000));
          throw new AppError(
            429,
            `Too many failed authentications for this client_id (${options.failureLimit} per ` +
              `${options.windowMs / 1000} seconds). Retry after the time given in Retry-After; ` +
              'addresses this client authenticated from before are not affected.',
            { code: 'rate-limited', headers: { 'Retry-After': String(retryAfter), 'Cache-Control': 'no-store' } },
          );
        }
      } catch (error) {
        if (error instanceof AppError) throw error;
        return failedOpen(error);
      }
      return {
        succeeded: async () => {
          await Promise.all([store.refund(failures).catch(failedOpen), remember()]);
        },
      };
    },
  };
}
