import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import request from 'supertest';
import { busyBackends, expectCutShortWhenIdle, stalledReader, waitUntil } from '@msp/testkit';
import { TIME_EXPORT_APPLICATION_NAME } from '../src/time-entries/time-export.repository';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import {
  BASE,
  bearer,
  createClient,
  createTicket,
  createUser,
  newTenant,
  snapshot,
  startHelpdesk,
} from './support/helpdesk';

const EXPORT = `${BASE}/exports/time`;
const HEADER =
  'client_id,client_name,ticket_number,ticket_title,user_id,user_name,billable_minutes,hours,currency,hourly_rate,amount';

let desk: TestDesk;
let http_: Api;

beforeAll(async () => ({ desk, http: http_ } = await startHelpdesk()));
afterAll(() => desk.close());

type Tenant = Awaited<ReturnType<typeof newTenant>>;

const exportOf = (caller: Tenant, query: string) =>
  request(desk.app).get(`${EXPORT}?${query}`).set(bearer(caller.token));

async function record(
  caller: Tenant,
  ticketId: string,
  user_id: string,
  minutes: number,
  date: string,
  billable = true,
) {
  await http_
    .post(`${BASE}/tickets/${ticketId}/time-entries`)
    .set(bearer(caller.token))
    .send({ user_id, minutes, date, billable })
    .expect(201);
}

describe('GET /exports/time', () => {
  test(
    'When a month is exported, then each client × ticket × technician has one row of its ' +
      'billable minutes and hours, ordered by client, ticket number and technician',
    async () => {
      const caller = await newTenant(desk);
      const beta = await createClient(http_, caller.token, { name: 'Beta Bau' });
      const acme = await createClient(http_, caller.token, { name: 'Acme, Inc.' });
      const ann = await createUser(http_, caller.token, { name: 'Ann' });
      const bob = await createUser(http_, caller.token, { name: 'Bob "the fixer"' });
      const betaTicket = await createTicket(http_, caller.token, { client_id: beta.id, title: 'Server room' });
      const acmeFirst = await createTicket(http_, caller.token, { client_id: acme.id, title: 'Printer jams' });
      const acmeSecond = await createTicket(http_, caller.token, { client_id: acme.id, title: 'VPN' });
      await record(caller, acmeSecond.id, bob.id, 20, '2026-11-01');
      await record(caller, acmeSecond.id, ann.id, 60, '2026-11-30');
      await record(caller, acmeSecond.id, ann.id, 20, '2026-11-12');
      await record(caller, acmeFirst.id, bob.id, 45, '2026-11-03');
      await record(caller, acmeFirst.id, bob.id, 30, '2026-11-04', false); // not billable: left out
      await record(caller, betaTicket.id, ann.id, 1, '2026-11-20');
      await record(caller, betaTicket.id, bob.id, 600, '2026-10-31'); // October
      await record(caller, betaTicket.id, bob.id, 600, '2026-12-01'); // December
      // Another tenant's time in the same month stays out.
      const other = await newTenant(desk);
      const theirs = await createTicket(http_, other.token);
      await record(other, theirs.id, (await createUser(http_, other.token)).id, 99, '2026-11-10');

      const response = await exportOf(caller, 'period=2026-11&format=csv').expect(200);

      expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(response.headers['content-disposition']).toBe('attachment; filename="time-2026-11.csv"');
      expect(response.headers['transfer-encoding']).toBe('chunked');
      expect(response.text).toBe(
        [
          HEADER,
          `${acme.id},"Acme, Inc.",${acmeFirst.number},Printer jams,${bob.id},"Bob ""the fixer""",45,0.75,EUR,,`,
          `${acme.id},"Acme, Inc.",${acmeSecond.number},VPN,${ann.id},Ann,80,1.33,EUR,,`,
          `${acme.id},"Acme, Inc.",${acmeSecond.number},VPN,${bob.id},"Bob ""the fixer""",20,0.33,EUR,,`,
          `${beta.id},Beta Bau,${betaTicket.number},Server room,${ann.id},Ann,1,0.02,EUR,,`,
          '',
        ].join('\r\n'),
      );
    },
  );

  test('When names and titles start like spreadsheet formulas, then those cells are neutralised with a leading quote', async () => {
    const caller = await newTenant(desk);
    const client = await createClient(http_, caller.token, { name: '=HYPERLINK("http://evil.example","Click")' });
    const user = await createUser(http_, caller.token, { name: '@SUM(A1)' });
    const other = await createUser(http_, caller.token, { name: '-2+3' });
    const ticket = await createTicket(http_, caller.token, { client_id: client.id, title: "+cmd|' /C calc'!A0" });
    await record(caller, ticket.id, user.id, 30, '2026-11-10');
    await record(caller, ticket.id, other.id, 30, '2026-11-10');

    const response = await exportOf(caller, 'period=2026-11').expect(200);

    // (fast-csv quotes a field holding a `|` too: still RFC 4180, as in hr's payroll CSV.)
    expect(response.text.split('\r\n')).toEqual([
      HEADER,
      `${client.id},"'=HYPERLINK(""http://evil.example"",""Click"")",${ticket.number},"'+cmd|' /C calc'!A0",${other.id},'-2+3,30,0.50,EUR,,`,
      `${client.id},"'=HYPERLINK(""http://evil.example"",""Click"")",${ticket.number},"'+cmd|' /C calc'!A0",${user.id},'@SUM(A1),30,0.50,EUR,,`,
      '',
    ]);
  });

  test('When the month has no billable time, then the file is the header row alone; a technician deactivated since keeps their rows', async () => {
    const caller = await newTenant(desk);
    expect((await exportOf(caller, 'period=2026-11').expect(200)).text).toBe(`${HEADER}\r\n`);

    const ticket = await createTicket(http_, caller.token);
    const user = await createUser(http_, caller.token, { name: 'Leaver' });
    await record(caller, ticket.id, user.id, 90, '2026-11-10');
    await http_.delete(`${BASE}/users/${user.id}`).set(bearer(caller.token)).expect(204);
    expect((await exportOf(caller, 'period=2026-11').expect(200)).text).toContain(
      `,${user.id},Leaver,90,1.50,EUR,,\r\n`,
    );
  });

  test.each([
    ['no period', '', 'period'],
    ['a month 13', 'period=2026-13', 'period'],
    ['a month without its zero', 'period=2026-1', 'period'],
    ['a date as period', 'period=2026-11-01', 'period'],
    ['an unknown format', 'period=2026-11&format=xlsx', 'format'],
    ['the DATEV format (hr only)', 'period=2026-11&format=datev', 'format'],
    ['an unknown parameter', 'period=2026-11&client_id=x', 'client_id'],
  ])(
    'When the query has %s, then it answers 400 naming the parameter and changes nothing',
    async (_case, query, field) => {
      const caller = await newTenant(desk);
      const before = await snapshot(desk);
      const response = await http_.get(`${EXPORT}?${query}`).set(bearer(caller.token)).expect(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await snapshot(desk)).toEqual(before);
    },
  );

  test('When the token lacks read:tickets, then it answers 403; without a token 401', async () => {
    const client = await desk.createClient({ scopes: ['read:users'] });
    const response = await request(desk.app)
      .get(`${EXPORT}?period=2026-11`)
      .set(bearer(await desk.token(client)))
      .expect(403);
    expect(response.headers['www-authenticate']).toContain('scope="read:tickets"');
    await request(desk.app).get(`${EXPORT}?period=2026-11`).expect(401);
  });
});

/** The export's backends that are not idle in its pool: the ones still holding a query or cursor. */
const exportBackendsBusy = (admin: Client) => busyBackends(admin, TIME_EXPORT_APPLICATION_NAME);

describe('GET /exports/time, streamed', () => {
  const TICKETS = 6_000;
  let caller: Tenant;
  let admin: Client;
  let users: [string, string];

  beforeAll(async () => {
    caller = await newTenant(desk);
    const client = await createClient(http_, caller.token, { name: 'Big Client' });
    users = [
      (await createUser(http_, caller.token, { name: 'Ann' })).id,
      (await createUser(http_, caller.token, { name: 'Bob' })).id,
    ];
    // Two technicians on each of 6,000 tickets: ~1.2 MB of CSV, more than the socket buffers hold at once.
    await desk.db.$executeRaw`INSERT INTO tickets (tenant_id, number, title, client_id)
      SELECT ${caller.tenantId}::uuid, n, 'Ticket ' || n, ${client.id}::uuid FROM generate_series(1, ${TICKETS}::int) AS n`;
    await desk.db.$executeRaw`INSERT INTO time_entries (tenant_id, ticket_id, client_id, user_id, minutes, date)
      SELECT t.tenant_id, t.id, t.client_id, u.id, 75, '2026-10-15'
        FROM tickets t CROSS JOIN unnest(${users}::uuid[]) AS u(id) WHERE t.tenant_id = ${caller.tenantId}::uuid`;
    admin = new Client({ connectionString: desk.databaseUrl });
    await admin.connect();
  }, 60_000);
  afterAll(() => admin?.end());

  const busyExportBackends = () => exportBackendsBusy(admin);

  test('When the whole large month is read, then every ticket is in it once per technician, in ticket-number order', async () => {
    const response = await request(desk.url).get(`${EXPORT}?period=2026-10`).set(bearer(caller.token));

    expect(response.status).toBe(200);
    expect(response.headers['transfer-encoding']).toBe('chunked');
    const lines = response.text.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.length - 2).toBe(TICKETS * 2);
    expect(lines[1]).toMatch(new RegExp(`^[0-9a-f-]{36},Big Client,1,Ticket 1,${users[0]},Ann,75,1\\.25,EUR,,$`));
    expect(lines[2]).toMatch(new RegExp(`,Big Client,1,Ticket 1,${users[1]},Bob,75,1\\.25,EUR,,$`));
    expect(lines.at(-2)).toMatch(
      new RegExp(`,Big Client,${TICKETS},Ticket ${TICKETS},${users[1]},Bob,75,1\\.25,EUR,,$`),
    );
    await waitUntil(async () => (await busyExportBackends()).length === 0, 'the export connection is back in its pool');
  });

  test('When the client stops reading and then disconnects mid-file, then the query and its cursor are gone from the database', async () => {
    const received: Buffer[] = [];
    const req = http.get(`${desk.url}${EXPORT}?period=2026-10`, { headers: bearer(caller.token) });
    req.on('error', () => undefined); // destroyed below, on purpose
    const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
      req.on('response', resolve).on('error', reject),
    );
    expect(response.statusCode).toBe(200);
    // Read one chunk, then stop: back-pressure leaves the cursor open and waiting, mid-file.
    await new Promise<void>((resolve) => response.once('data', (chunk: Buffer) => (received.push(chunk), resolve())));
    response.pause();
    let held: number[] = [];
    await waitUntil(async () => (held = await busyExportBackends()).length === 1, 'the paused export holds its cursor');

    req.destroy();

    await waitUntil(
      async () =>
        (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state <> 'idle'`, [held[0]])).rowCount ===
        0,
      'the export backend has let go of its query',
    );
    expect(await busyExportBackends()).toEqual([]);
    expect(Buffer.concat(received).toString('utf8').startsWith(`${HEADER}\r\n`)).toBe(true);
    // Exports still work afterwards (the pool was not left broken).
    expect((await request(desk.url).get(`${EXPORT}?period=2026-12`).set(bearer(caller.token))).text).toBe(
      `${HEADER}\r\n`,
    );
  });

  test('When the client disconnects while the query has not produced its first row, then the query is cancelled at once', async () => {
    // Hold a lock the export's query must wait for: without the cancel it would wait as long as the lock is held.
    const locker = new Client({ connectionString: desk.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE time_entries IN ACCESS EXCLUSIVE MODE');
      const req = http.get(`${desk.url}${EXPORT}?period=2026-10`, { headers: bearer(caller.token) });
      req.on('error', () => undefined); // destroyed below, on purpose
      let waiting: number[] = [];
      await waitUntil(async () => {
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
          [TIME_EXPORT_APPLICATION_NAME],
        );
        waiting = rows.map((row) => row.pid);
        return waiting.length === 1;
      }, 'the export query waits for the lock');

      req.destroy();

      await waitUntil(
        async () =>
          (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state <> 'idle'`, [waiting[0]]))
            .rowCount === 0,
        'the waiting query is cancelled',
      );
      expect(await busyExportBackends()).toEqual([]);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });
});

describe('GET /exports/time, readers that stop reading', () => {
  // Wide rows (~11 MB of CSV) that cannot hide in the socket buffers of a reader that stops.
  const TICKETS = 8_000;
  const IDLE_TIMEOUT_MS = 500;
  /** The export's pool (createTimeExportRepository): four connections. */
  const POOL_SIZE = 4;
  let wide: Tenant;
  let admin: Client;
  /** A replica of desk on the same database that ends a response whose reader takes no byte for IDLE_TIMEOUT_MS. */
  let server: http.Server;
  let impatientUrl: string;

  beforeAll(async () => {
    wide = await newTenant(desk);
    const client = await createClient(http_, wide.token, { name: 'Wide Client' });
    const users = [
      (await createUser(http_, wide.token, { name: 'Ann' })).id,
      (await createUser(http_, wide.token, { name: 'Bob' })).id,
    ];
    await desk.db.$executeRaw`INSERT INTO tickets (tenant_id, number, title, client_id)
      SELECT ${wide.tenantId}::uuid, n, 'Ticket ' || n || ' ' || repeat('x', 600), ${client.id}::uuid FROM generate_series(1, ${TICKETS}::int) AS n`;
    await desk.db.$executeRaw`INSERT INTO time_entries (tenant_id, ticket_id, client_id, user_id, minutes, date)
      SELECT t.tenant_id, t.id, t.client_id, u.id, 75, '2026-10-15'
        FROM tickets t CROSS JOIN unnest(${users}::uuid[]) AS u(id) WHERE t.tenant_id = ${wide.tenantId}::uuid`;
    server = http.createServer(await desk.replica({ exports: { idleTimeoutMs: IDLE_TIMEOUT_MS } }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    impatientUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    admin = new Client({ connectionString: desk.databaseUrl });
    await admin.connect();
  }, 60_000);
  afterAll(async () => {
    await admin?.end();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const busyExportBackends = () => exportBackendsBusy(admin);

  /** An export whose client takes its first bytes and then stops reading. */
  /** A reader of the month's export from the impatient replica that took one chunk and stopped reading. */
  const stalledExport = () => stalledReader(`${impatientUrl}${EXPORT}?period=2026-10`, bearer(wide.token));

  /** The whole month, exported by the impatient replica. */
  async function wholeExport() {
    const response = await request(impatientUrl).get(`${EXPORT}?period=2026-10`).set(bearer(wide.token));
    expect(response.status).toBe(200);
    const lines = response.text.split('\r\n');
    expect(lines[0]).toBe(HEADER);
    expect(lines.length - 2).toBe(TICKETS * 2);
    expect(lines.at(-1)).toBe('');
  }

  test('When a reader takes no byte for EXPORT_IDLE_TIMEOUT_MS, then its response is ended and its cursor and connection are given back', async () => {
    const reader = await stalledExport();
    expect(reader.status).toBe(200);
    // The file stops short: what the reader takes once the cursor is let go ends without the end of a complete response.
    await expectCutShortWhenIdle(reader, busyExportBackends);
    await wholeExport();
  });

  test('When stalled readers hold every connection of the export pool, then the idle timeout frees them and the next export completes', async () => {
    const readers = await Promise.all(Array.from({ length: POOL_SIZE }, () => stalledExport()));
    try {
      expect(readers.map((reader) => reader.status)).toEqual(Array(POOL_SIZE).fill(200));

      await waitUntil(
        async () => (await busyExportBackends()).length === 0,
        'the stalled exports let go of their cursors',
      );

      await wholeExport();
    } finally {
      for (const reader of readers) reader.req.destroy();
    }
  });
});

describe('GET /exports/time, failed exports and a full pool', () => {
  /** The export's pool (createTimeExportRepository): four connections. */
  const POOL_SIZE = 4;
  let caller: Tenant;
  let admin: Client;

  beforeAll(async () => {
    caller = await newTenant(desk);
    const ticket = await createTicket(http_, caller.token);
    const user = await createUser(http_, caller.token, { name: 'Ann' });
    await record(caller, ticket.id, user.id, 30, '2026-09-10');
    admin = new Client({ connectionString: desk.databaseUrl });
    await admin.connect();
  });
  afterAll(() => admin?.end());

  const busyExportBackends = () => exportBackendsBusy(admin);

  test('When more exports than the pool holds fail while their queries wait, then every connection comes back and the next export answers', async () => {
    // Each export's query waits for this lock; then every caller goes away: POOL_SIZE + 1 failed
    // exports, one of them still waiting for a connection of the pool.
    const locker = new Client({ connectionString: desk.databaseUrl });
    await locker.connect();
    const requests: http.ClientRequest[] = [];
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE time_entries IN ACCESS EXCLUSIVE MODE');
      for (let i = 0; i <= POOL_SIZE; i++) {
        const req = http.get(`${desk.url}${EXPORT}?period=2026-09`, { headers: bearer(caller.token) });
        req.on('error', () => undefined); // destroyed below, on purpose
        requests.push(req);
      }
      await waitUntil(async () => {
        const { rows } = await admin.query(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND wait_event_type = 'Lock'`,
          [TIME_EXPORT_APPLICATION_NAME],
        );
        return rows.length === POOL_SIZE;
      }, 'every connection of the export pool waits for the lock');

      for (const req of requests) req.destroy();
      await waitUntil(
        async () => (await busyExportBackends()).length === 0,
        'the failed exports let go of their connections',
      );
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }

    const response = await request(desk.url).get(`${EXPORT}?period=2026-09`).set(bearer(caller.token)).expect(200);
    expect(response.text.split('\r\n')).toHaveLength(3);
    await waitUntil(async () => (await busyExportBackends()).length === 0, 'the good export gave its connection back');
  });

  test(
    'When every connection of the export pool stays busy past EXPORT_POOL_ACQUIRE_TIMEOUT_MS, then the ' +
      'next export answers 503 with Retry-After, and exports work once one is free',
    async () => {
      const replica = http.createServer(
        await desk.replica({ exports: { idleTimeoutMs: 120_000, acquireTimeoutMs: 300 } }),
      );
      await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(replica.address() as AddressInfo).port}`;
      const locker = new Client({ connectionString: desk.databaseUrl });
      await locker.connect();
      const held: http.ClientRequest[] = [];
      try {
        // Every connection of the replica's pool holds a query waiting for a lock.
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE time_entries IN ACCESS EXCLUSIVE MODE');
        for (let i = 0; i < POOL_SIZE; i++) {
          const req = http.get(`${url}${EXPORT}?period=2026-09`, { headers: bearer(caller.token) });
          req.on('error', () => undefined);
          held.push(req);
        }
        await waitUntil(async () => (await busyExportBackends()).length === POOL_SIZE, 'the pool is full');

        const busy = await request(url).get(`${EXPORT}?period=2026-09`).set(bearer(caller.token));

        expect(busy.status).toBe(503);
        expect(busy.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(busy.headers['retry-after']).toBe('5');
        expect(busy.body).toMatchObject({ type: 'urn:msp:problem:export-capacity-exhausted', status: 503 });
      } finally {
        for (const req of held) req.destroy();
        await locker.query('ROLLBACK');
        await locker.end();
      }
      try {
        await waitUntil(
          async () => (await busyExportBackends()).length === 0,
          'the held exports let go of their connections',
        );
        expect(
          (await request(url).get(`${EXPORT}?period=2026-09`).set(bearer(caller.token)).expect(200)).text,
        ).toContain(`${HEADER}\r\n`);
      } finally {
        replica.closeAllConnections();
        await new Promise((resolve) => replica.close(resolve));
      }
    },
  );
});
