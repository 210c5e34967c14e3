import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import request from 'supertest';
import { waitUntil } from '@msp/testkit';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createClient, newTenant, startHelpdesk } from './support/helpdesk';

let desk: TestDesk;

beforeAll(async () => ({ desk } = await startHelpdesk()));
afterAll(() => desk.close());

describe('the database pool', () => {
  test(
    'When every connection of the pool stays busy past DATABASE_POOL_ACQUIRE_TIMEOUT_MS, then the ' +
      'next request answers 503 with Retry-After, and the held ones still finish',
    async () => {
      const caller = await newTenant(desk);
      const client = await createClient(request(desk.app), caller.token);
      // A replica whose pool has two connections and waits 300 ms for one.
      const replica = http.createServer(await desk.replica({}, { pool: { max: 2, acquireTimeoutMs: 300 } }));
      await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(replica.address() as AddressInfo).port}`;
      const read = () => request(url).get(`${BASE}/clients/${client.id}`).set(bearer(caller.token));
      const locker = new Client({ connectionString: desk.databaseUrl });
      const admin = new Client({ connectionString: desk.databaseUrl });
      await Promise.all([locker.connect(), admin.connect()]);
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE clients IN ACCESS EXCLUSIVE MODE');
        const held = [read(), read()].map((pending) => pending.then((response) => response));
        await waitUntil(async () => {
          const { rows } = await admin.query(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1 AND query LIKE '%clients%'`,
            [(locker as unknown as { processID: number }).processID],
          );
          return rows.length === 2;
        }, 'both connections of the replica wait for the lock');

        const busy = await read();

        expect(busy.status).toBe(503);
        expect(busy.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(busy.headers['retry-after']).toBe('5');
        expect(busy.body).toMatchObject({ type: 'urn:msp:problem:database-unavailable', status: 503 });
        await locker.query('ROLLBACK');
        expect((await Promise.all(held)).map((response) => response.status)).toEqual([200, 200]);
        expect((await read()).status).toBe(200);
      } finally {
        await locker.query('ROLLBACK').catch(() => undefined);
        await Promise.all([locker.end(), admin.end()]);
        replica.closeAllConnections();
        await new Promise((resolve) => replica.close(resolve));
      }
    },
  );

  test(
    "When a write's transaction gets no connection within its wait (every one held), then " +
      'it answers 503 with Retry-After, not a 500, and stores nothing',
    async () => {
      const caller = await newTenant(desk);
      const client = await createClient(request(desk.app), caller.token);
      // A pool that waits longer for a connection than a transaction waits to start (Prisma's 2 s).
      const replica = http.createServer(await desk.replica({}, { pool: { max: 2, acquireTimeoutMs: 8_000 } }));
      await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(replica.address() as AddressInfo).port}`;
      const locker = new Client({ connectionString: desk.databaseUrl });
      const admin = new Client({ connectionString: desk.databaseUrl });
      await Promise.all([locker.connect(), admin.connect()]);
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE clients IN ACCESS EXCLUSIVE MODE');
        const held = [0, 1].map(() =>
          request(url)
            .get(`${BASE}/clients/${client.id}`)
            .set(bearer(caller.token))
            .then((response) => response),
        );
        await waitUntil(async () => {
          const { rows } = await admin.query(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1 AND query LIKE '%clients%'`,
            [(locker as unknown as { processID: number }).processID],
          );
          return rows.length === 2;
        }, 'both connections of the replica wait for the lock');

        const write = await request(url)
          .post(`${BASE}/clients`)
          .set(bearer(caller.token))
          .send({ name: 'Never stored' });

        expect(write.status).toBe(503);
        expect(write.headers['retry-after']).toBe('5');
        expect(write.body).toMatchObject({ status: 503, type: 'urn:msp:problem:database-unavailable' });
        await locker.query('ROLLBACK');
        expect((await Promise.all(held)).map((response) => response.status)).toEqual([200, 200]);
        expect(await desk.db.client.count({ where: { name: 'Never stored' } })).toBe(0);
      } finally {
        await locker.query('ROLLBACK').catch(() => undefined);
        await Promise.all([locker.end(), admin.end()]);
        replica.closeAllConnections();
        await new Promise((resolve) => replica.close(resolve));
      }
    },
  );
});
