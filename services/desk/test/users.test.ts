import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import {
  BASE,
  bearer,
  createTicket,
  createUser,
  newTenant,
  snapshot,
  startHelpdesk,
  unique,
  uniqueEmail,
} from './support/helpdesk';

let desk: TestDesk;
let http: Api;
let token: string;
let tenantId: string;

beforeAll(async () => ({ desk, http, token, tenantId } = await startHelpdesk()));
afterAll(() => desk.close());

describe('POST /users', () => {
  test('When a user is created with name and email only, then it answers 201 with Location, role technician and active', async () => {
    const name = unique('Ada');
    const email = uniqueEmail('ada');
    const response = await http.post(`${BASE}/users`).set(bearer(token)).send({ name, email }).expect(201);

    expect(response.headers.location).toBe(`${BASE}/users/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(String),
      name,
      email,
      role: 'technician',
      active: true,
      deactivated_at: null,
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(await desk.db.user.findUniqueOrThrow({ where: { id: response.body.id } })).toMatchObject({
      tenantId,
      name,
      email,
      role: 'technician',
      active: true,
    });
  });

  test('When a role is given, then it is stored', async () => {
    const user = await createUser(http, token, { role: 'lead' });
    expect((await desk.db.user.findUniqueOrThrow({ where: { id: user.id } })).role).toBe('lead');
  });

  test('When the email is taken in the tenant, in any letter case and even by a deactivated user, then it answers 409 and stores nothing', async () => {
    const existing = await createUser(http, token);
    const gone = await createUser(http, token);
    await http.delete(`${BASE}/users/${gone.id}`).set(bearer(token)).expect(204);
    const before = await snapshot(desk);

    for (const email of [existing.email, existing.email.toUpperCase(), gone.email]) {
      const response = await http.post(`${BASE}/users`).set(bearer(token)).send({ name: 'Twin', email }).expect(409);
      expect(response.body).toMatchObject({ status: 409, type: 'urn:msp:problem:duplicate-user' });
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When another tenant has the same email, then it is no conflict', async () => {
    const existing = await createUser(http, token);
    const other = await newTenant(desk);
    await http.post(`${BASE}/users`).set(bearer(other.token)).send({ name: 'Same', email: existing.email }).expect(201);
  });

  test.each([
    ['no email', { name: 'x' }],
    ['no name', { email: 'x@example.com' }],
    ['a malformed email', { name: 'x', email: 'x@' }],
    ['an unknown role', { name: 'x', email: 'x@example.com', role: 'boss' }],
    ['active set by the caller', { name: 'x', email: 'x@example.com', active: false }],
    ['a NUL character in the name', { name: 'x\u0000', email: 'x@example.com' }],
  ])('When the body has %s, then it answers 400 and stores nothing', async (_case, body) => {
    const before = await snapshot(desk);
    await http.post(`${BASE}/users`).set(bearer(token)).send(body).expect(400);
    expect(await snapshot(desk)).toEqual(before);
  });
});

describe('GET /users and /users/:id', () => {
  test('When users are listed, then only active ones come, newest first', async () => {
    const tenant = await newTenant(desk);
    const a = await createUser(http, tenant.token);
    const b = await createUser(http, tenant.token);
    const c = await createUser(http, tenant.token);
    await http.delete(`${BASE}/users/${b.id}`).set(bearer(tenant.token)).expect(204);

    const response = await http.get(`${BASE}/users`).set(bearer(tenant.token)).expect(200);
    expect(response.body.data.map((u: { id: string }) => u.id)).toEqual([c.id, a.id]);
    expect(response.body.pagination.total).toBe(2);
  });

  test('When a user is read, then it answers the user; an unknown id is 404', async () => {
    const user = await createUser(http, token);
    expect((await http.get(`${BASE}/users/${user.id}`).set(bearer(token)).expect(200)).body).toEqual(user);
    await http.get(`${BASE}/users/00000000-0000-4000-8000-000000000000`).set(bearer(token)).expect(404);
  });
});

describe('DELETE /users/:id', () => {
  test('When a user is deleted, then it answers 204, is deactivated but keeps its name, and its open tickets are unassigned', async () => {
    const user = await createUser(http, token);
    const open = await createTicket(http, token, { assignee_id: user.id });
    const pending = await createTicket(http, token, { assignee_id: user.id });
    await http.patch(`${BASE}/tickets/${pending.id}`).set(bearer(token)).send({ status: 'pending' }).expect(200);
    const resolved = await createTicket(http, token, { assignee_id: user.id });
    await http.patch(`${BASE}/tickets/${resolved.id}`).set(bearer(token)).send({ status: 'resolved' }).expect(200);

    const response = await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(204);
    expect(response.text).toBe('');

    const stored = await desk.db.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(stored).toMatchObject({ name: user.name, active: false });
    expect(stored.deactivatedAt).toBeInstanceOf(Date);
    const read = await http.get(`${BASE}/users/${user.id}`).set(bearer(token)).expect(200);
    expect(read.body).toMatchObject({
      name: user.name,
      active: false,
      deactivated_at: stored.deactivatedAt!.toISOString(),
    });
    const assignees = async (id: string) => (await desk.db.ticket.findUniqueOrThrow({ where: { id } })).assigneeId;
    expect(await assignees(open.id)).toBeNull();
    expect(await assignees(pending.id)).toBeNull();
    expect(await assignees(resolved.id)).toBe(user.id); // history keeps who resolved it
    const unassigned = await http.get(`${BASE}/tickets?assignee_id=${user.id}`).set(bearer(token)).expect(200);
    expect(unassigned.body.pagination.total).toBe(1);
  });

  test('When a deleted user is deleted again or the id is unknown, then it answers 404 and changes nothing', async () => {
    const user = await createUser(http, token);
    await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(204);
    const before = await snapshot(desk);
    await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(404);
    await http.delete(`${BASE}/users/00000000-0000-4000-8000-000000000000`).set(bearer(token)).expect(404);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When a resolved ticket of a deleted user is reopened, then it comes back unassigned', async () => {
    const user = await createUser(http, token);
    const ticket = await createTicket(http, token, { assignee_id: user.id });
    await http.patch(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).send({ status: 'resolved' }).expect(200);
    await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(204);

    const reopened = await http
      .patch(`${BASE}/tickets/${ticket.id}`)
      .set(bearer(token))
      .send({ status: 'open' })
      .expect(200);

    expect(reopened.body).toMatchObject({ status: 'open', assignee_id: null, resolved_at: null });
    expect((await desk.db.ticket.findUniqueOrThrow({ where: { id: ticket.id } })).assigneeId).toBeNull();
  });

  test('When a deleted user is assigned to a ticket, then it answers 422', async () => {
    const user = await createUser(http, token);
    const ticket = await createTicket(http, token);
    await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(204);
    await http.patch(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).send({ assignee_id: user.id }).expect(422);
  });
});

describe('PATCH /users/:id', () => {
  const patch = (id: string, body: object, headers: Record<string, string> = {}) =>
    http.patch(`${BASE}/users/${id}`).set(bearer(token)).set(headers).send(body);
  const read = async (id: string) => (await http.get(`${BASE}/users/${id}`).set(bearer(token)).expect(200)).body;
  const eventsOf = async (id: string) =>
    desk.db.$queryRaw<
      { type: string; changes: Record<string, { from: unknown; to: unknown }> | null }[]
    >`SELECT type, changes FROM events WHERE resource_id = ${id} ORDER BY seq`;

  test('When name, email and role are changed, then it answers 200 with the user as stored and records user.updated with the changes', async () => {
    const user = await createUser(http, token);
    const email = uniqueEmail('renamed');
    const response = await patch(user.id, { name: 'Erika Musterfrau', email, role: 'lead' }).expect(200);

    expect(response.body).toMatchObject({
      id: user.id,
      name: 'Erika Musterfrau',
      email,
      role: 'lead',
      active: true,
      deactivated_at: null,
    });
    expect(response.body.updated_at > (user as unknown as { updated_at: string }).updated_at).toBe(true);
    expect(await read(user.id)).toEqual(response.body);
    expect(response.headers.etag).toBe((await http.get(`${BASE}/users/${user.id}`).set(bearer(token))).headers.etag);
    const events = await eventsOf(user.id);
    expect(events.map((event) => event.type)).toEqual(['user.created', 'user.updated']);
    expect(events[1]!.changes).toMatchObject({
      name: { from: user.name, to: 'Erika Musterfrau' },
      email: { from: user.email, to: email },
      role: { from: 'technician', to: 'lead' },
    });
  });

  test('When the change asks for what the user already is, then it answers 200, changes nothing (not even updated_at) and records no event', async () => {
    const user = await createUser(http, token);
    const before = await snapshot(desk);
    const response = await patch(user.id, { name: user.name, role: 'technician', active: true }).expect(200);
    expect(response.body).toEqual(await read(user.id));
    expect(await snapshot(desk)).toEqual(before);
  });

  test("When the e-mail address is another user's, in any letter case and even a deactivated one's, then it answers 409 and changes nothing", async () => {
    const taken = await createUser(http, token);
    const gone = await createUser(http, token);
    await http.delete(`${BASE}/users/${gone.id}`).set(bearer(token)).expect(204);
    const user = await createUser(http, token);
    const before = await snapshot(desk);
    for (const email of [taken.email.toUpperCase(), gone.email]) {
      const response = await patch(user.id, { email, name: 'New name' }).expect(409);
      expect(response.body).toMatchObject({ type: 'urn:msp:problem:duplicate-user', status: 409 });
    }
    expect(await snapshot(desk)).toEqual(before);
    // Its own address in other letters is no conflict.
    await patch(user.id, { email: user.email.toUpperCase() }).expect(200);
  });

  test(
    'When active is set to false, then the user is deactivated as DELETE does: out of the ' +
      'list, open tickets unassigned with their events; true reactivates',
    async () => {
      const user = await createUser(http, token);
      const open = await createTicket(http, token, { assignee_id: user.id });
      const resolved = await createTicket(http, token, { assignee_id: user.id });
      await http.patch(`${BASE}/tickets/${resolved.id}`).set(bearer(token)).send({ status: 'resolved' }).expect(200);

      const deactivated = await patch(user.id, { active: false }).expect(200);

      expect(deactivated.body).toMatchObject({ active: false, deactivated_at: expect.any(String) });
      const assignee = async (id: string) => (await desk.db.ticket.findUniqueOrThrow({ where: { id } })).assigneeId;
      expect(await assignee(open.id)).toBeNull();
      expect(await assignee(resolved.id)).toBe(user.id);
      const listed = async () => {
        const ids: string[] = [];
        for (let page = 1; ; page++) {
          const body = (await http.get(`${BASE}/users?per_page=100&page=${page}`).set(bearer(token)).expect(200)).body;
          ids.push(...body.data.map((u: { id: string }) => u.id));
          if (page >= body.pagination.total_pages) return ids;
        }
      };
      expect(await listed()).not.toContain(user.id);
      await http.patch(`${BASE}/tickets/${open.id}`).set(bearer(token)).send({ assignee_id: user.id }).expect(422);
      expect((await eventsOf(user.id)).at(-1)).toMatchObject({
        type: 'user.updated',
        changes: { active: { from: true, to: false } },
      });
      expect((await eventsOf(open.id)).at(-1)).toMatchObject({
        type: 'ticket.updated',
        changes: { assignee_id: { from: user.id, to: null } },
      });
      // DELETE finds no active user any more.
      await http.delete(`${BASE}/users/${user.id}`).set(bearer(token)).expect(404);

      const reactivated = await patch(user.id, { active: true }).expect(200);

      expect(reactivated.body).toMatchObject({ active: true, deactivated_at: null });
      expect(await listed()).toContain(user.id);
      await http.patch(`${BASE}/tickets/${open.id}`).set(bearer(token)).send({ assignee_id: user.id }).expect(200);
      expect((await eventsOf(user.id)).at(-1)).toMatchObject({
        type: 'user.updated',
        changes: { active: { from: false, to: true }, deactivated_at: { to: null } },
      });
    },
  );

  test('When If-Match is stale it answers 412 and changes nothing; the current ETag or * changes the user', async () => {
    const user = await createUser(http, token);
    const tag = (await http.get(`${BASE}/users/${user.id}`).set(bearer(token)).expect(200)).headers.etag!;
    await patch(user.id, { role: 'admin' }).expect(200);
    const before = await snapshot(desk);
    const stale = await patch(user.id, { name: 'Too late' }, { 'If-Match': tag }).expect(412);
    expect(stale.body.type).toBe('urn:msp:problem:precondition-failed');
    expect(await snapshot(desk)).toEqual(before);
    const current = (await http.get(`${BASE}/users/${user.id}`).set(bearer(token)).expect(200)).headers.etag!;
    await patch(user.id, { name: 'In time' }, { 'If-Match': current }).expect(200);
    await patch(user.id, { name: 'Any' }, { 'If-Match': '*' }).expect(200);
  });

  test(
    'When the body is empty, has an unknown field or a bad value, or the user is unknown, then it ' +
      'answers 400 or 404 and changes nothing; a token without admin:tenant is 403',
    async () => {
      const user = await createUser(http, token);
      const other = await newTenant(desk);
      const reader = await desk.createClient({ scopes: ['read:users'] });
      const readerToken = await desk.token(reader);
      const before = await snapshot(desk);
      for (const body of [
        {},
        { id: user.id },
        { email: 'not-an-email' },
        { role: 'boss' },
        { active: 'no' },
        { name: '' },
        { deactivated_at: null },
      ]) {
        const response = await patch(user.id, body).expect(400);
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
      await patch('00000000-0000-4000-8000-000000000000', { name: 'Nobody' }).expect(404);
      await http.patch(`${BASE}/users/${user.id}`).set(bearer(other.token)).send({ name: 'Not yours' }).expect(404);
      await http.patch(`${BASE}/users/${user.id}`).set(bearer(readerToken)).send({ name: 'No scope' }).expect(403);
      expect(await snapshot(desk)).toEqual(before);
    },
  );
});
