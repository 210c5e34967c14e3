import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createTicket, createUser, newTenant, snapshot, startHelpdesk, unique, uniqueEmail } from './support/helpdesk';

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
    expect(await desk.db.user.findUniqueOrThrow({ where: { id: response.body.id } })).toMatchObject({ tenantId, name, email, role: 'technician', active: true });
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
    expect(read.body).toMatchObject({ name: user.name, active: false, deactivated_at: stored.deactivatedAt!.toISOString() });
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

    const reopened = await http.patch(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).send({ status: 'open' }).expect(200);

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
