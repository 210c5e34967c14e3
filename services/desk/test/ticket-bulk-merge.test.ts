import { storedEvents } from '@msp/testkit';
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

beforeAll(async () => ({ desk, http, token } = await startHelpdesk()));
afterAll(() => desk.close());

const MISSING = '00000000-0000-4000-8000-000000000000';
const bulk = (body: unknown, as = token) =>
  http
    .post(`${BASE}/tickets/bulk`)
    .set(bearer(as))
    .send(body as object);
const merge = (targetId: string, source_ids: string[], as = token) =>
  http.post(`${BASE}/tickets/${targetId}/merge`).set(bearer(as)).send({ source_ids });
const read = async (id: string) => (await http.get(`${BASE}/tickets/${id}`).set(bearer(token)).expect(200)).body;
const setStatus = (id: string, status: string) =>
  http.patch(`${BASE}/tickets/${id}`).set(bearer(token)).send({ status }).expect(200);

describe('POST /tickets/bulk', () => {
  test('When ids hold 0 or 101 ids, a duplicate, or changes nothing to change, then it answers 400 and changes nothing', async () => {
    const a = await createTicket(http, token);
    const b = await createTicket(http, token);
    const before = await snapshot(desk);
    const many = Array.from({ length: 101 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

    for (const body of [
      { ids: [], changes: { priority: 'high' } },
      { ids: many, changes: { priority: 'high' } },
      { ids: [a.id, b.id, a.id], changes: { priority: 'high' } },
      { ids: [a.id], changes: {} },
      { ids: [a.id], changes: { title: 'not a bulk field' } },
      { ids: ['not-a-uuid'], changes: { priority: 'high' } },
      { ids: [a.id], changes: { priority: 'high' }, if_match: { [b.id]: '"x"' } },
    ]) {
      const response = await bulk(body).expect(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When some ids succeed and others fail, then each gets its own result in order (200, 404, 422, 412) and only the failures stay unchanged', async () => {
    const user = await createUser(http, token);
    const ok = await createTicket(http, token);
    const closed = await createTicket(http, token);
    await setStatus(closed.id, 'closed');
    const resolved = await createTicket(http, token);
    await setStatus(resolved.id, 'resolved');
    const stale = await createTicket(http, token);
    const staleTag = (await http.get(`${BASE}/tickets/${stale.id}`).set(bearer(token)).expect(200)).headers.etag;
    await http.patch(`${BASE}/tickets/${stale.id}`).set(bearer(token)).send({ priority: 'low' }).expect(200);
    const current = await createTicket(http, token);
    const currentTag = (await http.get(`${BASE}/tickets/${current.id}`).set(bearer(token)).expect(200)).headers.etag;
    const foreign = await createTicket(http, (await newTenant(desk)).token);

    const response = await bulk({
      ids: [ok.id, MISSING, foreign.id, closed.id, resolved.id, stale.id, current.id],
      changes: { status: 'in_progress', assignee_id: user.id },
      if_match: { [stale.id]: staleTag, [current.id]: currentTag },
    }).expect(200);

    const results = response.body.results as {
      id: string;
      status: number;
      ticket?: Record<string, unknown>;
      problem?: Record<string, unknown>;
    }[];
    expect(results.map((result) => [result.id, result.status])).toEqual([
      [ok.id, 200],
      [MISSING, 404],
      [foreign.id, 404],
      [closed.id, 422],
      [resolved.id, 422],
      [stale.id, 412],
      [current.id, 200],
    ]);
    expect(results[0]!.ticket).toMatchObject({ id: ok.id, status: 'in_progress', assignee_id: user.id });
    expect(results[0]!.ticket).toEqual(await read(ok.id));
    expect(results[1]!.problem).toMatchObject({ status: 404, type: 'urn:msp:problem:not-found' });
    expect(results[3]!.problem).toMatchObject({
      status: 422,
      type: 'urn:msp:problem:ticket-closed',
      current_status: 'closed',
    });
    expect(results[4]!.problem).toMatchObject({
      status: 422,
      type: 'urn:msp:problem:illegal-transition',
      current_status: 'resolved',
      allowed_transitions: ['open', 'closed'],
    });
    expect(results[5]!.problem).toMatchObject({ status: 412, type: 'urn:msp:problem:precondition-failed' });
    expect(await read(resolved.id)).toMatchObject({ status: 'resolved', assignee_id: null });
    expect(await read(stale.id)).toMatchObject({ status: 'open', priority: 'low', assignee_id: null });
    expect(await read(current.id)).toMatchObject({ status: 'in_progress', assignee_id: user.id });
  });

  test('When ids and if_match keys are spelled in capitals, then they are the same ids: the stale one answers 412, the current one is changed', async () => {
    const stale = await createTicket(http, token);
    const staleTag = (await http.get(`${BASE}/tickets/${stale.id}`).set(bearer(token)).expect(200)).headers.etag;
    await http.patch(`${BASE}/tickets/${stale.id}`).set(bearer(token)).send({ priority: 'low' }).expect(200);
    const current = await createTicket(http, token);
    const currentTag = (await http.get(`${BASE}/tickets/${current.id}`).set(bearer(token)).expect(200)).headers.etag;

    const response = await bulk({
      ids: [stale.id, current.id.toUpperCase()],
      changes: { priority: 'urgent' },
      if_match: { [stale.id.toUpperCase()]: staleTag, [current.id.toUpperCase()]: currentTag },
    }).expect(200);

    expect(response.body.results.map((result: { id: string; status: number }) => [result.id, result.status])).toEqual([
      [stale.id, 412],
      [current.id, 200],
    ]);
    expect(await read(stale.id)).toMatchObject({ priority: 'low' });
    expect(await read(current.id)).toMatchObject({ priority: 'urgent' });
  });

  test(
    'When if_match names an id twice in two letter cases, a key that is no id, or an id not in ids, ' +
      'then it answers 400 validation-error naming the key and changes nothing',
    async () => {
      const a = await createTicket(http, token);
      const b = await createTicket(http, token);
      const before = await snapshot(desk);
      for (const [ifMatch, field] of [
        [{ [a.id]: '"x"', [a.id.toUpperCase()]: '"y"' }, 'if_match'],
        [{ 'not-a-uuid': '"x"' }, 'if_match.not-a-uuid'],
        [{ [b.id.toUpperCase()]: '"x"' }, `if_match.${b.id}`],
      ] as const) {
        const response = await bulk({ ids: [a.id], changes: { priority: 'high' }, if_match: ifMatch }).expect(400);
        expect(response.body.type).toBe('urn:msp:problem:validation-error');
        expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual([field]);
      }
      expect(await snapshot(desk)).toEqual(before);
    },
  );

  test('When tickets are changed in bulk, then each records the ticket.updated its PATCH would', async () => {
    const { token: own, tenantId: tenant } = await newTenant(desk);
    const client = await createClient(http, own);
    const first = await createTicket(http, own, { client_id: client.id });
    const second = await createTicket(http, own, { client_id: client.id });

    await bulk({ ids: [second.id, first.id], changes: { priority: 'urgent' } }, own).expect(200);

    const updates = (await storedEvents(desk.db, tenant)).filter((event) => event.type === 'ticket.updated');
    expect(updates.map((event) => [event.resource_id, event.changes])).toEqual([
      [second.id, { priority: { from: 'normal', to: 'urgent' } }],
      [first.id, { priority: { from: 'normal', to: 'urgent' } }],
    ]);
  });
});

describe('POST /tickets/:id/merge', () => {
  async function withActivity() {
    const user = await createUser(http, token);
    const ticket = await createTicket(http, token);
    const comment = (
      await http
        .post(`${BASE}/tickets/${ticket.id}/comments`)
        .set(bearer(token))
        .send({ body: `Note on ${ticket.number}` })
        .expect(201)
    ).body;
    const entry = (
      await http
        .post(`${BASE}/tickets/${ticket.id}/time-entries`)
        .set(bearer(token))
        .send({ user_id: user.id, minutes: 15 })
        .expect(201)
    ).body;
    return { ticket, comment, entry };
  }

  test(
    'When tickets are merged, then comments and time entries move with author and time kept, sources ' +
      'close with merged_into_id, the target lists merged_ids and an internal note',
    async () => {
      const target = await createTicket(http, token);
      const one = await withActivity();
      const two = await withActivity();
      await setStatus(two.ticket.id, 'in_progress');

      const response = await merge(target.id, [one.ticket.id, two.ticket.id]).expect(200);

      expect(response.body).toMatchObject({
        id: target.id,
        status: 'open',
        merged_into_id: null,
        merged_ids: [one.ticket.id, two.ticket.id],
      });
      expect(response.body).toEqual(await read(target.id));
      for (const source of [one, two]) {
        expect(await read(source.ticket.id)).toMatchObject({
          status: 'closed',
          merged_into_id: target.id,
          merged_ids: [],
          closed_at: expect.any(String),
        });
      }
      const comments = (await http.get(`${BASE}/tickets/${target.id}/comments`).set(bearer(token)).expect(200)).body
        .data;
      expect(comments).toEqual([
        { ...one.comment, ticket_id: target.id, merged_from_ticket_id: one.ticket.id },
        { ...two.comment, ticket_id: target.id, merged_from_ticket_id: two.ticket.id },
        expect.objectContaining({
          internal: true,
          merged_from_ticket_id: null,
          body: expect.stringContaining(`#${one.ticket.number}, #${two.ticket.number}`),
        }),
      ]);
      const entries = (await http.get(`${BASE}/tickets/${target.id}/time-entries`).set(bearer(token)).expect(200)).body
        .data;
      expect(entries.map((entry: { id: string }) => entry.id).sort()).toEqual([one.entry.id, two.entry.id].sort());
      for (const entry of entries) {
        const original = [one.entry, two.entry].find((e) => e.id === entry.id);
        expect(entry).toMatchObject({
          ticket_id: target.id,
          client_id: target.client_id,
          user_id: original.user_id,
          minutes: 15,
          created_at: original.created_at,
        });
      }
      expect(
        (await http.get(`${BASE}/tickets/${one.ticket.id}/comments`).set(bearer(token)).expect(200)).body.data,
      ).toEqual([]);
    },
  );

  test('When tickets are merged, then each source records ticket.updated and the target ticket.merged with the source ids', async () => {
    const { token: own, tenantId: tenant } = await newTenant(desk);
    const target = await createTicket(http, own);
    const source = await createTicket(http, own);
    await merge(target.id, [source.id], own).expect(200);

    const events = (await storedEvents(desk.db, tenant)).filter(
      (event) => !['ticket.created', 'client.created'].includes(event.type),
    );
    expect(events.map((event) => [event.type, event.resource_id])).toEqual([
      ['ticket.updated', source.id],
      ['comment.created', expect.any(String)],
      ['ticket.merged', target.id],
    ]);
    expect(events[0]!.changes).toMatchObject({
      status: { from: 'open', to: 'closed' },
      merged_into_id: { from: null, to: target.id },
    });
    expect(events[2]!.data).toMatchObject({
      object: { id: target.id, merged_ids: [source.id] },
      source_ids: [source.id],
    });
  });

  test('When the target is closed, among its sources, or a source was merged before, then it answers 422 and changes nothing', async () => {
    const closed = await createTicket(http, token);
    await setStatus(closed.id, 'closed');
    const target = await createTicket(http, token);
    const merged = await createTicket(http, token);
    await merge(target.id, [merged.id]).expect(200);
    const other = (await withActivity()).ticket;
    const before = await snapshot(desk);

    const cases: [string, string[], string][] = [
      [closed.id, [other.id], 'urn:msp:problem:ticket-closed'],
      [target.id, [other.id, target.id], 'urn:msp:problem:merge-into-itself'],
      [target.id, [other.id, merged.id], 'urn:msp:problem:already-merged'],
      [other.id, [merged.id], 'urn:msp:problem:already-merged'],
    ];
    for (const [targetId, sources, type] of cases) {
      const response = await merge(targetId, sources).expect(422);
      expect(response.body).toMatchObject({ status: 422, type });
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test("When a source or the target is another tenant's or unknown, then it answers 404 and changes nothing", async () => {
    const foreign = await createTicket(http, (await newTenant(desk)).token);
    const target = await createTicket(http, token);
    const mine = (await withActivity()).ticket;
    const before = await snapshot(desk);

    await merge(target.id, [mine.id, foreign.id]).expect(404);
    await merge(target.id, [MISSING]).expect(404);
    await merge(foreign.id, [mine.id]).expect(404);

    expect(await snapshot(desk)).toEqual(before);
  });

  test('When source_ids is empty, too long or repeats an id, then it answers 400', async () => {
    const target = await createTicket(http, token);
    const source = await createTicket(http, token);
    const many = Array.from({ length: 51 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const ids of [[], many, [source.id, source.id]]) await merge(target.id, ids).expect(400);
  });
});

describe('A PATCH racing a bulk change or a merge of the same ticket', () => {
  /**
   * Holds the ticket's row lock in a transaction of the test's own until `release()`, so that the
   * requests sent meanwhile queue in a known order: the bulk change or merge first (it waits for
   * the row), then the PATCH with the ticket's current ETag.
   */
  async function holdRow(id: string) {
    const client = await desk.db.pool.connect();
    await client.query('BEGIN');
    await client.query('SELECT id FROM tickets WHERE id = $1 FOR UPDATE', [id]);
    return async () => {
      await client.query('ROLLBACK');
      client.release();
    };
  }

  /** Waits until `n` sessions of the database wait for a lock (a row's, or an advisory one). */
  async function waitersReach(n: number) {
    for (let i = 0; i < 200; i++) {
      const [row] = await desk.db.$queryRaw<
        { waiting: number }[]
      >`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      if (row!.waiting >= n) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`fewer than ${n} sessions came to wait for a lock`);
  }

  const patchIfMatch = (id: string, etag: string, body: object) =>
    http.patch(`${BASE}/tickets/${id}`).set(bearer(token)).set('If-Match', etag).send(body);

  test(
    'When a PATCH with the current ETag arrives while a bulk change of the ticket waits, then it ' +
      'waits for the bulk change and answers 412, and the bulk change stays',
    async () => {
      const ticket = await createTicket(http, token);
      const etag = (await http.get(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).expect(200)).headers
        .etag as string;
      const release = await holdRow(ticket.id);
      const bulkDone = bulk({ ids: [ticket.id], changes: { priority: 'high' } }).then((response) => response);
      await waitersReach(1);
      const patchDone = patchIfMatch(ticket.id, etag, { priority: 'low' }).then((response) => response);
      await waitersReach(2);
      await release();

      const [bulked, patched] = await Promise.all([bulkDone, patchDone]);
      expect(bulked.status).toBe(200);
      expect(bulked.body.results).toEqual([expect.objectContaining({ id: ticket.id, status: 200 })]);
      expect(patched.status).toBe(412);
      expect(patched.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(patched.body).toMatchObject({ status: 412 });
      expect(await read(ticket.id)).toMatchObject({ priority: 'high' });
      const [stored] = await desk.db.$queryRaw<
        { priority: string }[]
      >`SELECT priority::text FROM tickets WHERE id = ${ticket.id}::uuid`;
      expect(stored).toEqual({ priority: 'high' });
      const [events] = await desk.db.$queryRaw<
        { updates: number }[]
      >`SELECT count(*)::int AS updates FROM events WHERE type = 'ticket.updated' AND resource_id = ${ticket.id}`;
      expect(events).toEqual({ updates: 1 });
    },
  );

  test(
    'When a PATCH of the target with its current ETag arrives while a merge into it waits, ' +
      'then it waits for the merge and answers 412, and the merge stays',
    async () => {
      const target = await createTicket(http, token);
      const source = await createTicket(http, token);
      const etag = (await http.get(`${BASE}/tickets/${target.id}`).set(bearer(token)).expect(200)).headers
        .etag as string;
      const release = await holdRow(target.id);
      const mergeDone = merge(target.id, [source.id]).then((response) => response);
      await waitersReach(1);
      const patchDone = patchIfMatch(target.id, etag, { priority: 'low' }).then((response) => response);
      await waitersReach(2);
      await release();

      const [merged, patched] = await Promise.all([mergeDone, patchDone]);
      expect(merged.status).toBe(200);
      expect(merged.body).toMatchObject({ id: target.id, merged_ids: [source.id] });
      expect(patched.status).toBe(412);
      expect(patched.body).toMatchObject({ status: 412 });
      expect(await read(target.id)).toMatchObject({ priority: 'normal', merged_ids: [source.id] });
      expect(await read(source.id)).toMatchObject({ status: 'closed', merged_into_id: target.id });
    },
  );
});
