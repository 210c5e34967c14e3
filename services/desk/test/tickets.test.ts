import { WORKING_STATUSES } from '../src/tickets/ticket-status';
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

let desk: TestDesk;
let http: Api;
let token: string;
let tenantId: string;

beforeAll(async () => ({ desk, http, token, tenantId } = await startHelpdesk()));
afterAll(() => desk.close());

describe('POST /tickets', () => {
  test('When a ticket is created with every field, then it answers 201 with Location, the stored ticket and number 1 upward', async () => {
    const client = await createClient(http, token);
    const user = await createUser(http, token);

    const response = await http.post(`${BASE}/tickets`).set(bearer(token)).send({
      title: 'VPN drops every hour',
      description: 'Since Monday.',
      priority: 'high',
      category: 'network',
      client_id: client.id,
      assignee_id: user.id,
    });

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${BASE}/tickets/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(String),
      number: expect.any(Number),
      title: 'VPN drops every hour',
      description: 'Since Monday.',
      priority: 'high',
      category: 'network',
      status: 'open',
      client_id: client.id,
      assignee_id: user.id,
      created_at: expect.any(String),
      updated_at: response.body.created_at,
      resolved_at: null,
      closed_at: null,
      merged_into_id: null,
      merged_ids: [],
      requester: null,
      cc: [],
      cc_suggested: [],
      source: 'api',
      mailbox_id: null,
      follow_up_of: null,
      attachments: [],
      sla: null,
    });
    const stored = await desk.db.ticket.findUniqueOrThrow({ where: { id: response.body.id } });
    expect(stored).toMatchObject({
      tenantId,
      title: 'VPN drops every hour',
      status: 'open',
      priority: 'high',
      clientId: client.id,
      assigneeId: user.id,
    });
    const read = await http.get(response.headers.location!).set(bearer(token)).expect(200);
    expect(read.body).toEqual(response.body);
  });

  test('When only title and client_id are sent, then the defaults apply: normal priority, category other, no assignee, empty description', async () => {
    const client = await createClient(http, token);
    const response = await http
      .post(`${BASE}/tickets`)
      .set(bearer(token))
      .send({ title: 'Mouse', client_id: client.id })
      .expect(201);
    expect(response.body).toMatchObject({
      priority: 'normal',
      category: 'other',
      status: 'open',
      assignee_id: null,
      description: '',
    });
  });

  test('When tickets are created one after another and at once, then each tenant numbers them 1, 2, 3, … without gaps or repeats', async () => {
    const tenant = await newTenant(desk);
    const client = await createClient(http, tenant.token);
    const first = await createTicket(http, tenant.token, { client_id: client.id });
    const concurrent = await Promise.all(
      Array.from({ length: 12 }, () => createTicket(http, tenant.token, { client_id: client.id })),
    );

    expect(first.number).toBe(1);
    expect(concurrent.map((t) => t.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
    const other = await newTenant(desk);
    expect((await createTicket(http, other.token)).number).toBe(1);
  });

  test('When client_id names no client of the tenant, then it answers 422 naming the field and stores nothing', async () => {
    const foreign = await createClient(http, (await newTenant(desk)).token);
    const before = await snapshot(desk);

    for (const client_id of [foreign.id, '00000000-0000-4000-8000-000000000000']) {
      const response = await http
        .post(`${BASE}/tickets`)
        .set(bearer(token))
        .send({ title: 'x', client_id })
        .expect(422);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({
        status: 422,
        type: 'urn:msp:problem:unknown-reference',
        errors: [{ field: 'client_id', message: expect.any(String) }],
      });
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When assignee_id names a deactivated user, a user of another tenant or nobody, then it answers 422 and stores nothing', async () => {
    const client = await createClient(http, token);
    const gone = await createUser(http, token);
    await http.delete(`${BASE}/users/${gone.id}`).set(bearer(token)).expect(204);
    const foreign = await createUser(http, (await newTenant(desk)).token);
    const before = await snapshot(desk);

    for (const assignee_id of [gone.id, foreign.id, '00000000-0000-4000-8000-000000000000']) {
      const response = await http
        .post(`${BASE}/tickets`)
        .set(bearer(token))
        .send({ title: 'x', client_id: client.id, assignee_id })
        .expect(422);
      expect(response.body.errors).toEqual([{ field: 'assignee_id', message: expect.any(String) }]);
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test(
    'When tickets for a user are opened while the user is deactivated, then each is 201 ' +
      'or 422 and none still being worked on stays assigned to them',
    async () => {
      const client = await createClient(http, token);
      for (let round = 0; round < 5; round++) {
        const user = await createUser(http, token);
        const opened = Array.from({ length: 4 }, () =>
          http
            .post(`${BASE}/tickets`)
            .set(bearer(token))
            .send({ title: 'race', client_id: client.id, assignee_id: user.id }),
        );
        const [deactivated, ...created] = await Promise.all([
          http.delete(`${BASE}/users/${user.id}`).set(bearer(token)),
          ...opened,
        ]);

        expect(deactivated.status).toBe(204);
        for (const response of created) expect([201, 422]).toContain(response.status);
        const stillAssigned = await desk.db.ticket.count({
          where: { tenantId, assigneeId: user.id, status: { in: [...WORKING_STATUSES] } },
        });
        expect(stillAssigned).toBe(0);
      }
    },
  );

  test.each([
    ['a missing title', { client_id: '00000000-0000-4000-8000-000000000000' }, 'title'],
    ['an empty title', { title: '', client_id: '00000000-0000-4000-8000-000000000000' }, 'title'],
    [
      'a title over 200 characters',
      { title: 'x'.repeat(201), client_id: '00000000-0000-4000-8000-000000000000' },
      'title',
    ],
    [
      'a description over 10,000 characters',
      { title: 'x', description: 'x'.repeat(10_001), client_id: '00000000-0000-4000-8000-000000000000' },
      'description',
    ],
    [
      'an unknown priority',
      { title: 'x', priority: 'asap', client_id: '00000000-0000-4000-8000-000000000000' },
      'priority',
    ],
    [
      'an unknown category',
      { title: 'x', category: 'coffee', client_id: '00000000-0000-4000-8000-000000000000' },
      'category',
    ],
    ['a client_id that is no uuid', { title: 'x', client_id: 'acme' }, 'client_id'],
    ['a missing client_id', { title: 'x' }, 'client_id'],
    [
      'a status (new tickets are open)',
      { title: 'x', status: 'closed', client_id: '00000000-0000-4000-8000-000000000000' },
      'status',
    ],
    ['an unknown field', { title: 'x', client_id: '00000000-0000-4000-8000-000000000000', color: 'red' }, 'color'],
    ['a title of the wrong type', { title: 5, client_id: '00000000-0000-4000-8000-000000000000' }, 'title'],
    [
      'a NUL character, which PostgreSQL cannot store',
      { title: 'a\u0000b', client_id: '00000000-0000-4000-8000-000000000000' },
      'title',
    ],
  ])('When the body has %s, then it answers 400 naming the field and stores nothing', async (_case, body, field) => {
    const before = await snapshot(desk);
    const response = await http.post(`${BASE}/tickets`).set(bearer(token)).send(body).expect(400);
    expect(response.body).toMatchObject({
      status: 400,
      type: 'urn:msp:problem:validation-error',
      request_id: response.headers['x-request-id'],
    });
    expect(response.body.errors).toContainEqual({ field, message: expect.any(String) });
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the body is larger than the limit, then it answers 413 and stores nothing', async () => {
    const before = await snapshot(desk);
    const response = await http
      .post(`${BASE}/tickets`)
      .set(bearer(token))
      .send({
        title: 'big',
        description: 'x'.repeat(2 * 1024 * 1024),
        client_id: '00000000-0000-4000-8000-000000000000',
      })
      .expect(413);
    expect(response.body).toMatchObject({ status: 413, type: 'urn:msp:problem:body-too-large' });
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the body is malformed JSON or not JSON, then it answers 400 or 415', async () => {
    await http
      .post(`${BASE}/tickets`)
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"title":')
      .expect(400);
    await http.post(`${BASE}/tickets`).set(bearer(token)).set('Content-Type', 'text/plain').send('title=x').expect(415);
    await http.post(`${BASE}/tickets`).set(bearer(token)).expect(400);
  });
});

describe('GET /tickets/:id', () => {
  test('When the id is unknown or not a uuid, then it answers 404', async () => {
    await http.get(`${BASE}/tickets/00000000-0000-4000-8000-000000000000`).set(bearer(token)).expect(404);
    await http.get(`${BASE}/tickets/42`).set(bearer(token)).expect(404);
  });

  test('When the id is spelled as a URN, in braces or without hyphens, then 404; in upper case, then the same ticket', async () => {
    const client = await createClient(http, token);
    const ticket = await createTicket(http, token, { client_id: client.id });
    for (const spelling of [`urn:uuid:${ticket.id}`, `{${ticket.id}}`, ticket.id.replace(/-/g, ''), `${ticket.id}0`]) {
      const response = await http.get(`${BASE}/tickets/${encodeURIComponent(spelling)}`).set(bearer(token));
      expect([spelling, response.status, response.headers['content-type']]).toEqual([
        spelling,
        404,
        expect.stringMatching(/^application\/problem\+json/),
      ]);
    }
    const upper = await http.get(`${BASE}/tickets/${ticket.id.toUpperCase()}`).set(bearer(token)).expect(200);
    expect(upper.body).toEqual(ticket);
  });
});

describe('PATCH /tickets/:id', () => {
  test('When every mutable field is changed at once, then they are all stored and updated_at moves', async () => {
    const ticket = await createTicket(http, token);
    const client = await createClient(http, token);
    const user = await createUser(http, token);
    const changes = {
      title: 'New title',
      description: 'More detail',
      priority: 'urgent',
      category: 'security',
      status: 'in_progress',
      client_id: client.id,
      assignee_id: user.id,
    };

    const response = await http.patch(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).send(changes).expect(200);

    expect(response.body).toMatchObject({ ...changes, id: ticket.id, number: ticket.number });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(response.body.created_at));
    const stored = await desk.db.ticket.findUniqueOrThrow({ where: { id: ticket.id } });
    expect(stored).toMatchObject({
      title: 'New title',
      description: 'More detail',
      priority: 'urgent',
      category: 'security',
      status: 'in_progress',
      clientId: client.id,
      assigneeId: user.id,
    });
  });

  test('When assignee_id is set to null, then the ticket is unassigned', async () => {
    const user = await createUser(http, token);
    const ticket = await createTicket(http, token, { assignee_id: user.id });
    const response = await http
      .patch(`${BASE}/tickets/${ticket.id}`)
      .set(bearer(token))
      .send({ assignee_id: null })
      .expect(200);
    expect(response.body.assignee_id).toBeNull();
    expect((await desk.db.ticket.findUniqueOrThrow({ where: { id: ticket.id } })).assigneeId).toBeNull();
  });

  test('When the body sets what the ticket already is, then it answers 200 and nothing changes, not even updated_at', async () => {
    const ticket = await createTicket(http, token, { priority: 'low' });
    const before = await snapshot(desk);
    const response = await http
      .patch(`${BASE}/tickets/${ticket.id}`)
      .set(bearer(token))
      .send({ status: 'open', priority: 'low' })
      .expect(200);
    expect(response.body).toEqual(ticket);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the body is empty, has an unknown field or a null title, then it answers 400 and changes nothing', async () => {
    const ticket = await createTicket(http, token);
    const before = await snapshot(desk);
    for (const body of [{}, { number: 7 }, { title: null }, { status: 'done' }, { assignee_id: 'bob' }]) {
      await http.patch(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).send(body).expect(400);
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When client_id or assignee_id names nothing the tenant has, then it answers 422 and changes nothing', async () => {
    const ticket = await createTicket(http, token);
    const foreignTenant = await newTenant(desk);
    const foreignClient = await createClient(http, foreignTenant.token);
    const foreignUser = await createUser(http, foreignTenant.token);
    const before = await snapshot(desk);

    const badClient = await http
      .patch(`${BASE}/tickets/${ticket.id}`)
      .set(bearer(token))
      .send({ title: 'changed', client_id: foreignClient.id })
      .expect(422);
    expect(badClient.body.errors).toEqual([{ field: 'client_id', message: expect.any(String) }]);
    const badUser = await http
      .patch(`${BASE}/tickets/${ticket.id}`)
      .set(bearer(token))
      .send({ status: 'pending', assignee_id: foreignUser.id })
      .expect(422);
    expect(badUser.body.errors).toEqual([{ field: 'assignee_id', message: expect.any(String) }]);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the ticket is unknown, then it answers 404', async () => {
    await http
      .patch(`${BASE}/tickets/00000000-0000-4000-8000-000000000000`)
      .set(bearer(token))
      .send({ title: 'x' })
      .expect(404);
  });

  test('When two requests move one ticket at once, then they queue: the first wins and the second is judged from its result', async () => {
    const ticket = await createTicket(http, token);
    // open→closed and open→in_progress are each legal alone; after either, the other is not.
    const results = await Promise.all(
      ['closed', 'in_progress'].map((status) =>
        http.patch(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).send({ status }),
      ),
    );

    expect(results.map((r) => r.status).sort()).toEqual([200, 422]);
    const winner = results.find((r) => r.status === 200)!;
    expect((await desk.db.ticket.findUniqueOrThrow({ where: { id: ticket.id } })).status).toBe(winner.body.status);
  });
});

describe('GET /tickets', () => {
  test('When tickets are listed, then they come newest first with the filters applied and totals that match', async () => {
    const tenant = await newTenant(desk);
    const acme = await createClient(http, tenant.token);
    const other = await createClient(http, tenant.token);
    const tech = await createUser(http, tenant.token);
    const a = await createTicket(http, tenant.token, { client_id: acme.id, priority: 'high', category: 'network' });
    const b = await createTicket(http, tenant.token, {
      client_id: acme.id,
      priority: 'low',
      category: 'email',
      assignee_id: tech.id,
    });
    const c = await createTicket(http, tenant.token, { client_id: other.id, priority: 'high', category: 'email' });
    await http.patch(`${BASE}/tickets/${b.id}`).set(bearer(tenant.token)).send({ status: 'pending' }).expect(200);

    const list = async (query: string) => {
      const response = await http.get(`${BASE}/tickets${query}`).set(bearer(tenant.token)).expect(200);
      expect(response.body.pagination.total).toBe(response.body.data.length);
      return response.body.data.map((t: { id: string }) => t.id);
    };
    expect(await list('')).toEqual([c.id, b.id, a.id]);
    expect(await list('?status=open')).toEqual([c.id, a.id]);
    expect(await list('?status=pending')).toEqual([b.id]);
    expect(await list('?priority=high')).toEqual([c.id, a.id]);
    expect(await list(`?client_id=${acme.id}`)).toEqual([b.id, a.id]);
    expect(await list(`?assignee_id=${tech.id}`)).toEqual([b.id]);
    expect(await list('?category=email')).toEqual([c.id, b.id]);
    expect(
      await list(`?category=email&client_id=${acme.id}&priority=low&status=pending&assignee_id=${tech.id}`),
    ).toEqual([b.id]);
    expect(await list('?status=closed')).toEqual([]);
    expect(await list(`?client_id=00000000-0000-4000-8000-000000000000`)).toEqual([]);
    // An id compares as a value: in capitals it filters the same tickets, and the total counts them.
    expect(await list(`?client_id=${acme.id.toUpperCase()}`)).toEqual([b.id, a.id]);
    expect(await list(`?client_id=${acme.id.toUpperCase()}&priority=high`)).toEqual([a.id]);
  });

  test.each([
    ['an unknown status', '?status=done'],
    ['an unknown priority', '?priority=asap'],
    ['an unknown category', '?category=coffee'],
    ['a client_id that is no uuid', '?client_id=acme'],
    ['an assignee_id that is no uuid', '?assignee_id=bob'],
    ['an unknown parameter', '?sort=title'],
    ['page 0', '?page=0'],
    ['a page that is no number', '?page=two'],
    ['a page past 2^63', '?page=99999999999999999999'],
    ['a page past the documented maximum', '?page=1000001'],
    ['a client_id as a URN', '?client_id=urn:uuid:7a0e1c52-3f9b-4f7e-9c5a-2b8d6e4f1a30'],
  ])('When the query has %s, then it answers 400', async (_case, query) => {
    const response = await http.get(`${BASE}/tickets${query}`).set(bearer(token)).expect(400);
    expect(response.body.errors.length).toBeGreaterThan(0);
  });
});

describe('Paging GET /tickets', () => {
  let pager: Awaited<ReturnType<typeof newTenant>>;
  let ids: string[]; // newest first

  beforeAll(async () => {
    pager = await newTenant(desk);
    const client = await createClient(http, pager.token);
    const created: string[] = [];
    for (let i = 0; i < 101; i += 1) created.push((await createTicket(http, pager.token, { client_id: client.id })).id);
    ids = created.reverse();
  }, 60_000);

  const get = (query: string) => http.get(`${BASE}/tickets${query}`).set(bearer(pager.token));
  const links = (header: string) =>
    Object.fromEntries(
      header.split(', ').map((part) => {
        const [, url, rel] = /^<([^>]+)>; rel="([a-z]+)"$/.exec(part)!;
        const parsed = new URL(url!);
        return [
          rel,
          `${parsed.searchParams.get('page')}/${parsed.searchParams.get('per_page')}/${parsed.searchParams.get('status')}`,
        ];
      }),
    );

  test('When per_page is 1, then each page holds one ticket in order and the Link header points to first, next and last', async () => {
    const first = await get('?per_page=1&status=open').expect(200);
    expect(first.body.data.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    expect(first.body.pagination).toEqual({ page: 1, per_page: 1, total: 101, total_pages: 101 });
    expect(links(first.headers.link!)).toEqual({ first: '1/1/open', next: '2/1/open', last: '101/1/open' });

    const second = await get('?per_page=1&page=2&status=open').expect(200);
    expect(second.body.data[0].id).toBe(ids[1]);
    expect(links(second.headers.link!)).toEqual({
      first: '1/1/open',
      prev: '1/1/open',
      next: '3/1/open',
      last: '101/1/open',
    });
  });

  test('When per_page is 100, then the first page has 100 and the last page the remaining one, with no next link', async () => {
    const first = await get('?per_page=100').expect(200);
    expect(first.body.data.map((t: { id: string }) => t.id)).toEqual(ids.slice(0, 100));
    expect(first.body.pagination).toEqual({ page: 1, per_page: 100, total: 101, total_pages: 2 });

    const last = await get('?per_page=100&page=2').expect(200);
    expect(last.body.data.map((t: { id: string }) => t.id)).toEqual(ids.slice(100));
    expect(links(last.headers.link!)).toEqual({ first: '1/100/null', prev: '1/100/null', last: '2/100/null' });
  });

  test('When no paging is asked for, then it is page 1 of 25', async () => {
    const response = await get('').expect(200);
    expect(response.body.data).toHaveLength(25);
    expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total: 101, total_pages: 5 });
  });

  test('When the page is past the last, then the list is empty and prev points to the last page', async () => {
    const response = await get('?per_page=50&page=9').expect(200);
    expect(response.body.data).toEqual([]);
    expect(links(response.headers.link!)).toEqual({ first: '1/50/null', prev: '3/50/null', last: '3/50/null' });
  });

  test('When the page is the documented maximum at 100 per page, then the list is empty, not an OFFSET the database refuses', async () => {
    const response = await get('?per_page=100&page=1000000').expect(200);
    expect(response.body.data).toEqual([]);
    expect(response.body.pagination).toEqual({ page: 1000000, per_page: 100, total: 101, total_pages: 2 });
  });

  test.each(['0', '101', '-1', '2.5', 'all'])(
    'When per_page is %s, then it answers 400 naming per_page, never capping it',
    async (perPage) => {
      const response = await get(`?per_page=${perPage}`).expect(400);
      expect(response.body.errors).toEqual([{ field: 'per_page', message: expect.any(String) }]);
    },
  );
});
