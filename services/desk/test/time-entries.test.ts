import { localDateOf } from '@msp/calendar';
import { storedEvents, whileEventsCannotBeStored } from '@msp/testkit';
import type request from 'supertest';
import { api, type Api } from './support/api';
import { startDesk, type TestDesk } from './support/desk';
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
let clientId: string;
let tenantId: string;

beforeAll(async () => ({ desk, http, token, clientId, tenantId } = await startHelpdesk()));
afterAll(() => desk.close());

const ticketEntries = (ticketId: string) => `${BASE}/tickets/${ticketId}/time-entries`;
const entryUrl = (id: string) => `${BASE}/time-entries/${id}`;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

type Entry = {
  id: string;
  ticket_id: string;
  client_id: string;
  user_id: string;
  minutes: number;
  date: string;
  billable: boolean;
  note: string | null;
  created_at: string;
};

async function record(ticketId: string, body: Record<string, unknown>, as = token): Promise<Entry> {
  return (await http.post(ticketEntries(ticketId)).set(bearer(as)).send(body).expect(201)).body as Entry;
}

/** A ticket (of a new client) and a technician of the caller's tenant. */
async function ticketAndUser(as = token) {
  return { ticket: await createTicket(http, as), user: await createUser(http, as) };
}

describe('POST /tickets/:id/time-entries', () => {
  test("When time is recorded with every field, then it answers 201 with Location and the entry, which carries the ticket's client", async () => {
    const { ticket, user } = await ticketAndUser();

    const response = await http
      .post(ticketEntries(ticket.id))
      .set(bearer(token))
      .send({ user_id: user.id, minutes: 45, date: '2026-11-23', billable: false, note: 'Replaced the fuser unit.' })
      .expect(201);

    expect(response.body).toEqual({
      id: expect.any(String),
      ticket_id: ticket.id,
      client_id: ticket.client_id,
      user_id: user.id,
      minutes: 45,
      date: '2026-11-23',
      billable: false,
      note: 'Replaced the fuser unit.',
      hourly_rate: null,
      currency: 'EUR',
      amount: null,
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(response.headers.location).toBe(entryUrl(response.body.id));
    const stored = await desk.db.timeEntry.findUniqueOrThrow({ where: { id: response.body.id } });
    expect(stored).toMatchObject({
      tenantId,
      ticketId: ticket.id,
      clientId: ticket.client_id,
      userId: user.id,
      minutes: 45,
      billable: false,
    });
    const read = await http.get(response.headers.location!).set(bearer(token)).expect(200);
    expect(read.body).toEqual(response.body);
    expect(read.headers.etag).toMatch(/^"/);
  });

  test('When only user_id and minutes are given, then the date is today in Europe/Berlin, billable is true and the note null', async () => {
    const { ticket, user } = await ticketAndUser();
    const before = localDateOf('Europe/Berlin', Date.now());

    const entry = await record(ticket.id, { user_id: user.id, minutes: 1440 });

    const after = localDateOf('Europe/Berlin', Date.now());
    expect([before, after]).toContain(entry.date);
    expect(entry).toMatchObject({ minutes: 1440, billable: true, note: null });
  });

  test('When desk runs with another DEFAULT_TIME_ZONE, then the default date is today there', async () => {
    const kiribati = await startDesk({ timeZone: 'Pacific/Kiritimati' });
    try {
      const caller = await newTenant(kiribati);
      const other = api(kiribati);
      const ticket = await createTicket(other, caller.token);
      const user = await createUser(other, caller.token);
      const before = localDateOf('Pacific/Kiritimati', Date.now());
      const response = await other
        .post(ticketEntries(ticket.id))
        .set(bearer(caller.token))
        .send({ user_id: user.id, minutes: 5 })
        .expect(201);
      expect([before, localDateOf('Pacific/Kiritimati', Date.now())]).toContain(response.body.date);
    } finally {
      await kiribati.close();
    }
  });

  test.each([
    ['minutes 0', { minutes: 0 }],
    ['minutes 1441', { minutes: 1441 }],
    ['minutes 1.5', { minutes: 1.5 }],
    ['minutes as a string', { minutes: '30' }],
    ['no minutes', { minutes: undefined }],
    ['no user_id', { user_id: undefined }],
    ['a user_id that is no UUID', { user_id: 'ann' }],
    ['a date that is no date', { date: '2026-02-30' }],
    ['billable as a string', { billable: 'yes' }],
    ['a ticket_id in the body', { ticket_id: UNKNOWN }],
    ['a note with a NUL character', { note: 'a\u0000b' }],
  ])('When the entry has %s, then it answers 400 and stores nothing', async (_case, fields) => {
    const { ticket, user } = await ticketAndUser();
    const body: Record<string, unknown> = { user_id: user.id, minutes: 30, ...fields };
    for (const key of Object.keys(body)) if (body[key] === undefined) delete body[key];
    const before = await snapshot(desk);

    const response = await http.post(ticketEntries(ticket.id)).set(bearer(token)).send(body).expect(400);

    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await snapshot(desk)).toEqual(before);
  });

  test("When user_id names no user, a deactivated user or another tenant's user, then it answers 422 naming user_id and stores nothing", async () => {
    const { ticket, user } = await ticketAndUser();
    await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(204);
    const other = await newTenant(desk);
    const stranger = await createUser(http, other.token);
    const before = await snapshot(desk);

    for (const userId of [UNKNOWN, user.id, stranger.id]) {
      const response = await http
        .post(ticketEntries(ticket.id))
        .set(bearer(token))
        .send({ user_id: userId, minutes: 30 })
        .expect(422);
      expect(response.body).toMatchObject({
        type: 'urn:msp:problem:unknown-reference',
        errors: [{ field: 'user_id', message: expect.any(String) }],
      });
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test("When the ticket is another tenant's or unknown, then it answers 404 and stores nothing", async () => {
    const other = await newTenant(desk);
    const theirs = await createTicket(http, other.token);
    const user = await createUser(http, token);
    const before = await snapshot(desk);

    await http.post(ticketEntries(theirs.id)).set(bearer(token)).send({ user_id: user.id, minutes: 30 }).expect(404);
    await http.post(ticketEntries(UNKNOWN)).set(bearer(token)).send({ user_id: user.id, minutes: 30 }).expect(404);

    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the token has only read:tickets, then writing is 403 and reading works; without a token it is 401', async () => {
    const { ticket, user } = await ticketAndUser();
    const reader = await desk.createClient({ scopes: ['read:tickets'] });
    const readToken = await desk.token(reader);
    const owner = await newTenant(desk);
    // The reader is a tenant of its own: its 403 comes before any lookup.
    const response = await http
      .post(ticketEntries(ticket.id))
      .set(bearer(readToken))
      .send({ user_id: user.id, minutes: 30 })
      .expect(403);
    expect(response.headers['www-authenticate']).toContain('scope="write:tickets"');
    await http.get(`${BASE}/time-entries`).set(bearer(readToken)).expect(200);
    await http.post(ticketEntries(ticket.id)).send({ user_id: user.id, minutes: 30 }).expect(401);
    expect(owner.tenantId).not.toBe(reader.tenantId);
  });

  test('When the same Idempotency-Key is sent twice, then the second answer is the first replayed and one entry exists', async () => {
    const { ticket, user } = await ticketAndUser();
    const key = `time-${Date.now()}`;
    const first = await http
      .post(ticketEntries(ticket.id))
      .set(bearer(token))
      .set('Idempotency-Key', key)
      .send({ user_id: user.id, minutes: 30 })
      .expect(201);
    const second = await http
      .post(ticketEntries(ticket.id))
      .set(bearer(token))
      .set('Idempotency-Key', key)
      .send({ user_id: user.id, minutes: 30 })
      .expect(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await desk.db.timeEntry.count({ where: { ticketId: ticket.id } })).toBe(1);
  });
});

describe('GET /tickets/:id/time-entries', () => {
  test("When a ticket's entries are listed, then they come latest day first, newest first within a day, paged, and only that ticket's", async () => {
    const { ticket, user } = await ticketAndUser();
    const other = await createTicket(http, token);
    const a = await record(ticket.id, { user_id: user.id, minutes: 10, date: '2026-11-02' });
    const b = await record(ticket.id, { user_id: user.id, minutes: 20, date: '2026-11-05' });
    const c = await record(ticket.id, { user_id: user.id, minutes: 30, date: '2026-11-02' });
    await record(other.id, { user_id: user.id, minutes: 40, date: '2026-11-03' });

    const all = await http.get(ticketEntries(ticket.id)).set(bearer(token)).expect(200);
    expect(all.body.data.map((e: Entry) => e.id)).toEqual([b.id, c.id, a.id]);
    expect(all.body.pagination).toEqual({ page: 1, per_page: 25, total: 3, total_pages: 1 });

    const second = await http
      .get(`${ticketEntries(ticket.id)}?per_page=2&page=2`)
      .set(bearer(token))
      .expect(200);
    expect(second.body.data.map((e: Entry) => e.id)).toEqual([a.id]);
    expect(second.headers.link).toContain('rel="prev"');
  });

  test("When the ticket is another tenant's or unknown, then it answers 404", async () => {
    const other = await newTenant(desk);
    const theirs = await createTicket(http, other.token);
    await http.get(ticketEntries(theirs.id)).set(bearer(token)).expect(404);
    await http.get(ticketEntries(UNKNOWN)).set(bearer(token)).expect(404);
  });
});

describe('PATCH /time-entries/:id', () => {
  test('When fields are changed, then the entry answers with them and a later updated_at, and stores them', async () => {
    const { ticket, user } = await ticketAndUser();
    const colleague = await createUser(http, token);
    const entry = await record(ticket.id, { user_id: user.id, minutes: 30, date: '2026-11-02', note: 'first' });

    const response = await http
      .patch(entryUrl(entry.id))
      .set(bearer(token))
      .send({ user_id: colleague.id, minutes: 90, date: '2026-11-03', billable: false, note: null })
      .expect(200);

    expect(response.body).toMatchObject({
      id: entry.id,
      ticket_id: ticket.id,
      user_id: colleague.id,
      minutes: 90,
      date: '2026-11-03',
      billable: false,
      note: null,
    });
    expect(response.body.updated_at >= entry.created_at).toBe(true);
    expect((await http.get(entryUrl(entry.id)).set(bearer(token)).expect(200)).body).toEqual(response.body);
  });

  test(
    'When its user was deactivated since, then the entry keeps the user and its other ' +
      'fields can still change; a move to an inactive user is 422',
    async () => {
      const { ticket, user } = await ticketAndUser();
      const entry = await record(ticket.id, { user_id: user.id, minutes: 30 });
      await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(204);

      expect((await http.get(entryUrl(entry.id)).set(bearer(token)).expect(200)).body.user_id).toBe(user.id);
      const changed = await http
        .patch(entryUrl(entry.id))
        .set(bearer(token))
        .send({ minutes: 35, user_id: user.id })
        .expect(200);
      expect(changed.body).toMatchObject({ user_id: user.id, minutes: 35 });

      const other = await record(ticket.id, { user_id: (await createUser(http, token)).id, minutes: 10 });
      const before = await snapshot(desk);
      const refused = await http.patch(entryUrl(other.id)).set(bearer(token)).send({ user_id: user.id }).expect(422);
      expect(refused.body.errors).toEqual([{ field: 'user_id', message: expect.any(String) }]);
      expect(await snapshot(desk)).toEqual(before);
    },
  );

  test.each([
    ['minutes 0', { minutes: 0 }],
    ['minutes 1441', { minutes: 1441 }],
    ['no field', {}],
    ['a ticket_id', { ticket_id: UNKNOWN }],
    ['a client_id', { client_id: UNKNOWN }],
  ])('When the change has %s, then it answers 400 and changes nothing', async (_case, body) => {
    const { ticket, user } = await ticketAndUser();
    const entry = await record(ticket.id, { user_id: user.id, minutes: 30 });
    const before = await snapshot(desk);
    await http.patch(entryUrl(entry.id)).set(bearer(token)).send(body).expect(400);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the change asks for what the entry already is, then it answers 200 and changes nothing, not even updated_at', async () => {
    const { ticket, user } = await ticketAndUser();
    const entry = await record(ticket.id, { user_id: user.id, minutes: 30 });
    const before = await snapshot(desk);
    const response = await http
      .patch(entryUrl(entry.id))
      .set(bearer(token))
      .send({ minutes: 30, billable: true })
      .expect(200);
    expect(response.body).toEqual(entry);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When If-Match names an older state, then it answers 412 and changes nothing; with the current ETag it applies', async () => {
    const { ticket, user } = await ticketAndUser();
    const entry = await record(ticket.id, { user_id: user.id, minutes: 30 });
    const etag = (await http.get(entryUrl(entry.id)).set(bearer(token)).expect(200)).headers.etag!;
    const changed = await http
      .patch(entryUrl(entry.id))
      .set(bearer(token))
      .set('If-Match', etag)
      .send({ minutes: 40 })
      .expect(200);
    await http.patch(entryUrl(entry.id)).set(bearer(token)).set('If-Match', etag).send({ minutes: 50 }).expect(412);
    await http.delete(entryUrl(entry.id)).set(bearer(token)).set('If-Match', etag).expect(412);
    expect((await http.get(entryUrl(entry.id)).set(bearer(token)).expect(200)).body).toEqual(changed.body);
  });

  test("When the entry is another tenant's or unknown, then PATCH, GET and DELETE answer 404 and change nothing", async () => {
    const other = await newTenant(desk);
    const theirs = await record(
      (await createTicket(http, other.token)).id,
      { user_id: (await createUser(http, other.token)).id, minutes: 30 },
      other.token,
    );
    const before = await snapshot(desk);
    for (const id of [theirs.id, UNKNOWN]) {
      await http.get(entryUrl(id)).set(bearer(token)).expect(404);
      await http.patch(entryUrl(id)).set(bearer(token)).send({ minutes: 60 }).expect(404);
      await http.delete(entryUrl(id)).set(bearer(token)).expect(404);
    }
    expect(await snapshot(desk)).toEqual(before);
  });
});

describe('DELETE /time-entries/:id', () => {
  test('When an entry is deleted, then it answers 204, it is gone, and a second DELETE is 404', async () => {
    const { ticket, user } = await ticketAndUser();
    const entry = await record(ticket.id, { user_id: user.id, minutes: 30 });
    await http.delete(entryUrl(entry.id)).set(bearer(token)).expect(204);
    await http.get(entryUrl(entry.id)).set(bearer(token)).expect(404);
    expect(await desk.db.timeEntry.findUnique({ where: { id: entry.id } })).toBeNull();
    await http.delete(entryUrl(entry.id)).set(bearer(token)).expect(404);
  });
});

describe('GET /time-entries', () => {
  /** A tenant of its own with two clients, two technicians and entries across November and December. */
  async function seeded() {
    const caller = await newTenant(desk);
    const acme = await createClient(http, caller.token, { name: 'Acme' });
    const globex = await createClient(http, caller.token, { name: 'Globex' });
    const ann = await createUser(http, caller.token, { name: 'Ann' });
    const bob = await createUser(http, caller.token, { name: 'Bob' });
    const acmeTicket = await createTicket(http, caller.token, { client_id: acme.id });
    const globexTicket = await createTicket(http, caller.token, { client_id: globex.id });
    const add = (ticketId: string, user_id: string, minutes: number, date: string, billable = true) =>
      record(ticketId, { user_id, minutes, date, billable }, caller.token);
    const entries = [
      await add(acmeTicket.id, ann.id, 60, '2026-11-02'),
      await add(acmeTicket.id, bob.id, 30, '2026-11-15', false),
      await add(globexTicket.id, ann.id, 45, '2026-11-30'),
      await add(globexTicket.id, bob.id, 15, '2026-12-01'),
    ];
    const list = async (query: string) =>
      (await http.get(`${BASE}/time-entries?${query}`).set(bearer(caller.token)).expect(200)).body;
    return { caller, acme, globex, ann, bob, acmeTicket, globexTicket, entries, list };
  }

  test('When nothing is filtered, then every entry of the tenant is listed with the totals of all of them, on every page', async () => {
    const { entries, list } = await seeded();
    const all = await list('');
    expect(all.data.map((e: Entry) => e.id)).toEqual([entries[3]!.id, entries[2]!.id, entries[1]!.id, entries[0]!.id]);
    expect(all.totals).toEqual({ minutes: 150, billable_minutes: 120, amounts: [] });
    expect(all.pagination).toEqual({ page: 1, per_page: 25, total: 4, total_pages: 1 });

    const second = await list('per_page=1&page=2');
    expect(second.data.map((e: Entry) => e.id)).toEqual([entries[2]!.id]);
    expect(second.totals).toEqual({ minutes: 150, billable_minutes: 120, amounts: [] });
    expect(second.pagination).toEqual({ page: 2, per_page: 1, total: 4, total_pages: 4 });
  });

  test('When filtered by dates, client, user and billable, then the page and the totals hold only the matching entries', async () => {
    const { acme, ann, bob, entries, list } = await seeded();
    const ids = (body: { data: Entry[] }) => body.data.map((e) => e.id);

    const november = await list('from=2026-11-01&to=2026-11-30');
    expect(ids(november)).toEqual([entries[2]!.id, entries[1]!.id, entries[0]!.id]);
    expect(november.totals).toEqual({ minutes: 135, billable_minutes: 105, amounts: [] });

    expect(ids(await list('from=2026-11-30'))).toEqual([entries[3]!.id, entries[2]!.id]);
    expect(ids(await list('to=2026-11-02'))).toEqual([entries[0]!.id]);

    const ofAcme = await list(`client_id=${acme.id}`);
    expect(ids(ofAcme)).toEqual([entries[1]!.id, entries[0]!.id]);
    expect(ofAcme.totals).toEqual({ minutes: 90, billable_minutes: 60, amounts: [] });

    const ofBob = await list(`user_id=${bob.id}`);
    expect(ofBob.totals).toEqual({ minutes: 45, billable_minutes: 15, amounts: [] });

    const notBillable = await list('billable=false');
    expect(ids(notBillable)).toEqual([entries[1]!.id]);
    expect(notBillable.totals).toEqual({ minutes: 30, billable_minutes: 0, amounts: [] });

    const combined = await list(`user_id=${ann.id}&billable=true&from=2026-11-03`);
    expect(ids(combined)).toEqual([entries[2]!.id]);
    expect(combined.totals).toEqual({ minutes: 45, billable_minutes: 45, amounts: [] });

    const none = await list('from=2027-01-01');
    expect(none).toEqual({
      data: [],
      pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 },
      totals: { minutes: 0, billable_minutes: 0, amounts: [] },
    });
  });

  test('When a ticket moves to another client, then its entries move with it in the client filter and totals', async () => {
    const { caller, acme, globex, acmeTicket, list } = await seeded();
    await http
      .patch(`${BASE}/tickets/${acmeTicket.id}`)
      .set(bearer(caller.token))
      .send({ client_id: globex.id })
      .expect(200);

    expect((await list(`client_id=${acme.id}`)).totals).toEqual({ minutes: 0, billable_minutes: 0, amounts: [] });
    expect((await list(`client_id=${globex.id}`)).totals).toEqual({ minutes: 150, billable_minutes: 120, amounts: [] });
    const moved = await list(`client_id=${globex.id}&to=2026-11-15`);
    expect(moved.data.every((e: Entry) => e.client_id === globex.id && e.ticket_id === acmeTicket.id)).toBe(true);
  });

  test('When another tenant lists, then it sees none of these entries, also when filtering by their client', async () => {
    const { acme } = await seeded();
    const other = await newTenant(desk);
    const response = await http.get(`${BASE}/time-entries?client_id=${acme.id}`).set(bearer(other.token)).expect(200);
    expect(response.body).toEqual({
      data: [],
      pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 },
      totals: { minutes: 0, billable_minutes: 0, amounts: [] },
    });
  });

  test.each([
    ['to before from', 'from=2026-11-10&to=2026-11-09', 'to'],
    ['a date that is no date', 'from=2026-13-01', 'from'],
    ['a client_id that is no UUID', 'client_id=acme', 'client_id'],
    ['billable that is no boolean', 'billable=maybe', 'billable'],
    ['per_page 101', 'per_page=101', 'per_page'],
    ['page 0', 'page=0', 'page'],
    ['an unknown parameter', 'ticket=1', 'ticket'],
  ])('When the query has %s, then it answers 400 naming the parameter', async (_case, query, field) => {
    const response = await http.get(`${BASE}/time-entries?${query}`).set(bearer(token)).expect(400);
    expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });
});

describe('events', () => {
  const eventsOf = (id: string) => storedEvents(desk.db, id);

  function expected(
    response: request.Response,
    type: string,
    id: string,
    data: { object: unknown; changes?: unknown },
  ) {
    return {
      type,
      resource_type: 'time_entry',
      resource_id: id,
      actor_client_id: clientId,
      actor_on_behalf_of: null,
      request_id: response.headers['x-request-id'],
      changes: data.changes ?? null,
      data,
    };
  }

  test('When an entry is created, changed and deleted, then time_entry.created, .updated (with changes) and .deleted are stored in order', async () => {
    const { ticket, user } = await ticketAndUser();
    const skip = (await eventsOf(tenantId)).length;

    const created = await http
      .post(ticketEntries(ticket.id))
      .set(bearer(token))
      .send({ user_id: user.id, minutes: 30, date: '2026-11-02' })
      .expect(201);
    const updated = await http
      .patch(entryUrl(created.body.id))
      .set(bearer(token))
      .send({ minutes: 45, note: 'longer' })
      .expect(200);
    const deleted = await http.delete(entryUrl(created.body.id)).set(bearer(token)).expect(204);

    const changes = { minutes: { from: 30, to: 45 }, note: { from: null, to: 'longer' } };
    const events = (await eventsOf(tenantId)).slice(skip);
    expect(events).toEqual([
      expected(created, 'time_entry.created', created.body.id, { object: created.body }),
      expected(updated, 'time_entry.updated', created.body.id, { object: updated.body, changes }),
      expected(deleted, 'time_entry.deleted', created.body.id, { object: updated.body }),
    ]);
  });

  test('When the events cannot be stored, then creating, changing and deleting answer 500 and change nothing', async () => {
    const { ticket, user } = await ticketAndUser();
    const entry = await record(ticket.id, { user_id: user.id, minutes: 30 });
    const before = await snapshot(desk);

    await whileEventsCannotBeStored(desk.db, async () => {
      await http.post(ticketEntries(ticket.id)).set(bearer(token)).send({ user_id: user.id, minutes: 10 }).expect(500);
      await http.patch(entryUrl(entry.id)).set(bearer(token)).send({ minutes: 45 }).expect(500);
      await http.delete(entryUrl(entry.id)).set(bearer(token)).expect(500);
    });

    expect(await snapshot(desk)).toEqual(before);
  });

  test('When a change is refused, then no event is stored', async () => {
    const { ticket, user } = await ticketAndUser();
    const entry = await record(ticket.id, { user_id: user.id, minutes: 30 });
    const count = (await eventsOf(tenantId)).length;
    await http.patch(entryUrl(entry.id)).set(bearer(token)).send({ user_id: UNKNOWN }).expect(422);
    await http.post(ticketEntries(ticket.id)).set(bearer(token)).send({ user_id: user.id, minutes: 0 }).expect(400);
    expect(await eventsOf(tenantId)).toHaveLength(count);
  });
});
