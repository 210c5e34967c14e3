import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import request from 'supertest';
import { createLogger, createRedis } from '../src';
import { kitApp } from './support';

/*
 * Redis faults against a real Redis server: a redis-server of the test's own on a free port (the
 * machine's Redis serves the other tests and must not be stopped), killed under load and started
 * again on the same port.
 */

const AUTH = (client: string) => ({ Authorization: `Bearer ${client}:read:things` });

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i += 1) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (up) return child;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('redis-server did not start');
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

const until = async (condition: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not reached');
};

describe('Idempotency-Key when Redis is unreachable', () => {
  test(
    'When Redis is down, then a create with a key is 503 with Retry-After and runs nothing, ' +
      'one without a key is served, and the key works once Redis is back',
    async () => {
      const port = await freePort();
      const redis = createRedis(`redis://127.0.0.1:${port}`, createLogger({ service: 'kit', level: 'error' }));
      const kit = kitApp({ redis, prefix: `rl:idem:${port}:` });
      const post = (key?: string) => {
        const call = request(kit.app).post('/api/v1/things').set(AUTH('alice'));
        return (key ? call.set('Idempotency-Key', key) : call).send({ name: 'a' });
      };
      let server: ChildProcess | undefined;
      try {
        const refused = await post('k-1');
        expect(refused.status).toBe(503);
        expect(refused.headers['retry-after']).toBe('1');
        expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(kit.created()).toBe(0);
        expect((await post()).status).toBe(201);
        expect(kit.created()).toBe(1);

        server = await startRedisServer(port);
        await until(async () => redis.status === 'ready');
        const first = await post('k-1');
        expect(first.status).toBe(201);
        const replay = await post('k-1');
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(kit.created()).toBe(2);
      } finally {
        redis.disconnect();
        if (server) await stop(server);
      }
    },
  );
});

describe('rate limiter when Redis is unreachable', () => {
  test('When the Redis server is down from the start, then requests are still served (fail open) and the failure is logged once', async () => {
    // Nothing listens on port 1: every command fails at once.
    const redis = createRedis('redis://127.0.0.1:1', createLogger({ service: 'kit', level: 'error' }));
    const { app, logs } = kitApp({ redis, limit: 2 });
    try {
      for (let i = 0; i < 4; i += 1) {
        const response = await request(app).get('/api/v1/things').set(AUTH('alice'));
        expect(response.status).toBe(200);
      }
      expect(logs.filter((line) => String(line.message).startsWith('rate limiter store failed'))).toHaveLength(1);
    } finally {
      redis.disconnect();
    }
  });

  test(
    'When Redis stops under load and comes back, then every request is served meanwhile, the outage is logged ' +
      'once, /readyz says degraded but stays 200, and the limit applies again without a restart',
    async () => {
      const port = await freePort();
      let server = await startRedisServer(port);
      const redis = createRedis(`redis://127.0.0.1:${port}`, createLogger({ service: 'kit', level: 'error' }));
      // The limiter loads its script when it is made: with Redis connected, as at a service's start.
      await until(async () => redis.status === 'ready');
      const { app, logs } = kitApp({ redis, limit: 5, prefix: `rl:outage:${port}:` });
      try {
        // Before: the limit holds.
        const before = [];
        for (let i = 0; i < 6; i += 1)
          before.push((await request(app).get('/api/v1/things').set(AUTH('before'))).status);
        expect(before).toEqual([200, 200, 200, 200, 200, 429]);

        // Under load (one client per request, so the limit is not what answers): Redis is killed.
        const statuses: number[] = [];
        let n = 0;
        const load = async () => {
          for (let i = 0; i < 40; i += 1)
            statuses.push(
              (
                await request(app)
                  .get('/api/v1/things')
                  .set(AUTH(`load${n++}`))
              ).status,
            );
        };
        const running = Promise.all([load(), load(), load()]);
        await new Promise((resolve) => setTimeout(resolve, 50));
        await stop(server);
        await running;
        for (let i = 0; i < 10; i += 1)
          statuses.push((await request(app).get('/api/v1/things').set(AUTH('during'))).status);
        expect(statuses.every((status) => status === 200)).toBe(true);
        expect(logs.filter((line) => String(line.message).startsWith('rate limiter store failed'))).toHaveLength(1);

        const ready = await request(app).get('/readyz');
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({ status: 'degraded', checks: { redis: 'failing' } });

        // Redis back on the same port: the service reconnects by itself and limits again.
        server = await startRedisServer(port);
        await until(async () => (await request(app).get('/readyz')).body.status === 'ready');
        const after = [];
        for (let i = 0; i < 6; i += 1) after.push((await request(app).get('/api/v1/things').set(AUTH('after'))).status);
        expect(after).toEqual([200, 200, 200, 200, 200, 429]);
        expect(logs.some((line) => line.message === 'rate limiter store recovered; limits apply again')).toBe(true);
      } finally {
        redis.disconnect();
        await stop(server);
      }
    },
    60_000,
  );

  test('When Redis is down when the service starts and comes up later, then requests are served meanwhile and the limit applies once it is up', async () => {
    const port = await freePort();
    const redis = createRedis(`redis://127.0.0.1:${port}`, createLogger({ service: 'kit', level: 'error' }));
    const { app, logs } = kitApp({ redis, limit: 3, prefix: `rl:late:${port}:` });
    let server: ChildProcess | undefined;
    try {
      for (let i = 0; i < 5; i += 1)
        expect((await request(app).get('/api/v1/things').set(AUTH('early'))).status).toBe(200);
      server = await startRedisServer(port);
      await until(async () => (await request(app).get('/readyz')).body.status === 'ready');
      const after = [];
      for (let i = 0; i < 4; i += 1) after.push((await request(app).get('/api/v1/things').set(AUTH('late'))).status);
      expect(after).toEqual([200, 200, 200, 429]);
      expect(logs.filter((line) => String(line.message).startsWith('rate limiter store failed'))).toHaveLength(1);
    } finally {
      redis.disconnect();
      if (server) await stop(server);
    }
  }, 60_000);
});
