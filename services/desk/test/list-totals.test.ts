import { api, type Api } from './support/api';
import { startDesk, type TestDesk } from './support/desk';
import {
  BASE,
  TARGETS,
  bearer,
  createClient,
  createTicket,
  createUser,
  newTenant,
  snapshot,
  unique,
} from './support/helpdesk';

/*
 * Every list's `total` is exact after the API's writes, with each filter, and kept in the
 * writing transaction (list_counts, time_entry_minutes, ticket_counts); `after` walks a list once,
 * in its order; a bad `after` is a 400.
 */

let desk: TestDesk;
let http: Api;
let token: string;
let tenantId: string;

beforeAll(async () => {
  desk = await startDesk();
  http = api(desk);
  ({ token, tenantId } = await newTenant(desk));
});
afterAll(() => desk.close());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
type Page = {
  data: { id: string }[];
  pagination: { total: number; page?: number; per_page: number; total_pages: number };
  totals?: { minutes: number; billable_minutes: number };
};

async function get(path: string, as = token): Promise<Page> {
  return (await http.get(`${BASE}${path}`).set(bearer(as)).expect(200)).body as Page;
}

/** The `next` link of a response, as a path under BASE, or null. */
function nextOf(link: string | undefined): string | null {
  const next = /<([^>]+)>; rel="next"/.exec(link ?? '');
  if (!next) return null;
  const url = new URL(next[1]!);
  return `${url.pathname.slice(BASE.length)}${url.search}`;
}

/** Walks a list from its first page by keyset (`after` its last item, then `Link` next) to the end; every page's total too. */
async function walk(
  path: string,
  perPage: number,
  as = token,
): Promise<{ ids: string[]; totals: number[]; afters: number }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let afters = 0;
  const base = `${path}${path.includes('?') ? '&' : '?'}per_page=${perPage}`;
  let url: string | null = base;
  while (url) {
    const response = await http.get(`${BASE}${url}`).set(bearer(as)).expect(200);
    const body = response.body as Page;
    if (url.includes('after=')) {
      afters += 1;
      expect(body.pagination.page).toBeUndefined();
    }
    ids.push(...body.data.map((item) => item.id));
    totals.push(body.pagination.total);
    // The first page's next is page=2; from there on, keyset pages (whose next carries `after`).
    const next = nextOf(response.headers.link);
    url = next && afters === 0 ? `${base}&after=${ids[ids.length - 1]}` : next;
  }
  return { ids, totals, afters };
}

/** The list's order, read page by page (page=N), for comparison. */
async function byPages(path: string, as = token): Promise<string[]> {
  const first = await get(`${path}${path.includes('?') ? '&' : '?'}per_page=100`, as);
  expect(first.pagination.total).toBeLessThanOrEqual(100);
  return first.data.map((item) => item.id);
}

/** Every counter of desk's own lists in list_counts and time_entry_minutes against count(*) and sum() of its rows. */
async function expectCountersExact(tenant: string) {
  const stored = await desk.db.$queryRawUnsafe<{ key: string }[]>(
    `SELECT list || ':' || dimension || '=' || value || ':' || count AS key FROM list_counts WHERE tenant_id = $1::uuid AND count <> 0
       AND list NOT IN ('audit-events', 'webhooks', 'webhook-deliveries') -- the events package's lists: its own tests check them
     UNION ALL SELECT 'minutes:' || dimension || '=' || value || ':' || minutes || '/' || billable_minutes FROM time_entry_minutes
      WHERE tenant_id = $1::uuid AND (minutes <> 0 OR billable_minutes <> 0)
     UNION ALL SELECT 'amounts:' || dimension || '=' || value || ':' || currency || ':' || amount || '/' || billable_amount FROM time_entry_amounts
      WHERE tenant_id = $1::uuid AND (amount <> 0 OR billable_amount <> 0)`,
    tenant,
  );
  const actual = await desk.db.$queryRawUnsafe<{ key: string }[]>(
    `WITH e AS (SELECT * FROM time_entries WHERE tenant_id = $1::uuid),
          keys AS (SELECT e.*, k.dimension, k.value FROM e CROSS JOIN LATERAL (VALUES ('all', ''), ('client_id', client_id::text), ('user_id', user_id::text),
                                                                             ('date', date::text), ('billable', billable::text)) AS k(dimension, value))
     SELECT 'time_entries:' || dimension || '=' || value || ':' || count(*) AS key FROM keys GROUP BY dimension, value
     UNION ALL SELECT 'minutes:' || dimension || '=' || value || ':' || sum(minutes) || '/'
       || coalesce(sum(minutes) FILTER (WHERE billable), 0) FROM keys GROUP BY dimension, value
     UNION ALL SELECT 'amounts:' || dimension || '=' || value || ':' || currency || ':'
       || sum((minutes::bigint * hourly_rate + 30) / 60) || '/'
       || coalesce(sum((minutes::bigint * hourly_rate + 30) / 60) FILTER (WHERE billable), 0)
       FROM keys WHERE hourly_rate IS NOT NULL GROUP BY dimension, value, currency
      HAVING sum((minutes::bigint * hourly_rate + 30) / 60) <> 0 OR coalesce(sum((minutes::bigint * hourly_rate + 30) / 60) FILTER (WHERE billable), 0) <> 0
     UNION ALL SELECT 'clients:all=:' || count(*) FROM clients WHERE tenant_id = $1::uuid HAVING count(*) > 0
     UNION ALL SELECT 'calendars:all=:' || count(*) FROM calendars WHERE tenant_id = $1::uuid HAVING count(*) > 0
     UNION ALL SELECT 'sla_policies:all=:' || count(*) FROM sla_policies WHERE tenant_id = $1::uuid HAVING count(*) > 0
     UNION ALL SELECT 'users:all=:' || count(*) FROM users WHERE tenant_id = $1::uuid HAVING count(*) > 0
     UNION ALL SELECT 'users:active=' || active || ':' || count(*) FROM users WHERE tenant_id = $1::uuid GROUP BY active
     UNION ALL SELECT 'api_clients:all=:' || count(*) FROM api_clients WHERE tenant_id = $1::uuid HAVING count(*) > 0
     UNION ALL SELECT 'api_clients:live=' || (revoked_at IS NULL) || ':' || count(*) FROM api_clients WHERE tenant_id = $1::uuid GROUP BY revoked_at IS NULL`,
    tenant,
  );
  expect(stored.map((row) => row.key).sort()).toEqual(actual.map((row) => row.key).sort());
}

async function record(ticketId: string, body: Record<string, unknown>) {
  return (await http.post(`${BASE}/tickets/${ticketId}/time-entries`).set(bearer(token)).send(body).expect(201))
    .body as { id: string };
}

describe('GET /time-entries totals', () => {
  test(
    'When entries are recorded, changed, moved with their ticket and deleted through the ' +
      'API, then the total and totals of every single filter are exact',
    async () => {
      const [alice, bob] = [await createUser(http, token), await createUser(http, token)];
      const [first, second] = [await createTicket(http, token), await createTicket(http, token)];
      const e1 = await record(first.id, { user_id: alice.id, minutes: 30, date: '2026-11-02', billable: true });
      const e2 = await record(first.id, { user_id: bob.id, minutes: 45, date: '2026-11-03', billable: false });
      const e3 = await record(second.id, { user_id: alice.id, minutes: 60, date: '2026-11-04' });
      await record(second.id, { user_id: bob.id, minutes: 15, date: '2026-10-31', billable: false });
      await http
        .patch(`${BASE}/time-entries/${e1.id}`)
        .set(bearer(token))
        .send({ minutes: 90, date: '2026-11-05', user_id: bob.id })
        .expect(200);
      await http.patch(`${BASE}/time-entries/${e2.id}`).set(bearer(token)).send({ billable: true }).expect(200);
      await http.delete(`${BASE}/time-entries/${e3.id}`).set(bearer(token)).expect(204);
      // The second ticket moves to the first ticket's client: its entries follow (a trigger), and so do the counters.
      await http
        .patch(`${BASE}/tickets/${second.id}`)
        .set(bearer(token))
        .send({ client_id: first.client_id })
        .expect(200);

      // Now: e1 bob 90 billable 11-05, e2 bob 45 billable 11-03, e4 bob 15 not billable 10-31; all on first's client.
      const cases: [string, number, number, number][] = [
        ['', 3, 150, 135],
        [`client_id=${first.client_id}`, 3, 150, 135],
        [`client_id=${second.client_id}`, 0, 0, 0],
        [`user_id=${bob.id}`, 3, 150, 135],
        [`user_id=${alice.id}`, 0, 0, 0],
        ['billable=true', 2, 135, 135],
        ['billable=false', 1, 15, 0],
        ['from=2026-11-01', 2, 135, 135],
        ['to=2026-11-03', 2, 60, 45],
        ['from=2026-11-03&to=2026-11-04', 1, 45, 45],
        ['from=2026-11-05&to=2026-11-05', 1, 90, 90],
        // Combined filters count their entries.
        [`user_id=${bob.id}&billable=true&from=2026-11-04`, 1, 90, 90],
      ];
      for (const [filter, total, minutes, billable] of cases) {
        const page = await get(`/time-entries?per_page=2${filter ? `&${filter}` : ''}`);
        expect({ filter, total: page.pagination.total, totals: page.totals, items: page.data.length }).toEqual({
          filter,
          total,
          totals: { minutes, billable_minutes: billable, amounts: [] },
          items: Math.min(total, 2),
        });
      }
      await expectCountersExact(tenantId);
    },
  );

  test('When a request is rejected, then no counter changes', async () => {
    const user = await createUser(http, token);
    const ticket = await createTicket(http, token);
    await record(ticket.id, { user_id: user.id, minutes: 30 });
    const before = await snapshot(desk);
    const totals = await get('/time-entries?per_page=1');

    await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(204);
    const afterDeactivation = await snapshot(desk);
    // An entry for a deactivated user (422), a name taken twice (409), an entry out of range (400).
    await http
      .post(`${BASE}/tickets/${ticket.id}/time-entries`)
      .set(bearer(token))
      .send({ user_id: user.id, minutes: 30 })
      .expect(422);
    const client = await createClient(http, token);
    const withClient = await snapshot(desk);
    await http.post(`${BASE}/clients`).set(bearer(token)).send({ name: client.name }).expect(409);
    await http
      .post(`${BASE}/tickets/${ticket.id}/time-entries`)
      .set(bearer(token))
      .send({ user_id: user.id, minutes: 2000 })
      .expect(400);

    expect(await snapshot(desk)).toEqual(withClient);
    expect(afterDeactivation.list_counts).not.toEqual(before.list_counts); // the deactivation itself counted
    expect((await get('/time-entries?per_page=1')).totals).toEqual(totals.totals);
    await expectCountersExact(tenantId);
  });
});

describe('time entries written in statements of many rows', () => {
  test(
    'When entries are inserted, changed and deleted by SQL statements of thousands of rows, then every ' +
      'counter and minute total is exact, and an update of other columns writes no counter row',
    async () => {
      const tenant = await newTenant(desk);
      const [alice, bob] = [await createUser(http, tenant.token), await createUser(http, tenant.token)];
      const [first, second] = [await createTicket(http, tenant.token), await createTicket(http, tenant.token)];
      const sql = (text: string) => desk.db.$executeRawUnsafe(text, tenant.tenantId);
      // Priced in two currencies, or not at all, as entries are.
      await sql(
        `INSERT INTO time_entries (tenant_id, ticket_id, client_id, user_id, minutes, date, billable, hourly_rate, currency)
       SELECT $1::uuid, CASE WHEN n % 2 = 0 THEN '${first.id}'::uuid ELSE '${second.id}'::uuid END,
              CASE WHEN n % 2 = 0 THEN '${first.client_id}'::uuid ELSE '${second.client_id}'::uuid END,
              CASE WHEN n % 3 = 0 THEN '${alice.id}'::uuid ELSE '${bob.id}'::uuid END, 5 + n % 60, date '2026-10-01' + n % 40, n % 4 <> 0,
              CASE WHEN n % 5 = 0 THEN NULL ELSE 1000 + n * 7 END, CASE WHEN n % 7 = 0 THEN 'CHF' ELSE 'EUR' END
         FROM generate_series(1, 3000) AS n`,
      );
      await expectCountersExact(tenant.tenantId);
      await sql(`UPDATE time_entries SET minutes = minutes + 7 WHERE tenant_id = $1::uuid AND date < '2026-10-10'`);
      await sql(
        `UPDATE time_entries SET billable = NOT billable, date = date + 3 WHERE tenant_id = $1::uuid AND date BETWEEN '2026-10-10' AND '2026-10-20'`,
      );
      await sql(`UPDATE time_entries SET hourly_rate = CASE WHEN hourly_rate IS NULL THEN 4242 WHEN minutes % 2 = 0
      THEN NULL ELSE hourly_rate + 1 END WHERE tenant_id = $1::uuid AND date > '2026-10-25'`);
      await expectCountersExact(tenant.tenantId);

      const versions = () =>
        desk.db.$queryRawUnsafe<{ key: string }[]>(
          `SELECT 'c:' || list || dimension || value || xmin::text || ctid::text AS key FROM list_counts WHERE tenant_id = $1::uuid
         UNION ALL SELECT 'm:' || dimension || value || xmin::text || ctid::text FROM time_entry_minutes WHERE tenant_id = $1::uuid
         UNION ALL SELECT 'a:' || dimension || value || currency || xmin::text || ctid::text FROM time_entry_amounts WHERE tenant_id = $1::uuid ORDER BY 1`,
          tenant.tenantId,
        );
      const before = await versions();
      await sql(`UPDATE time_entries SET updated_at = now() + interval '1 minute' WHERE tenant_id = $1::uuid`);
      await sql(
        `UPDATE time_entries SET minutes = minutes, billable = billable, hourly_rate = hourly_rate WHERE tenant_id = $1::uuid`,
      );
      expect(await versions()).toEqual(before);

      await sql(`DELETE FROM time_entries WHERE tenant_id = $1::uuid AND (minutes % 5 = 0 OR date > '2026-11-05')`);
      await expectCountersExact(tenant.tenantId);
    },
  );
});

describe('GET list totals of clients, users, API clients, calendars and SLA policies', () => {
  test("When items are created, deleted and deactivated through the API, then each list's total is exact", async () => {
    const tenant = await newTenant(desk);
    const as = tenant.token;
    const totalOf = async (path: string) => (await get(`${path}?per_page=1`, as)).pagination.total;
    const [apiClientsBefore, usersBefore] = [await totalOf('/api-clients'), await totalOf('/users')];

    for (let i = 0; i < 3; i += 1) await createClient(http, as);
    const users = [await createUser(http, as), await createUser(http, as), await createUser(http, as)];
    await http.delete(`${BASE}/users/${users[0]!.id}`).set(bearer(as)).expect(204);
    const integration = (
      await http
        .post(`${BASE}/api-clients`)
        .set(bearer(as))
        .send({ name: unique('Reporting'), scopes: ['read:tickets'] })
        .expect(201)
    ).body as { id: string };
    await http
      .post(`${BASE}/api-clients`)
      .set(bearer(as))
      .send({ name: unique('Billing'), scopes: ['read:tickets'] })
      .expect(201);
    await http.delete(`${BASE}/api-clients/${integration.id}`).set(bearer(as)).expect(204);
    const calendar = { time_zone: 'Europe/Berlin', hours: { mon: [{ start: '08:00', end: '17:00' }] } };
    const kept = (
      await http
        .post(`${BASE}/calendars`)
        .set(bearer(as))
        .send({ name: unique('Office'), ...calendar })
        .expect(201)
    ).body as { id: string };
    const gone = (
      await http
        .post(`${BASE}/calendars`)
        .set(bearer(as))
        .send({ name: unique('Office'), ...calendar })
        .expect(201)
    ).body as { id: string };
    await http.delete(`${BASE}/calendars/${gone.id}`).set(bearer(as)).expect(204);
    const policy = (
      await http
        .post(`${BASE}/sla-policies`)
        .set(bearer(as))
        .send({ name: unique('Standard'), calendar_id: kept.id, targets: TARGETS })
        .expect(201)
    ).body as { id: string };
    await http
      .post(`${BASE}/sla-policies`)
      .set(bearer(as))
      .send({ name: unique('Premium'), targets: TARGETS })
      .expect(201);
    await http.delete(`${BASE}/sla-policies/${policy.id}`).set(bearer(as)).expect(204);

    expect({
      clients: await totalOf('/clients'),
      users: await totalOf('/users'),
      apiClients: await totalOf('/api-clients'),
      calendars: await totalOf('/calendars'),
      policies: await totalOf('/sla-policies'),
    }).toEqual({ clients: 3, users: usersBefore + 2, apiClients: apiClientsBefore + 1, calendars: 1, policies: 1 });
    await expectCountersExact(tenant.tenantId);
  });
});

describe('after (keyset paging)', () => {
  test('When a list is walked by Link next, then every item comes exactly once, in the order of its pages, with the same total on every page', async () => {
    const tenant = await newTenant(desk);
    const as = tenant.token;
    const user = await createUser(http, as);
    const client = await createClient(http, as);
    const tickets = [];
    for (let i = 0; i < 7; i += 1)
      tickets.push(
        await createTicket(http, as, i % 2 ? { client_id: client.id, assignee_id: user.id } : { assignee_id: user.id }),
      );
    const ticket = tickets[0]!;
    for (let i = 0; i < 7; i += 1) {
      await http
        .post(`${BASE}/tickets/${ticket.id}/comments`)
        .set(bearer(as))
        .send({ body: `Note ${i}` })
        .expect(201);
      // Several entries share a date, and so the order goes on to created_at and id.
      await http
        .post(`${BASE}/tickets/${ticket.id}/time-entries`)
        .set(bearer(as))
        .send({ user_id: user.id, minutes: 10 + i, date: `2026-11-0${1 + (i % 3)}`, billable: i % 2 === 0 })
        .expect(201);
    }
    for (let i = 0; i < 4; i += 1) {
      await http
        .post(`${BASE}/calendars`)
        .set(bearer(as))
        .send({
          name: unique('Office'),
          time_zone: 'Europe/Berlin',
          hours: { mon: [{ start: '08:00', end: '17:00' }] },
        })
        .expect(201);
      await http
        .post(`${BASE}/sla-policies`)
        .set(bearer(as))
        .send({ name: unique('Policy'), targets: TARGETS })
        .expect(201);
      await http
        .post(`${BASE}/api-clients`)
        .set(bearer(as))
        .send({ name: unique('Integration'), scopes: ['read:tickets'] })
        .expect(201);
      await createUser(http, as);
    }

    const lists = [
      '/tickets',
      `/tickets?client_id=${client.id}`,
      '/tickets?status=open',
      `/tickets?assignee_id=${user.id}`,
      '/tickets?sla_status=running',
      '/time-entries',
      '/time-entries?billable=true',
      `/time-entries?user_id=${user.id}`,
      '/time-entries?from=2026-11-02',
      `/tickets/${ticket.id}/time-entries`,
      `/tickets/${ticket.id}/comments`,
      '/clients',
      '/users',
      '/api-clients',
      '/calendars',
      '/sla-policies',
    ];
    for (const list of lists) {
      const expected = await byPages(list, as);
      const walked = await walk(list, 2, as);
      expect({ list, ids: walked.ids }).toEqual({ list, ids: expected });
      expect(new Set(walked.totals)).toEqual(new Set([expected.length]));
      if (expected.length > 2) expect(walked.afters).toBeGreaterThan(0);
    }
  });

  test('When the last page is full, then the page after it is empty with the same total and no next', async () => {
    const tenant = await newTenant(desk);
    const clients = [await createClient(http, tenant.token), await createClient(http, tenant.token)];
    const response = await http
      .get(`${BASE}/clients?per_page=2&after=${clients[0]!.id}`)
      .set(bearer(tenant.token))
      .expect(200);
    expect(response.body).toEqual({ data: [], pagination: { per_page: 2, total: 2, total_pages: 1 } });
    expect(response.headers.link).not.toContain('rel="next"');
  });

  test('When after names no item of the list, is combined with page > 1, or with q or sort, then it answers 400 and nothing else', async () => {
    const other = await newTenant(desk);
    const othersClient = await createClient(http, other.token);
    // Another tenant's ticket: an item of its list, so only the tenant scope of the `after` lookup refuses it.
    const othersTicket = await createTicket(http, other.token);
    const ticket = await createTicket(http, token);
    const lists = [
      '/tickets',
      '/time-entries',
      `/tickets/${ticket.id}/time-entries`,
      `/tickets/${ticket.id}/comments`,
      '/clients',
      '/users',
      '/api-clients',
      '/calendars',
      '/sla-policies',
    ];
    for (const list of lists) {
      for (const after of [UNKNOWN, othersClient.id, othersTicket.id]) {
        const response = await http.get(`${BASE}${list}?after=${after}`).set(bearer(token)).expect(400);
        expect({ list, errors: response.body.errors }).toEqual({
          list,
          errors: [{ field: 'after', message: expect.stringContaining('names no item') }],
        });
      }
      const both = await http.get(`${BASE}${list}?after=${UNKNOWN}&page=2`).set(bearer(token)).expect(400);
      expect({ list, errors: both.body.errors }).toEqual({
        list,
        errors: [{ field: 'after', message: expect.stringContaining('page') }],
      });
    }
    const search = await http.get(`${BASE}/tickets?q=printer&after=${ticket.id}`).set(bearer(token)).expect(400);
    expect(search.body.errors).toEqual([{ field: 'after', message: expect.stringContaining('not with q or sort') }]);
    await http.get(`${BASE}/tickets?sort=sla_due_at&after=${ticket.id}`).set(bearer(token)).expect(400);
    await http.get(`${BASE}/clients?after=not-a-uuid`).set(bearer(token)).expect(400);
  });
});
