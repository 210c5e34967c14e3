import type { PoolClient } from 'pg';
import { storedEvents, testOutbound, testWebhookSecrets } from '@msp/testkit';
import { createLogger } from '@msp/http';
import { createDeskApp } from '../src/app';
import { createDb } from '../src/db';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, TARGETS, bearer, createClient, newTenant, snapshot, startHelpdesk, unique } from './support/helpdesk';

let desk: TestDesk;
let http: Api;

beforeAll(async () => ({ desk, http } = await startHelpdesk()));
afterAll(() => desk.close());

type Tenant = Awaited<ReturnType<typeof newTenant>>;
type Sla = { policy_id: string; first_response: Clock; resolution: Clock };
type Clock = { due_at: string; completed_at: string | null; status: string };
type TicketWithSla = {
  id: string;
  created_at: string;
  updated_at: string;
  priority: string;
  status: string;
  sla: Sla | null;
};

const MINUTE = 60_000;
const plus = (iso: string, minutes: number) => new Date(new Date(iso).getTime() + minutes * MINUTE).toISOString();
const OFFICE = [{ start: '08:00', end: '17:00' }];

async function createPolicy(caller: Tenant, body: Record<string, unknown> = {}) {
  const response = await http
    .post(`${BASE}/sla-policies`)
    .set(bearer(caller.token))
    .send({ name: unique('Policy'), targets: TARGETS, ...body })
    .expect(201);
  return response.body as { id: string; name: string; is_default: boolean; calendar_id: string | null };
}

async function openTicket(caller: Tenant, body: Record<string, unknown> = {}) {
  const client_id = body.client_id ?? (await createClient(http, caller.token)).id;
  const response = await http
    .post(`${BASE}/tickets`)
    .set(bearer(caller.token))
    .send({ title: unique('VPN drops'), client_id, ...body })
    .expect(201);
  return response.body as TicketWithSla;
}

const patch = async (caller: Tenant, id: string, body: Record<string, unknown>) =>
  (await http.patch(`${BASE}/tickets/${id}`).set(bearer(caller.token)).send(body).expect(200)).body as TicketWithSla;
const read = async (caller: Tenant, id: string) =>
  (await http.get(`${BASE}/tickets/${id}`).set(bearer(caller.token)).expect(200)).body as TicketWithSla;
const comment = (caller: Tenant, id: string, internal: boolean) =>
  http.post(`${BASE}/tickets/${id}/comments`).set(bearer(caller.token)).send({ body: 'On it.', internal }).expect(201);

/** A tenant whose tickets all run under a 24×7 default policy. */
async function tenantWithDefault() {
  const caller = await newTenant(desk);
  const policy = await createPolicy(caller, { is_default: true });
  return { caller, policy };
}

describe('/sla-policies', () => {
  test('When a policy is created, read, changed and deleted, then each answer shows it as stored', async () => {
    const caller = await newTenant(desk);
    const calendar = await http
      .post(`${BASE}/calendars`)
      .set(bearer(caller.token))
      .send({ name: 'Office', time_zone: 'Europe/Berlin', hours: { mon: OFFICE } })
      .expect(201);
    const created = await http
      .post(`${BASE}/sla-policies`)
      .set(bearer(caller.token))
      .send({ name: 'Gold', calendar_id: calendar.body.id, targets: TARGETS })
      .expect(201);
    expect(created.headers.location).toBe(`${BASE}/sla-policies/${created.body.id}`);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Gold',
      calendar_id: calendar.body.id,
      is_default: false,
      targets: TARGETS,
      created_at: expect.any(String),
      updated_at: created.body.created_at,
    });
    expect(
      (await http.get(`${BASE}/sla-policies/${created.body.id}`).set(bearer(caller.token)).expect(200)).body,
    ).toEqual(created.body);
    expect((await http.get(`${BASE}/sla-policies`).set(bearer(caller.token)).expect(200)).body.data).toEqual([
      created.body,
    ]);
    const changed = await http
      .patch(`${BASE}/sla-policies/${created.body.id}`)
      .set(bearer(caller.token))
      .send({ calendar_id: null, is_default: true })
      .expect(200);
    expect(changed.body).toMatchObject({ calendar_id: null, is_default: true });
    await http.delete(`${BASE}/sla-policies/${created.body.id}`).set(bearer(caller.token)).expect(204);
    await http.get(`${BASE}/sla-policies/${created.body.id}`).set(bearer(caller.token)).expect(404);
  });

  test('When calendar_id names no calendar of the tenant, then creating or changing a policy answers 422 naming it and stores nothing', async () => {
    const caller = await newTenant(desk);
    const other = await newTenant(desk);
    const foreign = await http
      .post(`${BASE}/calendars`)
      .set(bearer(other.token))
      .send({ name: 'Office', time_zone: 'Europe/Berlin', hours: { mon: OFFICE } })
      .expect(201);
    const policy = await createPolicy(caller);
    const before = await snapshot(desk);
    for (const calendar_id of [foreign.body.id, '00000000-0000-4000-8000-000000000000']) {
      const created = await http
        .post(`${BASE}/sla-policies`)
        .set(bearer(caller.token))
        .send({ name: unique('P'), calendar_id, targets: TARGETS })
        .expect(422);
      expect(created.body).toMatchObject({
        type: 'urn:msp:problem:unknown-reference',
        errors: [{ field: 'calendar_id', message: expect.any(String) }],
      });
      await http.patch(`${BASE}/sla-policies/${policy.id}`).set(bearer(caller.token)).send({ calendar_id }).expect(422);
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When a second policy is made the default, then the previous default is unset: one default per tenant, never a 409', async () => {
    const caller = await newTenant(desk);
    const first = await createPolicy(caller, { is_default: true });
    const second = await createPolicy(caller, { is_default: true });
    expect(second.is_default).toBe(true);
    expect(
      (await http.get(`${BASE}/sla-policies/${first.id}`).set(bearer(caller.token)).expect(200)).body.is_default,
    ).toBe(false);

    await http
      .patch(`${BASE}/sla-policies/${first.id}`)
      .set(bearer(caller.token))
      .send({ is_default: true })
      .expect(200);
    const list = await http.get(`${BASE}/sla-policies`).set(bearer(caller.token)).expect(200);
    expect(
      list.body.data.filter((p: { is_default: boolean }) => p.is_default).map((p: { id: string }) => p.id),
    ).toEqual([first.id]);
    const events = (await storedEvents(desk.db, caller.tenantId)).filter((e) => e.type === 'sla_policy.updated');
    expect(events.map((e) => [e.resource_id, e.changes])).toEqual([
      [first.id, { is_default: { from: true, to: false } }],
      [second.id, { is_default: { from: true, to: false } }],
      [first.id, { is_default: { from: false, to: true } }],
    ]);
  });

  test('When many policies are made the default at once, then exactly one ends up the default', async () => {
    const caller = await newTenant(desk);
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        http
          .post(`${BASE}/sla-policies`)
          .set(bearer(caller.token))
          .send({ name: unique('P'), is_default: true, targets: TARGETS }),
      ),
    );
    expect(results.map((r) => r.status).filter((s) => s !== 201 && s !== 409)).toEqual([]);
    const list = await http.get(`${BASE}/sla-policies`).set(bearer(caller.token)).expect(200);
    expect(list.body.data.filter((p: { is_default: boolean }) => p.is_default)).toHaveLength(1);
  });

  test('When a client names a policy, then deleting the policy answers 409 until the client lets go of it', async () => {
    const caller = await newTenant(desk);
    const policy = await createPolicy(caller);
    const client = await createClient(http, caller.token);
    const named = await http
      .patch(`${BASE}/clients/${client.id}`)
      .set(bearer(caller.token))
      .send({ sla_policy_id: policy.id })
      .expect(200);
    expect(named.body.sla_policy_id).toBe(policy.id);

    const refused = await http.delete(`${BASE}/sla-policies/${policy.id}`).set(bearer(caller.token)).expect(409);
    expect(refused.body.type).toBe('urn:msp:problem:sla-policy-in-use');
    await http
      .patch(`${BASE}/clients/${client.id}`)
      .set(bearer(caller.token))
      .send({ sla_policy_id: null })
      .expect(200);
    await http.delete(`${BASE}/sla-policies/${policy.id}`).set(bearer(caller.token)).expect(204);
  });

  test('When a client is given an SLA policy of another tenant or none, then it answers 422 and the client is unchanged', async () => {
    const caller = await newTenant(desk);
    const foreign = await createPolicy(await newTenant(desk));
    const client = await createClient(http, caller.token);
    const response = await http
      .patch(`${BASE}/clients/${client.id}`)
      .set(bearer(caller.token))
      .send({ sla_policy_id: foreign.id })
      .expect(422);
    expect(response.body).toMatchObject({ errors: [{ field: 'sla_policy_id', message: expect.any(String) }] });
    await http
      .post(`${BASE}/clients`)
      .set(bearer(caller.token))
      .send({ name: unique('C'), sla_policy_id: foreign.id })
      .expect(422);
    expect(
      (await http.get(`${BASE}/clients/${client.id}`).set(bearer(caller.token)).expect(200)).body.sla_policy_id,
    ).toBeNull();
  });

  test('When targets miss a priority or have a zero, then it answers 400', async () => {
    const caller = await newTenant(desk);
    const three = { urgent: TARGETS.urgent, high: TARGETS.high, normal: TARGETS.normal };
    await http
      .post(`${BASE}/sla-policies`)
      .set(bearer(caller.token))
      .send({ name: unique('P'), targets: three })
      .expect(400);
    await http
      .post(`${BASE}/sla-policies`)
      .set(bearer(caller.token))
      .send({ name: unique('P'), targets: { ...TARGETS, low: { first_response_minutes: 0, resolution_minutes: 5 } } })
      .expect(400);
  });

  test('When a token lacks admin:tenant, then SLA policies answer 403', async () => {
    const client = await desk.createClient({ scopes: ['read:tickets', 'write:tickets'] });
    const limited = await desk.token(client);
    await http.get(`${BASE}/sla-policies`).set(bearer(limited)).expect(403);
  });
});

describe('SLA policies and calendars that cannot meet', () => {
  const YEAR = 525_600;
  const yearLong = {
    urgent: { first_response_minutes: 60, resolution_minutes: YEAR },
    high: TARGETS.high,
    normal: TARGETS.normal,
    low: { first_response_minutes: YEAR, resolution_minutes: YEAR },
  };
  const small = Object.fromEntries(
    Object.keys(TARGETS).map((priority) => [priority, { first_response_minutes: 30, resolution_minutes: 120 }]),
  );
  const ONE_MINUTE_A_WEEK = { wed: [{ start: '10:00', end: '10:01' }] };
  const calendarOf = async (caller: Tenant, hours: Record<string, unknown>) =>
    (
      await http
        .post(`${BASE}/calendars`)
        .set(bearer(caller.token))
        .send({ name: unique('Calendar'), time_zone: 'Europe/Berlin', hours })
        .expect(201)
    ).body as { id: string };

  test(
    'When a policy with year-long targets names a calendar open one minute a week, then ' +
      'POST and PATCH answer 422 naming the targets and store nothing',
    async () => {
      const caller = await newTenant(desk);
      const sparse = await calendarOf(caller, ONE_MINUTE_A_WEEK);
      const before = await snapshot(desk);

      const created = await http
        .post(`${BASE}/sla-policies`)
        .set(bearer(caller.token))
        .send({ name: 'Yearly', calendar_id: sparse.id, targets: yearLong })
        .expect(422);
      expect(created.body.type).toBe('urn:msp:problem:targets-beyond-calendar');
      expect(created.body.errors.map((error: { field: string }) => error.field)).toEqual(
        expect.arrayContaining([
          'targets.urgent.resolution_minutes',
          'targets.low.first_response_minutes',
          'targets.low.resolution_minutes',
          'targets.normal.resolution_minutes',
          'calendar_id',
        ]),
      );
      expect(await snapshot(desk)).toEqual(before);

      // A policy the calendar can meet, then changed into one it cannot.
      const fits = await createPolicy(caller, { calendar_id: sparse.id, targets: small });
      const roundTheClock = await createPolicy(caller, { targets: yearLong });
      const stored = await snapshot(desk);
      await http
        .patch(`${BASE}/sla-policies/${fits.id}`)
        .set(bearer(caller.token))
        .send({ targets: yearLong })
        .expect(422);
      const moved = await http
        .patch(`${BASE}/sla-policies/${roundTheClock.id}`)
        .set(bearer(caller.token))
        .send({ calendar_id: sparse.id })
        .expect(422);
      expect(moved.body.type).toBe('urn:msp:problem:targets-beyond-calendar');
      expect(await snapshot(desk)).toEqual(stored);
    },
  );

  test(
    'When the hours of a calendar a policy counts on would leave its year-long targets out of reach, ' +
      'then PATCH /calendars answers 422 naming the policy and the calendar stays',
    async () => {
      const caller = await newTenant(desk);
      const office = await calendarOf(caller, { mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE });
      const policy = await createPolicy(caller, { calendar_id: office.id, targets: yearLong });
      const before = await snapshot(desk);

      const response = await http
        .patch(`${BASE}/calendars/${office.id}`)
        .set(bearer(caller.token))
        .send({ hours: ONE_MINUTE_A_WEEK })
        .expect(422);

      expect(response.body.type).toBe('urn:msp:problem:targets-beyond-calendar');
      expect(response.body.errors[0]).toEqual({ field: 'hours', message: expect.stringContaining(policy.id) });
      expect(await snapshot(desk)).toEqual(before);
      // Hours that still reach every target are taken.
      await http
        .patch(`${BASE}/calendars/${office.id}`)
        .set(bearer(caller.token))
        .send({ hours: { mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE } })
        .expect(200);
    },
  );

  test(
    'When a policy stored before this check has targets its calendar cannot reach in a century, then POST ' +
      '/tickets still answers 201, the out-of-reach due time is null, and the ticket can change',
    async () => {
      const caller = await newTenant(desk);
      const sparse = await calendarOf(caller, ONE_MINUTE_A_WEEK);
      const policy = await createPolicy(caller, { calendar_id: sparse.id, targets: small, is_default: true });
      // As a policy written before policies were held to their calendars.
      await desk.db
        .$executeRaw`UPDATE sla_policies SET targets = ${JSON.stringify(yearLong)}::jsonb WHERE id = ${policy.id}::uuid`;

      const ticket = await openTicket(caller, { priority: 'low' });

      expect(ticket.sla).toMatchObject({
        policy_id: policy.id,
        first_response: { due_at: null, status: 'running' },
        resolution: { due_at: null, status: 'running' },
      });
      expect(await read(caller, ticket.id)).toEqual(ticket);
      const urgent = await patch(caller, ticket.id, { priority: 'urgent', status: 'pending' });
      expect(urgent.sla!.first_response.due_at).toMatch(/^\d{4}-/);
      expect(urgent.sla!.resolution).toMatchObject({ due_at: null, status: 'paused' });
      const back = await patch(caller, ticket.id, { status: 'in_progress' });
      expect(back.sla!.resolution).toMatchObject({ due_at: null, status: 'running' });
      const listed = await http
        .get(`${BASE}/tickets`)
        .query({ sort: 'sla_due_at', sla_status: 'running' })
        .set(bearer(caller.token))
        .expect(200);
      expect(listed.body.data.map((t: { id: string }) => t.id)).toContain(ticket.id);
    },
  );
});

describe('the SLA of a ticket', () => {
  test("When a tenant has no policy, then its tickets show sla null; with a default they take it, and a client's own policy wins over it", async () => {
    const caller = await newTenant(desk);
    expect((await openTicket(caller)).sla).toBeNull();

    const fallback = await createPolicy(caller, { is_default: true });
    const ticket = await openTicket(caller, { priority: 'high' });
    expect(ticket.sla).toEqual({
      policy_id: fallback.id,
      first_response: {
        due_at: plus(ticket.created_at, TARGETS.high.first_response_minutes),
        completed_at: null,
        status: 'running',
      },
      resolution: {
        due_at: plus(ticket.created_at, TARGETS.high.resolution_minutes),
        completed_at: null,
        status: 'running',
      },
    });
    expect(await read(caller, ticket.id)).toEqual(ticket);

    const own = await createPolicy(caller, {
      targets: { ...TARGETS, normal: { first_response_minutes: 5, resolution_minutes: 10 } },
    });
    const client = await createClient(http, caller.token, { sla_policy_id: own.id });
    const ofClient = await openTicket(caller, { client_id: client.id });
    expect(ofClient.sla).toMatchObject({
      policy_id: own.id,
      first_response: { due_at: plus(ofClient.created_at, 5) },
      resolution: { due_at: plus(ofClient.created_at, 10) },
    });
  });

  test(
    'When a ticket opens with no policy applying, then it is still one statement on the ' +
      'pool and no transaction; under a policy it takes a transaction',
    async () => {
      const caller = await newTenant(desk);
      const client = await createClient(http, caller.token);
      // The service's own pool: Kysely takes a connection for each statement, or one for a transaction.
      const pool = desk.database.pool;
      const connect = pool.connect.bind(pool) as () => Promise<PoolClient>;
      const counted = { connections: 0, statements: [] as string[] };
      const counting = Object.assign(pool, {
        connect: async () => {
          counted.connections++;
          const client = await connect();
          const query = client.query.bind(client) as (...args: unknown[]) => unknown;
          return Object.assign(client, {
            query: (...args: unknown[]) => {
              const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
              counted.statements.push(String(text).trim().split(/\s+/)[0]!.toUpperCase());
              return query(...args);
            },
          });
        },
      });
      try {
        const ticket = await openTicket(caller, { client_id: client.id });
        expect(ticket.sla).toBeNull();
        // One statement on one connection, no transaction.
        expect(counted).toEqual({ connections: 1, statements: ['WITH'] });

        // Under a policy the same request needs a transaction besides.
        await createPolicy(caller, { is_default: true });
        Object.assign(counted, { connections: 0, statements: [] });
        expect((await openTicket(caller, { client_id: client.id })).sla).not.toBeNull();
        expect(counted.statements).toContain('BEGIN');
      } finally {
        Object.assign(counting, { connect });
      }
    },
  );

  test('When a ticket opens under a policy, then ticket.created carries its sla as answered', async () => {
    const { caller } = await tenantWithDefault();
    const ticket = await openTicket(caller);
    const events = (await storedEvents(desk.db, caller.tenantId)).filter((e) => e.type === 'ticket.created');
    expect(events.map((e) => e.data)).toEqual([{ object: ticket }]);
  });

  test('When a ticket opens on a business-hours calendar, then its due times count business minutes of that calendar', async () => {
    const caller = await newTenant(desk);
    const calendar = await http
      .post(`${BASE}/calendars`)
      .set(bearer(caller.token))
      .send({
        name: 'Never today',
        time_zone: 'Europe/Berlin',
        hours: { mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE, sat: OFFICE, sun: OFFICE },
        closed_days: [],
      })
      .expect(201);
    await createPolicy(caller, { is_default: true, calendar_id: calendar.body.id });
    const ticket = await openTicket(caller);
    const due = (
      await http
        .get(`${BASE}/calendars/${calendar.body.id}/business-time`)
        .query({ from: ticket.created_at, minutes: TARGETS.normal.first_response_minutes })
        .set(bearer(caller.token))
        .expect(200)
    ).body.due_at;
    expect(ticket.sla!.first_response.due_at).toBe(due);
  });

  test('When the first comment is internal, then the first response still runs; the first public comment meets it, and later ones change nothing', async () => {
    const { caller } = await tenantWithDefault();
    const ticket = await openTicket(caller);
    await comment(caller, ticket.id, true);
    expect((await read(caller, ticket.id)).sla!.first_response).toMatchObject({
      completed_at: null,
      status: 'running',
    });

    const first = await comment(caller, ticket.id, false);
    const after = (await read(caller, ticket.id)).sla!;
    expect(after.first_response).toEqual({
      due_at: ticket.sla!.first_response.due_at,
      completed_at: first.body.created_at,
      status: 'met',
    });
    expect(after.resolution.status).toBe('running');
    await comment(caller, ticket.id, false);
    expect((await read(caller, ticket.id)).sla!.first_response.completed_at).toBe(first.body.created_at);
  });

  test('When a ticket waits in pending, then its resolution clock pauses and, back in progress, is due later by the time it stood still', async () => {
    const { caller } = await tenantWithDefault();
    const ticket = await openTicket(caller);
    const paused = await patch(caller, ticket.id, { status: 'pending' });
    expect(paused.sla!.resolution).toEqual({
      due_at: ticket.sla!.resolution.due_at,
      completed_at: null,
      status: 'paused',
    });
    expect(paused.sla!.first_response.status).toBe('running');
    await new Promise((resolve) => setTimeout(resolve, 300));

    const resumed = await patch(caller, ticket.id, { status: 'in_progress' });
    const stood = new Date(resumed.updated_at).getTime() - new Date(paused.updated_at).getTime();
    expect(stood).toBeGreaterThanOrEqual(300);
    const moved =
      new Date(resumed.sla!.resolution.due_at).getTime() - new Date(ticket.sla!.resolution.due_at).getTime();
    expect(Math.abs(moved - stood)).toBeLessThanOrEqual(1);
    expect(resumed.sla!.resolution.status).toBe('running');
    expect(resumed.sla!.first_response.due_at).toBe(ticket.sla!.first_response.due_at);
  });

  test('When a ticket is resolved, then the resolution is met; reopened, the clock resumes where it stopped; closed, it stays met', async () => {
    const { caller } = await tenantWithDefault();
    const ticket = await openTicket(caller);
    const resolved = await patch(caller, ticket.id, { status: 'resolved' });
    expect(resolved.sla!.resolution).toEqual({
      due_at: ticket.sla!.resolution.due_at,
      completed_at: resolved.updated_at,
      status: 'met',
    });
    // Resolving without a public comment counts as the first response.
    expect(resolved.sla!.first_response).toMatchObject({ completed_at: resolved.updated_at, status: 'met' });

    const reopened = await patch(caller, ticket.id, { status: 'open' });
    const stood = new Date(reopened.updated_at).getTime() - new Date(resolved.updated_at).getTime();
    expect(reopened.sla!.resolution).toMatchObject({ completed_at: null, status: 'running' });
    expect(
      Math.abs(
        new Date(reopened.sla!.resolution.due_at).getTime() - new Date(ticket.sla!.resolution.due_at).getTime() - stood,
      ),
    ).toBeLessThanOrEqual(1);

    await patch(caller, ticket.id, { status: 'resolved' });
    const closed = await patch(caller, ticket.id, { status: 'closed' });
    expect(closed.sla!.resolution.status).toBe('met');
  });

  test("When the priority changes, then the targets not yet met count the new priority's minutes from the creation", async () => {
    const { caller } = await tenantWithDefault();
    const ticket = await openTicket(caller, { priority: 'low' });
    await comment(caller, ticket.id, false);
    const urgent = await patch(caller, ticket.id, { priority: 'urgent' });
    expect(urgent.sla!.resolution.due_at).toBe(plus(ticket.created_at, TARGETS.urgent.resolution_minutes));
    // The first response was met already: it keeps its target.
    expect(urgent.sla!.first_response.due_at).toBe(plus(ticket.created_at, TARGETS.low.first_response_minutes));
    const events = (await storedEvents(desk.db, caller.tenantId)).filter((e) => e.type === 'ticket.updated');
    expect(events.at(-1)!.data).toMatchObject({ object: urgent, changes: { priority: { from: 'low', to: 'urgent' } } });
  });

  test('When the policy changes after a ticket opened, then the ticket keeps the targets it was opened with, also on a change of priority', async () => {
    const { caller, policy } = await tenantWithDefault();
    const ticket = await openTicket(caller);
    await http
      .patch(`${BASE}/sla-policies/${policy.id}`)
      .set(bearer(caller.token))
      .send({ targets: { ...TARGETS, high: { first_response_minutes: 1, resolution_minutes: 2 } } })
      .expect(200);
    expect((await read(caller, ticket.id)).sla).toEqual(ticket.sla);
    const high = await patch(caller, ticket.id, { priority: 'high' });
    expect(high.sla!.resolution.due_at).toBe(plus(ticket.created_at, TARGETS.high.resolution_minutes));
    expect((await openTicket(caller, { priority: 'high' })).sla!.resolution.status).toBe('running');
  });
});

/**
 * The clocks the `at_risk` index holds (a target running, none breached by record), as SQL over
 * ticket_slas `s`: the migration's function, which expectDueCountsExact holds to the partial
 * index's own predicate, read from the catalog, on every clock of the tenant.
 */
const COUNTED = 'ticket_sla_due_counted(s)';

/** How many of the tenant's clocks ticket_sla_due_counted judges otherwise than the partial index's predicate as PostgreSQL stores it. */
async function countedUnlikeTheIndex(tenantId: string) {
  const [index] = await desk.db.$queryRawUnsafe<{ predicate: string }[]>(
    `SELECT pg_get_expr(i.indpred, i.indrelid) AS predicate FROM pg_index i WHERE i.indexrelid = 'ticket_slas_tenant_id_next_due_at_idx'::regclass`,
  );
  expect(index!.predicate).toContain('first_response_breached_at IS NULL');
  const [row] = await desk.db.$queryRawUnsafe<{ clocks: bigint; unlike: bigint }[]>(
    `SELECT count(*) AS clocks, count(*) FILTER (WHERE (${index!.predicate}) IS DISTINCT FROM ticket_sla_due_counted(ticket_slas)) AS unlike
       FROM ticket_slas WHERE tenant_id = $1::uuid`,
    tenantId,
  );
  return { clocks: Number(row!.clocks), unlike: Number(row!.unlike) };
}

/** The tenant's due-time buckets as the triggers kept them, and as a count of its clocks makes them afresh. */
async function dueCounts(tenantId: string) {
  const kept = await desk.db.$queryRawUnsafe<{ bucket: Date; count: bigint }[]>(
    `SELECT bucket, count FROM ticket_sla_due_counts WHERE tenant_id = $1::uuid ORDER BY bucket`,
    tenantId,
  );
  const recounted = await desk.db.$queryRawUnsafe<{ bucket: Date; count: bigint }[]>(
    `SELECT ticket_sla_due_bucket(s.next_due_at) AS bucket, count(*) AS count FROM ticket_slas s
      WHERE s.tenant_id = $1::uuid AND ${COUNTED} GROUP BY 1 ORDER BY 1`,
    tenantId,
  );
  return {
    kept: kept.map((r) => [r.bucket.toISOString(), Number(r.count)]),
    recounted: recounted.map((r) => [r.bucket.toISOString(), Number(r.count)]),
  };
}

async function expectDueCountsExact(tenantId: string) {
  const { kept, recounted } = await dueCounts(tenantId);
  expect(kept).toEqual(recounted);
  expect((await countedUnlikeTheIndex(tenantId)).unlike).toBe(0);
}

describe('GET /tickets by SLA', () => {
  test('When tickets are filtered by sla_status and sorted by sla_due_at, then each filter finds its tickets and the next due comes first', async () => {
    const caller = await newTenant(desk);
    const none = await openTicket(caller);
    await createPolicy(caller, { is_default: true });
    const low = await openTicket(caller, { priority: 'low' });
    const urgent = await openTicket(caller, { priority: 'urgent' });
    const done = await openTicket(caller);
    await comment(caller, done.id, false);
    await patch(caller, done.id, { status: 'resolved' });
    const waiting = await openTicket(caller, { priority: 'low' });
    await comment(caller, waiting.id, false);
    await patch(caller, waiting.id, { status: 'pending' });
    const late = await openTicket(caller, { priority: 'high' });
    // The due time passes.
    await desk.db.$executeRawUnsafe(
      `UPDATE ticket_slas SET first_response_due_at = now() - interval '1 minute' WHERE ticket_id = $1::uuid`,
      late.id,
    );

    const ids = async (query: Record<string, unknown>) =>
      (
        (await http.get(`${BASE}/tickets`).query(query).set(bearer(caller.token)).expect(200)).body.data as {
          id: string;
        }[]
      ).map((t) => t.id);
    expect(await ids({ sla_status: 'breached' })).toEqual([late.id]);
    expect((await ids({ sla_status: 'running' })).sort()).toEqual([low.id, urgent.id].sort());
    expect(await ids({ sla_status: 'at_risk' })).toEqual([urgent.id]);
    expect((await ids({ sla_status: 'at_risk', at_risk_minutes: 300 })).sort()).toEqual([low.id, urgent.id].sort());
    expect(await ids({ sla_status: 'met' })).toEqual([done.id]);
    expect(await ids({ sla_status: 'paused' })).toEqual([waiting.id]);
    expect(await ids({ sla_status: 'met', priority: 'high' })).toEqual([]);
    const sorted = await ids({ sort: 'sla_due_at' });
    expect(sorted.slice(0, 3)).toEqual([late.id, urgent.id, low.id]);
    expect(sorted.slice(3).sort()).toEqual([waiting.id, done.id, none.id].sort());
    const page = await http
      .get(`${BASE}/tickets`)
      .query({ sla_status: 'running', per_page: 1 })
      .set(bearer(caller.token))
      .expect(200);
    expect(page.body.pagination).toMatchObject({ total: 2, total_pages: 2 });
  });

  test(
    'When clocks start, are met, pause, resume, change priority and stop through the API, then the due-time ' +
      'buckets stay a recount of the clocks and the running and at_risk totals are exact',
    async () => {
      const { caller } = await tenantWithDefault();
      const answered = await openTicket(caller, { priority: 'urgent' });
      const waiting = await openTicket(caller, { priority: 'urgent' });
      const resumed = await openTicket(caller, { priority: 'high' });
      const raised = await openTicket(caller, { priority: 'normal' });
      const resolved = await openTicket(caller, { priority: 'low' });
      const totals = async () => {
        const total = async (query: Record<string, unknown>) =>
          (
            await http
              .get(`${BASE}/tickets`)
              .query({ per_page: 1, ...query })
              .set(bearer(caller.token))
              .expect(200)
          ).body.pagination.total as number;
        return {
          running: await total({ sla_status: 'running' }),
          at_risk: await total({ sla_status: 'at_risk' }),
          at_risk_300: await total({ sla_status: 'at_risk', at_risk_minutes: 300 }),
        };
      };
      const counted = async () => {
        const row = (
          await desk.db.$queryRawUnsafe<{ running: bigint; at_risk: bigint; at_risk_300: bigint }[]>(
            `SELECT count(*) FILTER (WHERE s.next_due_at >= now()) AS running,
                count(*) FILTER (WHERE s.next_due_at >= now() AND s.next_due_at <= now() + interval '60 minutes') AS at_risk,
                count(*) FILTER (WHERE s.next_due_at >= now() AND s.next_due_at <= now() + interval '300 minutes') AS at_risk_300
           FROM ticket_slas s WHERE s.tenant_id = $1::uuid AND ${COUNTED}`,
            caller.tenantId,
          )
        )[0]!;
        return { running: Number(row.running), at_risk: Number(row.at_risk), at_risk_300: Number(row.at_risk_300) };
      };
      const check = async () => {
        await expectDueCountsExact(caller.tenantId);
        expect(await totals()).toEqual(await counted());
      };

      await check();
      expect(await totals()).toEqual({ running: 5, at_risk: 4, at_risk_300: 5 });
      await comment(caller, answered.id, false); // first response met: due next at its resolution
      await check();
      await patch(caller, waiting.id, { status: 'pending' }); // the first response still runs
      await comment(caller, resumed.id, false);
      await patch(caller, resumed.id, { status: 'pending' }); // nothing runs
      await check();
      await patch(caller, resumed.id, { status: 'in_progress' }); // resumes, due later
      await patch(caller, raised.id, { priority: 'urgent' });
      await check();
      await comment(caller, resolved.id, false);
      await patch(caller, resolved.id, { status: 'resolved' });
      await check();
      expect((await totals()).running).toBe(4);
    },
  );

  test(
    'When clocks fall due anywhere in or at the edge of a 10-second bucket, then ticket_sla_due_count ' +
      'equals count(*) for every range, also after statements of many rows and a delete',
    async () => {
      const { caller } = await tenantWithDefault();
      const tickets = await Promise.all(Array.from({ length: 12 }, () => openTicket(caller)));
      // One origin on a bucket's start, an hour ahead; due times around its edges (ms).
      const { origin } = (
        await desk.db.$queryRawUnsafe<{ origin: Date }[]>(
          `SELECT ticket_sla_due_bucket(now() + interval '1 hour') AS origin`,
        )
      )[0]!;
      const offsets = [-10_000, -1, 0, 1, 4_999, 5_000, 9_999, 10_000, 10_001, 25_000, 39_999, 40_000];
      // One UPDATE of twelve rows (the statement trigger nets them by bucket).
      await desk.db.$executeRawUnsafe(
        `UPDATE ticket_slas s SET first_response_due_at = $2::timestamptz + make_interval(secs => o.ms / 1000.0)
         FROM unnest($1::uuid[], $3::int[]) AS o(id, ms) WHERE s.ticket_id = o.id`,
        tickets.map((t) => t.id),
        origin,
        offsets,
      );
      const edges = [
        -15_000, -10_000, -5_000, -1, 0, 1, 4_999, 5_000, 9_999, 10_000, 10_001, 20_000, 39_999, 40_000, 55_000,
      ];
      const compare = async () => {
        await expectDueCountsExact(caller.tenantId);
        const [found] = await desk.db.$queryRawUnsafe<{ mismatches: string[] | null }[]>(
          `WITH e AS (SELECT $2::timestamptz + make_interval(secs => ms / 1000.0) AS at FROM unnest($3::int[]) AS ms),
              r AS (SELECT lo.at AS lo, hi.at AS hi FROM e lo CROSS JOIN (SELECT at FROM e UNION ALL SELECT NULL) hi)
         SELECT array_agg(r.lo || ' .. ' || coalesce(r.hi::text, '∞') || ': ' || f.n || ' ≠ ' || c.n) AS mismatches
           FROM r CROSS JOIN LATERAL (SELECT ticket_sla_due_count($1::uuid, r.lo, r.hi) AS n) f
           CROSS JOIN LATERAL (SELECT count(*) AS n FROM ticket_slas s WHERE s.tenant_id = $1::uuid AND ${COUNTED}
                                 AND s.next_due_at >= r.lo AND (r.hi IS NULL OR s.next_due_at <= r.hi)) c
          WHERE f.n <> c.n`,
          caller.tenantId,
          origin,
          edges,
        );
        expect(found?.mismatches).toBeNull();
      };
      await compare();
      // Met (out of the index), then a statement that moves half of them by 7 s, then a delete.
      await desk.db.$executeRawUnsafe(
        `UPDATE ticket_slas SET first_response_completed_at = now(), resolution_due_at = $2::timestamptz + interval '3 seconds' WHERE ticket_id = $1::uuid`,
        tickets[0]!.id,
        origin,
      );
      await desk.db.$executeRawUnsafe(
        `UPDATE ticket_slas SET first_response_due_at = first_response_due_at + interval '7 seconds' WHERE ticket_id = ANY($1::uuid[])`,
        tickets.slice(6).map((t) => t.id),
      );
      await compare();
      await desk.db.$executeRawUnsafe(
        `DELETE FROM ticket_slas WHERE ticket_id = ANY($1::uuid[])`,
        tickets.slice(9).map((t) => t.id),
      );
      await compare();
      await desk.db.$executeRawUnsafe(`DELETE FROM ticket_slas WHERE tenant_id = $1::uuid`, caller.tenantId);
      expect(await dueCounts(caller.tenantId)).toEqual({ kept: [], recounted: [] });
    },
  );

  test(
    'When clocks are breached, met late or stopped late in each way the partial index names, then ' +
      'ticket_sla_due_counted judges each as the index does and the buckets stay a recount',
    async () => {
      const { caller } = await tenantWithDefault();
      const tickets = await Promise.all(Array.from({ length: 7 }, () => openTicket(caller)));
      const ids = tickets.map((t) => t.id);
      // One clock per way out of the index (or in, for the last two), each set on its own.
      const states = [
        `first_response_breached_at = now()`,
        `resolution_breached_at = now()`,
        `first_response_completed_at = first_response_due_at + interval '1 second'`,
        `resolution_stopped_at = resolution_due_at + interval '1 second'`,
        `first_response_completed_at = first_response_due_at, resolution_stopped_at = resolution_due_at`,
        `first_response_completed_at = first_response_due_at`,
        `resolution_stopped_at = resolution_due_at - interval '1 second'`,
      ];
      for (const [i, state] of states.entries()) {
        await desk.db.$executeRawUnsafe(`UPDATE ticket_slas SET ${state} WHERE ticket_id = $1::uuid`, ids[i]);
      }
      const [judged] = await desk.db.$queryRawUnsafe<{ counted: string[] }[]>(
        `SELECT array_agg(t.ord::text ORDER BY t.ord) AS counted FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, ord)
         JOIN ticket_slas s ON s.ticket_id = t.id WHERE ticket_sla_due_counted(s)`,
        ids,
      );
      expect(judged!.counted).toEqual(['6', '7']); // met on time (first response), stopped early with the first response running
      expect(await countedUnlikeTheIndex(caller.tenantId)).toEqual({ clocks: 7, unlike: 0 });
      await expectDueCountsExact(caller.tenantId);
    },
  );

  test('When sla_status, at_risk_minutes or sort have values they do not know, then it answers 400', async () => {
    const caller = await newTenant(desk);
    for (const query of [
      { sla_status: 'late' },
      { at_risk_minutes: 0 },
      { at_risk_minutes: 'soon' },
      { sort: 'due' },
    ]) {
      await http.get(`${BASE}/tickets`).query(query).set(bearer(caller.token)).expect(400);
    }
  });
});

test('When the OpenAPI document is read, then ticket.sla_breached is a webhook whose data has the ticket and its target, and Ticket has sla', () => {
  const request = desk.openapi.webhooks['ticket.sla_breached'].post.requestBody.content['application/json'].schema;
  const schemas = desk.openapi.components.schemas;
  const envelope = request.$ref ? schemas[request.$ref.split('/').pop()] : request;
  expect(envelope.properties.type.const).toBe('ticket.sla_breached');
  expect(envelope.properties.data.properties.target.anyOf.map((s: { const: string }) => s.const)).toEqual([
    'first_response',
    'resolution',
  ]);
  expect(schemas.Ticket.properties.sla).toBeDefined();
});

describe('breaches', () => {
  /** Another desk instance on the same database, its sweep every 50 ms: the service after a restart, or a replica. */
  async function instance() {
    const database = createDb(desk.databaseUrl);
    const { slaBreaches, close } = createDeskApp({
      database,
      outbound: testOutbound(),
      webhookSecrets: testWebhookSecrets(),
      logger: createLogger({ service: 'desk', level: 'error' }),
      signingKey: desk.signingKey,
      settings: {
        issuer: desk.issuer,
        audience: 'msp-api',
        rateLimitPerMinute: 600,
        tokenRateLimitPerMinute: 600,
        refreshTokenTtlDays: 30,
        slaSweepIntervalMs: 50,
      },
    });
    slaBreaches.start();
    return { stop: async () => (await slaBreaches.stop(), await close(), await database.close()) };
  }

  const breachEvents = async (tenantId: string) =>
    (await storedEvents(desk.db, tenantId)).filter((e) => e.type === 'ticket.sla_breached');

  async function until(condition: () => Promise<boolean>) {
    for (let attempt = 0; attempt < 200 && !(await condition()); attempt++)
      await new Promise((resolve) => setTimeout(resolve, 50));
  }

  /** The due times of both targets pass while no instance runs. */
  const letDueTimesPass = (ticketId: string) =>
    desk.db.$executeRawUnsafe(
      `UPDATE ticket_slas SET first_response_due_at = now() - interval '2 minutes', resolution_due_at = now() - interval '1 minute' WHERE ticket_id = $1::uuid`,
      ticketId,
    );

  test('When the due times pass while the service is down, then an instance started afterwards records ticket.sla_breached once per target', async () => {
    const { caller } = await tenantWithDefault();
    const ticket = await openTicket(caller);
    await letDueTimesPass(ticket.id);

    const restarted = await instance();
    await until(async () => (await breachEvents(caller.tenantId)).length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 300)); // several more sweeps
    await restarted.stop();

    const again = await instance();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await again.stop();

    const events = await breachEvents(caller.tenantId);
    const now = await read(caller, ticket.id);
    expect(now.sla).toMatchObject({ first_response: { status: 'breached' }, resolution: { status: 'breached' } });
    expect(events.map((e) => (e.data as { target: string }).target).sort()).toEqual(['first_response', 'resolution']);
    expect(events.map((e) => e.data)).toContainEqual({ object: now, target: 'resolution' });
    expect(events.map((e) => [e.resource_id, e.actor_client_id])).toEqual([
      [ticket.id, 'system'],
      [ticket.id, 'system'],
    ]);
    await expectDueCountsExact(caller.tenantId);
  });

  test('When two instances sweep the same database at once, then each breach is recorded exactly once', async () => {
    const { caller } = await tenantWithDefault();
    const tickets = await Promise.all(Array.from({ length: 8 }, () => openTicket(caller)));
    for (const ticket of tickets) await letDueTimesPass(ticket.id);

    const [a, b] = await Promise.all([instance(), instance()]);
    await until(async () => (await breachEvents(caller.tenantId)).length >= 16);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await Promise.all([a.stop(), b.stop()]);

    const events = await breachEvents(caller.tenantId);
    const keys = events.map((e) => `${e.resource_id} ${(e.data as { target: string }).target}`).sort();
    expect(keys).toEqual(tickets.flatMap((t) => [`${t.id} first_response`, `${t.id} resolution`]).sort());
  });

  test('When a paused or met target passes its due time, then no breach is recorded; a first response after it is breached on the spot', async () => {
    const { caller } = await tenantWithDefault();
    const waiting = await openTicket(caller);
    await comment(caller, waiting.id, false);
    await patch(caller, waiting.id, { status: 'pending' });
    // Paused ten minutes ago, due (without the pause) a minute ago.
    await desk.db.$executeRawUnsafe(
      `UPDATE ticket_slas SET resolution_stopped_at = now() - interval '10 minutes',
        resolution_due_at = now() - interval '1 minute' WHERE ticket_id = $1::uuid`,
      waiting.id,
    );
    const late = await openTicket(caller);
    await desk.db.$executeRawUnsafe(
      `UPDATE ticket_slas SET first_response_due_at = now() - interval '1 minute' WHERE ticket_id = $1::uuid`,
      late.id,
    );

    await comment(caller, late.id, false);
    const sweeper = await instance();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await sweeper.stop();

    const events = await breachEvents(caller.tenantId);
    expect(events.map((e) => [e.resource_id, (e.data as { target: string }).target])).toEqual([
      [late.id, 'first_response'],
    ]);
    expect((await read(caller, late.id)).sla!.first_response.status).toBe('breached');
    expect((await read(caller, waiting.id)).sla!.resolution.status).toBe('paused');
  });

  test("When a paused ticket's new priority puts its resolution due before the pause began, then that breach is recorded at once, and once", async () => {
    const { caller } = await tenantWithDefault();
    const ticket = await openTicket(caller, { priority: 'low' });
    await patch(caller, ticket.id, { status: 'pending' });
    // The pause began long after the creation: a target of an urgent ticket would have run out before it.
    await desk.db.$executeRawUnsafe(
      `UPDATE ticket_slas SET resolution_stopped_at = now() + interval '1 day' WHERE ticket_id = $1::uuid`,
      ticket.id,
    );

    const urgent = await patch(caller, ticket.id, { priority: 'urgent' });
    expect(urgent.sla!.resolution.status).toBe('breached');
    const sweeper = await instance();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await sweeper.stop();
    const events = await breachEvents(caller.tenantId);
    expect(events.map((e) => e.data)).toEqual([{ object: urgent, target: 'resolution' }]);
  });
});
