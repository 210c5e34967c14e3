import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { redisIdempotencyStore, type IdempotencyStore } from '../src';
import { kitApp } from './support';

const AUTH = (client = 'alice') => ({ Authorization: `Bearer ${client}:read:things` });
const post = (app: Parameters<typeof request>[0], key: string | undefined, body: object, client = 'alice') => {
  const call = request(app).post('/api/v1/things').set(AUTH(client));
  return (key === undefined ? call : call.set('Idempotency-Key', key)).send(body);
};

describe('Idempotency-Key on a POST that creates', () => {
  test(
    'When the same key comes with the same body, then the first response is answered ' +
      'again with Idempotent-Replayed and nothing is created twice',
    async () => {
      const kit = kitApp();
      const key = `"${randomUUID()}"`;
      const first = await post(kit.app, key, { name: 'a', size: 2 });
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      // The same JSON with its keys in another order is the same request.
      const again = await post(kit.app, key, { size: 2, name: 'a' });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['location']).toBe(first.headers['location']);
      expect(again.body).toEqual(first.body);
      expect(kit.created()).toBe(1);
    },
  );

  test('When the same key comes with another body, then 422 and nothing is created', async () => {
    const kit = kitApp();
    const key = randomUUID();
    expect((await post(kit.app, key, { name: 'a' })).status).toBe(201);
    const other = await post(kit.app, key, { name: 'b' });
    expect(other.status).toBe(422);
    expect(other.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(other.body.type).toBe('urn:msp:problem:idempotency-key-reused');
    expect(kit.created()).toBe(1);
  });

  test('When two requests with one key arrive at once, then one creates and the other is 409 while the first runs', async () => {
    const kit = kitApp({ createDelayMs: 300 });
    const key = randomUUID();
    const [a, b] = await Promise.all([post(kit.app, key, { name: 'a' }), post(kit.app, key, { name: 'a' })]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const conflict = a.status === 409 ? a : b;
    expect(conflict.body.type).toBe('urn:msp:problem:idempotency-key-in-use');
    expect(conflict.headers['retry-after']).toBe('1');
    expect(kit.created()).toBe(1);
    // Once it has finished, the key replays.
    const later = await post(kit.app, key, { name: 'a' });
    expect(later.status).toBe(201);
    expect(later.headers['idempotent-replayed']).toBe('true');
  });

  test('When another client uses the same key, or no key is sent, then each request creates', async () => {
    const kit = kitApp();
    const key = randomUUID();
    expect((await post(kit.app, key, { name: 'a' }, 'alice')).status).toBe(201);
    const bob = await post(kit.app, key, { name: 'a' }, 'bob');
    expect(bob.status).toBe(201);
    expect(bob.headers['idempotent-replayed']).toBeUndefined();
    await post(kit.app, undefined, { name: 'a' });
    await post(kit.app, undefined, { name: 'a' });
    expect(kit.created()).toBe(4);
  });

  test('When the request is refused (400), then the key is not used up: the corrected request creates', async () => {
    const kit = kitApp();
    const key = randomUUID();
    expect((await post(kit.app, key, { name: '' })).status).toBe(400);
    expect((await post(kit.app, key, { name: 'fixed' })).status).toBe(201);
    expect(kit.created()).toBe(1);
  });

  test('When the key is not 1–255 visible characters, then 400 names the header and nothing is created', async () => {
    const kit = kitApp();
    for (const bad of ['x'.repeat(256), '""', 'a b']) {
      const response = await post(kit.app, bad, { name: 'a' });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
    }
    expect(kit.created()).toBe(0);
  });

  test('When two instances share Redis, then a key used at one replays at the other', async () => {
    const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      const one = kitApp({ redis });
      const two = kitApp({ redis });
      const key = randomUUID();
      const first = await post(one.app, key, { name: 'a' });
      expect(first.status).toBe(201);
      const replayed = await post(two.app, key, { name: 'a' });
      expect(replayed.status).toBe(201);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      expect(replayed.body).toEqual(first.body);
      expect(one.created() + two.created()).toBe(1);
      expect((await post(two.app, key, { name: 'other' })).status).toBe(422);
    } finally {
      redis.disconnect();
    }
  });

  test(
    'When the handler runs longer than a claim lives unrenewed, then the claim is kept ' +
      'alive: a retry meanwhile is 409 and nothing is created twice',
    async () => {
      const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
      try {
        // Claims of 150 ms, a handler of 900 ms: without renewal the claim lapses long before it ends.
        const store = redisIdempotencyStore(redis, `idem:test:${randomUUID()}:`, { runningTtlMs: 150 });
        const one = kitApp({ redis, idempotencyStore: store, createDelayMs: 900 });
        const two = kitApp({ redis, idempotencyStore: store, createDelayMs: 900 });
        const key = randomUUID();
        const first = post(one.app, key, { name: 'a' }).then((response) => response);
        await new Promise((resolve) => setTimeout(resolve, 450));
        const retry = await post(two.app, key, { name: 'a' });
        expect(retry.status).toBe(409);
        expect(retry.body.type).toBe('urn:msp:problem:idempotency-key-in-use');
        expect((await first).status).toBe(201);
        expect(one.created() + two.created()).toBe(1);
      } finally {
        redis.disconnect();
      }
    },
  );

  test('When the answer reaches the client, then it is already stored: a retry the moment it arrives is replayed, not 409', async () => {
    const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      // A store slow to write the answer (a busy Redis): the answer must still not go out before it is stored.
      const redisStore = redisIdempotencyStore(redis, `idem:test:${randomUUID()}:`);
      const slow: IdempotencyStore = {
        ...redisStore,
        async complete(...args) {
          await new Promise((resolve) => setTimeout(resolve, 300));
          await redisStore.complete(...args);
        },
      };
      const kit = kitApp({ redis, idempotencyStore: slow });
      const key = randomUUID();
      const first = await post(kit.app, key, { name: 'a' });
      expect(first.status).toBe(201);
      const retry = await post(kit.app, key, { name: 'a' });
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.body).toEqual(first.body);
      expect(kit.created()).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  test(
    'When the change committed but the connection was lost on the way back, then the answer is the change ' +
      '(201 with its Location) and a retry replays it',
    async () => {
      const kit = kitApp({ failAfterCommit: true });
      const key = randomUUID();
      const first = await post(kit.app, key, { name: 'a' });
      expect(first.status).toBe(201);
      expect(first.headers['location']).toBe('/api/v1/things/1');
      expect(first.body).toEqual({ name: 'a', number: 1 });

      const again = await post(kit.app, key, { name: 'a' });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['location']).toBe('/api/v1/things/1');
      expect(again.body).toEqual(first.body);
      expect(kit.created()).toBe(1);
    },
  );

  test.each(['memory', 'Redis'])(
    'When whether the change committed cannot be told (the database away), then 503, and the key stays ' +
      'claimed (%s store): the retry asks again, finds the change and replays it rather than running it twice',
    async (storeKind) => {
      const redis =
        storeKind === 'Redis' ? new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379') : undefined;
      try {
        const idempotencyStore = redis ? redisIdempotencyStore(redis, `idem:test:${randomUUID()}:`) : undefined;
        const kit = kitApp({ redis, idempotencyStore, failAfterCommit: true, effectLookupFailures: 1 });
        const key = randomUUID();
        const first = await post(kit.app, key, { name: 'a' });
        expect(first.status).toBe(503);
        expect(first.headers['content-type']).toMatch(/^application\/problem\+json/);

        const again = await post(kit.app, key, { name: 'a' });
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.headers['location']).toBe('/api/v1/things/1');
        expect(again.body).toEqual({ name: 'a', number: 1 });
        expect(kit.created()).toBe(1);
      } finally {
        redis?.disconnect();
      }
    },
  );

  test('When the OpenAPI document is read, then every creating POST names the Idempotency-Key header and its 409 and 422', async () => {
    const kit = kitApp();
    const operation = kit.openapi.paths['/things']!['post'] as {
      parameters: { name: string; in: string }[];
      responses: Record<string, unknown>;
    };
    expect(operation.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['201', '409', '422']));
  });
});

describe('Idempotency-Key on a POST that acts and answers 200 (idempotent: true)', () => {
  const bump = (app: Parameters<typeof request>[0], key: string | undefined) => {
    const call = request(app).post('/api/v1/things/1/bump').set(AUTH());
    return (key === undefined ? call : call.set('Idempotency-Key', key)).send({});
  };

  test('When the same key comes again, then the first answer is replayed and the action ran once; without a key it runs each time', async () => {
    const kit = kitApp();
    const key = randomUUID();
    const first = await bump(kit.app, key);
    expect(first.status).toBe(200);
    expect(first.body.version).toBe(2);
    const again = await bump(kit.app, key);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await bump(kit.app, undefined)).body.version).toBe(3);
    const operation = kit.openapi.paths['/things/{id}/bump']!['post'] as { parameters: { name: string; in: string }[] };
    expect(operation.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
  });
});
