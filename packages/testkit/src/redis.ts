import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedis, type Logger } from '@msp/http';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix of its own for each test, so tests never share rate-limit counters. */
export function uniquePrefix(label = 'test'): string {
  return `t:${label}:${randomBytes(6).toString('hex')}:`;
}

/**
 * The Redis client production uses (createRedis: no offline queue, one write per turn), connected:
 * without an offline queue a command sent before the connection is up fails, and the rate
 * limiter would fail open for a test's first requests.
 */
export async function connectedRedis(logger: Logger, url = TEST_REDIS_URL): Promise<Redis> {
  const redis = createRedis(url, logger);
  if (redis.status !== 'ready') await once(redis, 'ready');
  return redis;
}
