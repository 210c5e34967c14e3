import request from 'supertest';
import { createStandInReplica, READ_REPLICA_ROLE, type StandInReplica } from '@msp/testkit';
import { MIGRATIONS_DIR } from '../src/db';
import { api, type Api } from './support/api';
import { startDesk, type TestDesk } from './support/desk';
import { BASE, bearer, newTenant } from './support/helpdesk';

/*
 * DATABASE_READ_URL: the lists (with their totals) and the time export read the replica; a write,
 * its answer and a single resource read the primary. The replica here never receives the primary's
 * writes (createStandInReplica) and refuses writes of its own, so what a read shows tells where it went.
 */

let replica: StandInReplica;
let desk: TestDesk;
let http_: Api;

beforeAll(async () => {
  replica = await createStandInReplica(MIGRATIONS_DIR);
  desk = await startDesk({ readUrl: replica.url });
  http_ = api(desk);
});
afterAll(async () => {
  await desk?.close();
  await replica?.drop();
});

test(
  'When a client, a technician, a ticket with a comment and a time entry are created, then each POST answers the ' +
    'stored row and GET by id finds it, while no list read on the replica shows them yet, nor the time export',
  async () => {
    const caller = await newTenant(desk);
    const auth = bearer(caller.token);
    const post = (path: string, body: object) => http_.post(`${BASE}${path}`).set(auth).send(body);

    const client = await post('/clients', { name: 'Acme' });
    const user = await post('/users', { name: 'Ann', email: `ann.${caller.tenant}@example.com` });
    const ticket = await post('/tickets', { title: 'Printer jams', client_id: client.body.id });
    const comment = await post(`/tickets/${ticket.body.id}/comments`, { body: 'Paper tray checked.' });
    const entry = await post(`/tickets/${ticket.body.id}/time-entries`, {
      user_id: user.body.id,
      minutes: 30,
      date: '2026-11-03',
      billable: true,
    });

    expect([client.status, user.status, ticket.status, comment.status, entry.status]).toEqual([
      201, 201, 201, 201, 201,
    ]);
    expect(client.body).toMatchObject({ name: 'Acme' });
    expect(ticket.body).toMatchObject({ title: 'Printer jams', client_id: client.body.id });
    expect(entry.body).toMatchObject({ minutes: 30, ticket_id: ticket.body.id });
    for (const path of [`/clients/${client.body.id}`, `/users/${user.body.id}`, `/tickets/${ticket.body.id}`]) {
      expect({ path, status: (await http_.get(`${BASE}${path}`).set(auth)).status }).toEqual({ path, status: 200 });
    }
    for (const path of [
      '/clients',
      '/users',
      '/tickets',
      '/tickets?status=open',
      `/tickets/${ticket.body.id}/comments`,
      `/tickets/${ticket.body.id}/time-entries`,
      '/time-entries',
    ]) {
      const list = await http_.get(`${BASE}${path}`).set(auth);
      expect({ path, status: list.status, data: list.body.data, total: list.body.pagination?.total }).toEqual({
        path,
        status: 200,
        data: [],
        total: 0,
      });
    }
    const exported = await request(desk.app).get(`${BASE}/exports/time?period=2026-11&format=csv`).set(auth);
    expect(exported.status).toBe(200);
    expect(exported.text.trim().split('\r\n')).toHaveLength(1);
    expect(await desk.db.ticket.count({ where: { tenantId: caller.tenantId } })).toBe(1);
  },
);

test(
  'When desk runs with a replica, then its reads are connected there as the ' +
    'read-only role, and /readyz reports the replica beside the database',
  async () => {
    const caller = await newTenant(desk);
    expect((await http_.get(`${BASE}/tickets`).set(bearer(caller.token))).status).toBe(200);

    const [row] = await desk.db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND usename = $2`,
      replica.name,
      READ_REPLICA_ROLE,
    );
    expect(Number(row!.n)).toBeGreaterThan(0);
    const ready = await request(desk.app).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { database: 'ok', database_reads: 'ok' } });
  },
);
