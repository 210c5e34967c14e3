import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createLogger, createRedis } from '../src';

/*
 * createRedis sends the commands of one turn of the event loop in one write (its socket corked
 * until setImmediate), against the machine's Redis: every command still gets its own answer, in
 * order, and a connection Redis cut is replaced and corked afresh.
 */

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const turnEnded = () => new Promise((resolve) => setImmediate(resolve));

async function connected(): Promise<Redis> {
  const redis = createRedis(REDIS_URL, createLogger({ service: 'kit', level: 'error' }));
  if (redis.status !== 'ready') await once(redis, 'ready');
  return redis;
}

describe('the Redis connection of a service', () => {
  let redis: Redis;
  const key = `t:writes:${randomBytes(6).toString('hex')}`;

  beforeEach(async () => {
    redis = await connected();
  });
  afterEach(async () => {
    await redis.del(key, `${key}:list`);
    redis.disconnect();
  });

  test('When 50 commands are sent in one turn, then they leave in one write at its end and each gets its own answer, in order', async () => {
    const answers = Array.from({ length: 50 }, () => redis.incr(key));
    // Held back until the turn's I/O is served: one corked socket, nothing written yet.
    expect(redis.stream.writableCorked).toBe(1);
    expect(redis.stream.writableLength).toBeGreaterThan(0);
    await turnEnded();
    expect(redis.stream.writableCorked).toBe(0);
    expect(await Promise.all(answers)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(await redis.get(key)).toBe('50');
  });

  test('When commands are sent in turns one after the other, then each turn is written on its own and nothing waits for a later turn', async () => {
    for (let turn = 1; turn <= 3; turn += 1) {
      const pushed = redis.rpush(`${key}:list`, `turn-${turn}`);
      expect(redis.stream.writableCorked).toBe(1);
      expect(await pushed).toBe(turn);
      expect(redis.stream.writableCorked).toBe(0);
    }
    expect(await redis.lrange(`${key}:list`, 0, -1)).toEqual(['turn-1', 'turn-2', 'turn-3']);
  });

  test('When Redis cuts the connection, then the commands after the reconnection are corked on the new socket and answered', async () => {
    const before = redis.stream;
    const id = await redis.client('ID');
    const killer = await connected();
    try {
      await killer.client('KILL', 'ID', String(id));
    } finally {
      killer.disconnect();
    }
    await once(redis, 'ready');
    expect(redis.stream).not.toBe(before);
    const answer = redis.incr(key);
    expect(redis.stream.writableCorked).toBe(1);
    expect(await answer).toBe(1);
  });
});
