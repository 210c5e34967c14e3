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
  unique,
  uniqueEmail,
} from './support/helpdesk';

// docs/api.md, "Authentication and scopes": every helpdesk route, its scope, and the tenant wall.

interface Fixture {
  ticketId: string;
  commentId: string;
  clientId: string;
  userId: string;
  timeEntryId: string;
  /** A user only this call will delete. */
  freshUserId: () => Promise<string>;
  /** A time entry only this call will delete. */
  freshTimeEntryId: () => Promise<string>;
}

interface RouteCase {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: (f: Fixture) => string;
  scope: 'read:tickets' | 'write:tickets' | 'read:users' | 'admin:tenant';
  body?: (f: Fixture) => object;
  ok: number;
  /** Names one of the tenant's resources: another tenant gets 404. */
  byId?: boolean;
  /** The path for a call that uses its resource up (a DELETE): a resource of its own each time. */
  fresh?: (f: Fixture) => Promise<string>;
}

const ROUTES: RouteCase[] = [
  { method: 'get', path: () => '/tickets', scope: 'read:tickets', ok: 200 },
  {
    method: 'post',
    path: () => '/tickets',
    scope: 'write:tickets',
    body: (f) => ({ title: 't', client_id: f.clientId }),
    ok: 201,
  },
  { method: 'get', path: (f) => `/tickets/${f.ticketId}`, scope: 'read:tickets', ok: 200, byId: true },
  {
    method: 'patch',
    path: (f) => `/tickets/${f.ticketId}`,
    scope: 'write:tickets',
    body: () => ({ title: unique('t') }),
    ok: 200,
    byId: true,
  },
  { method: 'get', path: (f) => `/tickets/${f.ticketId}/comments`, scope: 'read:tickets', ok: 200, byId: true },
  {
    method: 'post',
    path: (f) => `/tickets/${f.ticketId}/comments`,
    scope: 'write:tickets',
    body: () => ({ body: 'c' }),
    ok: 201,
    byId: true,
  },
  {
    method: 'get',
    path: (f) => `/tickets/${f.ticketId}/comments/${f.commentId}`,
    scope: 'read:tickets',
    ok: 200,
    byId: true,
  },
  { method: 'get', path: () => '/clients', scope: 'read:tickets', ok: 200 },
  { method: 'post', path: () => '/clients', scope: 'write:tickets', body: () => ({ name: unique('c') }), ok: 201 },
  { method: 'get', path: (f) => `/clients/${f.clientId}`, scope: 'read:tickets', ok: 200, byId: true },
  {
    method: 'patch',
    path: (f) => `/clients/${f.clientId}`,
    scope: 'write:tickets',
    body: () => ({ notes: unique('n') }),
    ok: 200,
    byId: true,
  },
  { method: 'get', path: () => '/users', scope: 'read:users', ok: 200 },
  { method: 'get', path: (f) => `/users/${f.userId}`, scope: 'read:users', ok: 200, byId: true },
  {
    method: 'post',
    path: () => '/users',
    scope: 'admin:tenant',
    body: () => ({ name: 'u', email: uniqueEmail() }),
    ok: 201,
  },
  {
    method: 'delete',
    path: (f) => `/users/${f.userId}`,
    scope: 'admin:tenant',
    ok: 204,
    byId: true,
    fresh: async (f) => `/users/${await f.freshUserId()}`,
  },
  { method: 'get', path: (f) => `/tickets/${f.ticketId}/time-entries`, scope: 'read:tickets', ok: 200, byId: true },
  {
    method: 'post',
    path: (f) => `/tickets/${f.ticketId}/time-entries`,
    scope: 'write:tickets',
    body: (f) => ({ user_id: f.userId, minutes: 30 }),
    ok: 201,
    byId: true,
  },
  { method: 'get', path: () => '/time-entries', scope: 'read:tickets', ok: 200 },
  { method: 'get', path: (f) => `/time-entries/${f.timeEntryId}`, scope: 'read:tickets', ok: 200, byId: true },
  {
    method: 'patch',
    path: (f) => `/time-entries/${f.timeEntryId}`,
    scope: 'write:tickets',
    body: () => ({ note: unique('n') }),
    ok: 200,
    byId: true,
  },
  {
    method: 'delete',
    path: (f) => `/time-entries/${f.timeEntryId}`,
    scope: 'write:tickets',
    ok: 204,
    byId: true,
    fresh: async (f) => `/time-entries/${await f.freshTimeEntryId()}`,
  },
  { method: 'get', path: () => '/exports/time?period=2026-11', scope: 'read:tickets', ok: 200 },
];

const SCOPES = ['read:tickets', 'write:tickets', 'read:users'] as const;

let desk: TestDesk;
let http: Api;
let admin: string;
let otherTenantAdmin: string;
/** A token with exactly this scope. */
const only: Record<string, string> = {};
/** A token with every scope but this one (and never admin:tenant). */
const allBut: Record<string, string> = {};
let fixture: Fixture;

beforeAll(async () => {
  desk = await startDesk();
  http = api(desk);
  const client = await desk.createClient();
  admin = await desk.token(client, 'admin:tenant');
  for (const scope of SCOPES) {
    only[scope] = await desk.token(client, scope);
    allBut[scope] = await desk.token(client, SCOPES.filter((s) => s !== scope).join(' '));
  }
  only['admin:tenant'] = admin;
  allBut['admin:tenant'] = await desk.token(client, SCOPES.join(' '));
  otherTenantAdmin = (await newTenant(desk)).token;

  const ticket = await createTicket(http, admin);
  const comment = await http
    .post(`${BASE}/tickets/${ticket.id}/comments`)
    .set(bearer(admin))
    .send({ body: 'x' })
    .expect(201);
  const userId = (await createUser(http, admin)).id;
  const newTimeEntry = async () =>
    (
      await http
        .post(`${BASE}/tickets/${ticket.id}/time-entries`)
        .set(bearer(admin))
        .send({ user_id: userId, minutes: 30 })
        .expect(201)
    ).body.id as string;
  fixture = {
    ticketId: ticket.id,
    commentId: comment.body.id,
    clientId: ticket.client_id,
    userId,
    timeEntryId: await newTimeEntry(),
    freshUserId: async () => (await createUser(http, admin)).id,
    freshTimeEntryId: newTimeEntry,
  };
});
afterAll(() => desk.close());

/** The route's path; a DELETE gets a resource of its own, made before any snapshot is taken. */
const pathOf = async (route: RouteCase) => (route.fresh ? route.fresh(fixture) : route.path(fixture));

const send = (route: RouteCase, path: string, token: string | undefined) => {
  const call = http[route.method](`${BASE}${path}`);
  if (token) call.set(bearer(token));
  return route.body ? call.send(route.body(fixture)) : call;
};

describe.each(
  ROUTES.map(
    (r) =>
      [
        r.method.toUpperCase(),
        r.path({
          ticketId: ':id',
          commentId: ':comment_id',
          clientId: ':id',
          userId: ':id',
          timeEntryId: ':id',
        } as Fixture),
        r,
      ] as const,
  ),
)('%s %s', (_method, _path, route) => {
  test(`When no token or a bad one is sent, then it answers 401 with WWW-Authenticate invalid_token and changes nothing`, async () => {
    const path = await pathOf(route);
    const before = await snapshot(desk);
    for (const token of [undefined, 'not-a-jwt']) {
      const response = await send(route, path, token).expect(401);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test(`When the token lacks ${route.scope}, then it answers 403 naming the scope and changes nothing`, async () => {
    const path = await pathOf(route);
    const before = await snapshot(desk);
    const response = await send(route, path, allBut[route.scope]).expect(403);
    expect(response.headers['www-authenticate']).toBe(
      `Bearer realm="msp", error="insufficient_scope", scope="${route.scope}"`,
    );
    expect(await snapshot(desk)).toEqual(before);
  });

  test(`When the token has exactly ${route.scope}, or only admin:tenant, then it answers ${route.ok}`, async () => {
    await send(route, await pathOf(route), only[route.scope]).expect(route.ok);
    await send(route, await pathOf(route), admin).expect(route.ok);
  });

  if (route.byId) {
    test("When another tenant names this tenant's resource, then it answers 404 and changes nothing", async () => {
      const before = await snapshot(desk);
      await send(route, route.path(fixture), otherTenantAdmin).expect(404);
      expect(await snapshot(desk)).toEqual(before);
    });
  }
});

test("When another tenant lists tickets, clients and users, then none of this tenant's appear", async () => {
  for (const list of ['/tickets', '/clients', '/users']) {
    const response = await http.get(`${BASE}${list}`).set(bearer(otherTenantAdmin)).expect(200);
    expect(response.body).toEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } });
  }
  const filtered = await http
    .get(`${BASE}/tickets?client_id=${fixture.clientId}`)
    .set(bearer(otherTenantAdmin))
    .expect(200);
  expect(filtered.body.data).toEqual([]);
});

test("When another tenant opens a ticket for this tenant's client or assigns its user, then it answers 422 and stores nothing", async () => {
  const foreignClient = await createClient(http, otherTenantAdmin);
  const before = await snapshot(desk);
  await http
    .post(`${BASE}/tickets`)
    .set(bearer(otherTenantAdmin))
    .send({ title: 't', client_id: fixture.clientId })
    .expect(422);
  await http
    .post(`${BASE}/tickets`)
    .set(bearer(otherTenantAdmin))
    .send({ title: 't', client_id: foreignClient.id, assignee_id: fixture.userId })
    .expect(422);
  expect(await snapshot(desk)).toEqual(before);
});
