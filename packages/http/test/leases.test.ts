import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLeases, createLogger } from '../src';

const logger = createLogger({ service: 'kit', level: 'error' });
let redis: [Redis, Redis];

beforeAll(() => {
  const url = process.env.TEST_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  redis = [new Redis(url), new Redis(url)];
});
afterAll(async () => {
  for (const client of redis) await client.quit();
});

const prefix = () => `t:leases:${randomBytes(6).toString('hex')}:`;

describe('createLeases', () => {
  test('When two instances sharing Redis ask for the same key, then only one holds it until it releases it', async () => {
    const shared = prefix();
    const [one, two] = redis.map((client) => createLeases({ redis: client, prefix: shared, logger }));

    const held = await one!.acquire('tenant-a');
    expect(held).toBeDefined();
    expect(await two!.acquire('tenant-a')).toBeUndefined();
    expect(await two!.acquire('tenant-b')).toBeDefined();

    await held!.release();
    expect(await two!.acquire('tenant-a')).toBeDefined();
  });

  test('When a lease is held longer than its ttl, then it is refreshed and still excludes others', async () => {
    const shared = prefix();
    const [one, two] = redis.map((client) => createLeases({ redis: client, prefix: shared, ttlMs: 300, logger }));
    const held = await one!.acquire('tenant-a');

    await new Promise((resolve) => setTimeout(resolve, 1000));

    expect(await two!.acquire('tenant-a')).toBeUndefined();
    await held!.release();
    expect(await redis[0].exists(`${shared}tenant-a`)).toBe(0);
  });

  test('When the holder of a lease is gone without releasing it, then the lease lapses after its ttl', async () => {
    const shared = prefix();
    // What an instance that died holding it leaves behind: a key nobody refreshes.
    await redis[0].set(`${shared}tenant-a`, 'gone', 'PX', 300);
    const leases = createLeases({ redis: redis[1], prefix: shared, ttlMs: 300, logger });
    expect(await leases.acquire('tenant-a')).toBeUndefined();

    await new Promise((resolve) => setTimeout(resolve, 400));

    expect(await leases.acquire('tenant-a')).toBeDefined();
  });

  test('When there is no Redis, then a key has one holder per process until it releases it', async () => {
    const leases = createLeases({ prefix: prefix(), logger });
    const held = await leases.acquire('tenant-a');
    expect(held).toBeDefined();
    expect(await leases.acquire('tenant-a')).toBeUndefined();
    await held!.release();
    await held!.release(); // twice: nothing more happens
    const next = await leases.acquire('tenant-a');
    expect(next).toBeDefined();
    expect(await leases.acquire('tenant-a')).toBeUndefined();
  });
});
