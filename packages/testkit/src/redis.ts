import { randomBytes } from 'node:crypto';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix of its own for each test, so tests never share rate-limit counters. */
export function uniquePrefix(label = 'test'): string {
  return `t:${label}:${randomBytes(6).toString('hex')}:`;
}
