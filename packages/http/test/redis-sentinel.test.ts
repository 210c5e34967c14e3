import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createLogger, createRedis } from '../src';
import { kitApp } from './support';

/*
 * A master, a replica and a Sentinel of the machine's redis-server, on loopback ports of their
 * own: the service's Redis client follows the Sentinel's failover, and an Idempotency-Key answered
 * before the master was SIGKILLed is replayed by the promoted replica, never run twice.
 */

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const AUTH = { Authorization: 'Bearer alice:read:things' };

describe('a service whose Redis is behind Sentinels', () => {
  let dir: string;
  const processes = new Map<string, ChildProcess>();
  let ports: { master: number; replica: number; sentinel: number };

  const promoted = () =>
    until('the replica promoted', async () => {
      const [, port] = (await ask(ports.sentinel, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'kit')) as [string, string];
      return Number(port) === ports.replica || undefined;
    });

  function start(name: string, args: string[]) {
    const child = spawn('redis-server', args, { cwd: dir, stdio: 'ignore' });
    processes.set(name, child);
  }
  const ask = async (port: number, ...command: string[]) => {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      await client.connect();
      return await client.call(command[0]!, ...command.slice(1));
    } finally {
      client.disconnect();
    }
  };

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'msp-sentinel-'));
    ports = { master: await freePort(), replica: await freePort(), sentinel: await freePort() };
    const server = (port: number) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--dbfilename',
      `${port}.rdb`,
    ];
    start('master', server(ports.master));
    start('replica', [...server(ports.replica), '--replicaof', '127.0.0.1', String(ports.master)]);
    const sentinelConf = path.join(dir, 'sentinel.conf');
    writeFileSync(
      sentinelConf,
      [
        `port ${ports.sentinel}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor kit 127.0.0.1 ${ports.master} 1`,
        'sentinel down-after-milliseconds kit 1000',
        'sentinel failover-timeout kit 5000',
        '',
      ].join('\n'),
    );
    start('sentinel', [sentinelConf, '--sentinel']);
    await until(
      'the replica in sync',
      async () =>
        ((await ask(ports.replica, 'INFO', 'replication')) as string).includes('master_link_status:up') || undefined,
    );
    // A failover needs a replica the Sentinel knows of (it learns them from the master's INFO).
    await until(
      'the sentinel knowing the replica',
      async () => ((await ask(ports.sentinel, 'SENTINEL', 'REPLICAS', 'kit')) as unknown[]).length > 0 || undefined,
    );
  }, 60_000);

  afterEach(() => {
    for (const child of processes.values()) child.kill('SIGKILL');
    processes.clear();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    'When the master is SIGKILLed after a key was answered, then after the failover the ' +
      'same key is replayed, and new keys and the rate limit work again',
    async () => {
      const logger = createLogger({ service: 'kit', level: 'error' });
      const redis = createRedis({ sentinels: `127.0.0.1:${ports.sentinel}`, sentinelName: 'kit' }, logger);
      try {
        await until('the client ready', async () => (redis.status === 'ready' ? true : undefined));
        const kit = kitApp({ redis, prefix: `rl:${randomUUID()}:` });
        const key = randomUUID();
        const first = await request(kit.app)
          .post('/api/v1/things')
          .set(AUTH)
          .set('Idempotency-Key', key)
          .send({ name: 'before' });
        expect(first.status).toBe(201);
        const remainingBefore = Number(first.headers['x-ratelimit-remaining']);

        // Killed the moment the answer is out: only what a replica had acknowledged survives.
        processes.get('master')!.kill('SIGKILL');
        await promoted();

        // Retried as integrators are told to: on 503 with the same key.
        const again = await until('a non-503 answer', async () => {
          const response = await request(kit.app)
            .post('/api/v1/things')
            .set(AUTH)
            .set('Idempotency-Key', key)
            .send({ name: 'before' });
          return response.status === 503 ? undefined : response;
        });
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body).toEqual(first.body);
        expect(kit.created()).toBe(1);

        const fresh = await request(kit.app)
          .post('/api/v1/things')
          .set(AUTH)
          .set('Idempotency-Key', randomUUID())
          .send({ name: 'after' });
        expect(fresh.status).toBe(201);
        expect(kit.created()).toBe(2);
        // One counter, on the new master: it went on counting.
        expect(Number(fresh.headers['x-ratelimit-remaining'])).toBeLessThan(remainingBefore);
        expect(await redis.config('GET', 'port')).toEqual(['port', String(ports.replica)]);
      } finally {
        redis.disconnect();
      }
    },
    60_000,
  );

  test(
    'When the master dies before the replica has a stored answer, then the answer waits for ' +
      'the failover and a retry with its key is replayed, not run again',
    async () => {
      const logger = createLogger({ service: 'kit', level: 'error' });
      const redis = createRedis({ sentinels: `127.0.0.1:${ports.sentinel}`, sentinelName: 'kit' }, logger);
      const replica = processes.get('replica')!;
      try {
        await until('the client ready', async () => (redis.status === 'ready' ? true : undefined));
        const kit = kitApp({ redis, prefix: `rl:${randomUUID()}:` });
        const key = randomUUID();
        // The replica is cut off (stopped, its link closed by the master): what the master writes now
        // exists only there.
        replica.kill('SIGSTOP');
        await ask(ports.master, 'CLIENT', 'KILL', 'TYPE', 'replica');
        const pending = request(kit.app)
          .post('/api/v1/things')
          .set(AUTH)
          .set('Idempotency-Key', key)
          .send({ name: 'racing' });
        const answer = pending.then((response) => response);
        // The answer is stored on the master; the master dies before any replica has it.
        await until('the answer stored on the master', async () => {
          const keys = (await ask(ports.master, 'KEYS', 'idem:kit:*')) as string[];
          const values = await Promise.all(keys.map((name) => ask(ports.master, 'GET', name) as Promise<string>));
          return values.some((value) => value.includes('"state":"done"')) || undefined;
        });
        processes.get('master')!.kill('SIGKILL');
        replica.kill('SIGCONT');
        await promoted();

        const first = await answer;
        expect(first.status).toBe(201);
        const again = await until('a non-503 answer', async () => {
          const response = await request(kit.app)
            .post('/api/v1/things')
            .set(AUTH)
            .set('Idempotency-Key', key)
            .send({ name: 'racing' });
          return response.status === 503 ? undefined : response;
        });
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body).toEqual(first.body);
        expect(kit.created()).toBe(1);
      } finally {
        replica.kill('SIGCONT');
        redis.disconnect();
      }
    },
    60_000,
  );
});
