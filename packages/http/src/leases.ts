import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from './logger';

/** One holder's claim on a key; `release()` gives it up (again: nothing happens). */
export interface Lease {
  release(): Promise<void>;
}

export interface LeasesOptions {
  /** Shared store: one holder per key across every instance. Without it, per process only. */
  redis?: Redis;
  /** Redis key prefix: the same prefix means the same leases across instances. */
  prefix: string;
  /**
   * How long a lease outlives its holder's last refresh: an instance that dies holding one frees it
   * after this. Refreshed every third of it while held.
   */
  ttlMs?: number;
  logger: Logger;
}

export interface Leases {
  /** The lease on `key`, or undefined when someone else holds it. */
  acquire(key: string): Promise<Lease | undefined>;
}

// Only the holder (the token it wrote) may extend or delete its lease: one that lapsed and was taken
// by another holder is left alone.
const REFRESH =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0";
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/**
 * Exclusive, expiring leases on keys (e.g. one running export per tenant): SET NX PX in Redis, kept
 * alive while held and deleted on release. Like the rate limiter, an outage of Redis does not take
 * the feature down: meanwhile the leases live in this process (one holder per key per instance).
 */
export function createLeases(options: LeasesOptions): Leases {
  const ttlMs = options.ttlMs ?? 15_000;
  const { redis, prefix, logger } = options;
  const local = new Set<string>();
  let outage = false;

  function localLease(key: string): Lease | undefined {
    if (local.has(key)) return undefined;
    local.add(key);
    let held = true;
    return {
      async release() {
        if (held) local.delete(key);
        held = false;
      },
    };
  }

  function redisLease(client: Redis, key: string, token: string): Lease {
    const refresh = setInterval(
      () => {
        client.eval(REFRESH, 1, key, token, String(ttlMs)).catch(() => undefined); // lapses after ttlMs at worst
      },
      Math.max(1, Math.floor(ttlMs / 3)),
    );
    refresh.unref();
    let held = true;
    return {
      async release() {
        if (!held) return;
        held = false;
        clearInterval(refresh);
        // Not deleted (Redis away): it lapses after ttlMs.
        await client.eval(RELEASE, 1, key, token).catch(() => undefined);
      },
    };
  }

  return {
    async acquire(name: string) {
      // A lease taken here during an outage still counts once Redis is back.
      if (!redis || local.has(name)) return localLease(name);
      const key = prefix + name;
      const token = randomUUID();
      try {
        const set = await redis.set(key, token, 'PX', ttlMs, 'NX');
        if (outage) {
          outage = false;
          logger.info('lease store recovered; leases are shared across instances again');
        }
        return set === 'OK' ? redisLease(redis, key, token) : undefined;
      } catch (error) {
        // One log line per outage, not one per request.
        if (!outage) {
          outage = true;
          logger.error('lease store failed; leases hold per instance until it is back', {
            error: error instanceof Error ? error.message : String(error),
          });
        }
        return localLease(name);
      }
    },
  };
}
