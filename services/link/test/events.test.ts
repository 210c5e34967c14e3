import { randomBytes, randomUUID } from 'node:crypto';
import { whileEventsCannotBeStored } from '@msp/testkit';
import request from 'supertest';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

/**
 * link's event stream: each change through the API, and each end of a sync or a run, appends one
 * row to `events` in the transaction of the change. Read back with Prisma Client (support/stored.ts); the answers the caller
 * saw are the events' `object`. The runs harness gives link with its job queue, a real desk and a
 * real SCIM directory, which the sync, onboarding and offboarding events need.
 */

const API = '/api/v1';
const DAY_MS = 86_400_000;

let h: RunsHarness;
let managerId: string;

beforeAll(async () => {
  h = await startRunsHarness();
  managerId = (await h.deskTenant.createUser({ name: 'Grace Manager' })).id;
  h.scim.addGroup('VPN');
});
afterAll(() => h?.close());

const hex = (n: number) => randomBytes(n).toString('hex');
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);

/** A caller of its own tenant (so its events are its own), with a client id of its own. */
function newCaller() {
  const tenantId = randomUUID();
  const clientId = `tech-${hex(3)}`;
  return { tenantId, clientId, auth: `Bearer ${h.link.token({ tenant_id: tenantId, sub: clientId })}` };
}

function call(method: 'get' | 'post' | 'patch', path: string, auth: string, body?: object) {
  return request(h.link.app)[method](`${API}${path}`).set('Authorization', auth).send(body);
}

const eventsOf = (tenantId: string, resourceId?: string) =>
  h.link.db.outboxEvent.findMany({
    where: { tenantId, ...(resourceId ? { resourceId } : {}) },
    orderBy: { seq: 'asc' },
  });

/** Polls GET `path` until `done` holds (the job queue works in the background). */
async function until(path: string, done: (body: any) => boolean, auth = h.auth) {
  const deadline = Date.now() + 25_000;
  for (;;) {
    const response = await call('get', path, auth);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    if (Date.now() > deadline) throw new Error(`${path} still ${response.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const ended = (run: { status: string }) => !['queued', 'running', 'scheduled', 'in_progress'].includes(run.status);

/** The one event of the resource, as a job (not a request) recorded it. */
async function jobEvent(resourceId: string, type: string) {
  const events = await eventsOf(h.deskTenant.tenantId, resourceId);
  expect(events.map((event) => event.type)).toEqual([type]);
  const event = events[0]!;
  expect(event).toMatchObject({
    tenantId: h.deskTenant.tenantId,
    actorClientId: 'system',
    actorOnBehalfOf: null,
    dispatchedAt: null,
  });
  // A job's own id, shared by its log lines: no request made this change.
  expect(event.requestId).toMatch(/^[0-9a-f-]{36}$/);
  return event as typeof event & { data: { object: any; changes?: any } };
}

describe('managed tenants', () => {
  test('When a tenant is registered, then tenant.created holds it as the answer showed it, with the caller and the request id', async () => {
    const caller = newCaller();
    const response = await call('post', '/tenants', caller.auth, {
      name: 'Contoso',
      domain: `c${hex(4)}.example.com`,
      client_id: randomUUID(),
    });
    expect(response.status).toBe(201);

    const events = await eventsOf(caller.tenantId);
    expect(events).toHaveLength(1);
    expect(events[0]!).toMatchObject({
      type: 'tenant.created',
      resourceType: 'tenant',
      resourceId: response.body.id,
      actorClientId: caller.clientId,
      actorOnBehalfOf: null,
      requestId: response.headers['x-request-id'],
      changes: null,
    });
    expect(events[0]!.data).toEqual({ object: response.body });
  });

  test('When a tenant is renamed and suspended, then tenant.updated holds the changed tenant and each changed field from → to', async () => {
    const caller = newCaller();
    const created = await call('post', '/tenants', caller.auth, {
      name: 'Contoso',
      domain: `c${hex(4)}.example.com`,
      client_id: randomUUID(),
    });
    const response = await call('patch', `/tenants/${created.body.id}`, caller.auth, {
      name: 'Contoso (M365)',
      status: 'suspended',
    });
    expect(response.status).toBe(200);

    const events = await eventsOf(caller.tenantId);
    expect(events.map((event) => event.type)).toEqual(['tenant.created', 'tenant.updated']);
    const changes = { name: { from: 'Contoso', to: 'Contoso (M365)' }, status: { from: 'active', to: 'suspended' } };
    expect(events[1]!).toMatchObject({
      resourceType: 'tenant',
      resourceId: created.body.id,
      actorClientId: caller.clientId,
      requestId: response.headers['x-request-id'],
      changes,
    });
    expect(events[1]!.data).toEqual({ object: response.body, changes });
  });

  test('When a PATCH changes nothing, or a write is refused (400, 404, 409), then no event is recorded', async () => {
    const caller = newCaller();
    const domain = `c${hex(4)}.example.com`;
    const created = await call('post', '/tenants', caller.auth, { name: 'Contoso', domain, client_id: randomUUID() });

    expect(
      (await call('patch', `/tenants/${created.body.id}`, caller.auth, { name: 'Contoso', status: 'active' })).status,
    ).toBe(200);
    expect((await call('patch', `/tenants/${created.body.id}`, caller.auth, { status: 'gone' })).status).toBe(400);
    expect((await call('patch', `/tenants/${randomUUID()}`, caller.auth, { status: 'suspended' })).status).toBe(404);
    // Another owner's tenant is as unknown as a missing one, and stays unchanged.
    expect((await call('patch', `/tenants/${created.body.id}`, newCaller().auth, { status: 'suspended' })).status).toBe(
      404,
    );
    expect(
      (
        await call('post', '/tenants', caller.auth, {
          name: 'Again',
          domain: domain.toUpperCase(),
          client_id: randomUUID(),
        })
      ).status,
    ).toBe(409);

    expect((await eventsOf(caller.tenantId)).map((event) => event.type)).toEqual(['tenant.created']);
  });
});

describe('sync runs', () => {
  let connectorId: string;
  beforeAll(async () => {
    connectorId = (await h.link.db.connector.findFirstOrThrow({ where: { managedTenantId: h.managed.id } })).id;
  });

  test(
    'When a sync run succeeds, then connector.sync.succeeded holds the run as GET ' +
      'shows it, under the connector, status from running to succeeded',
    async () => {
      const started = await call('post', `/connectors/${connectorId}/sync`, h.auth);
      expect(started.status).toBe(202);
      const run = await until(`/connectors/${connectorId}/syncs/${started.body.id}`, ended);
      expect(run.status).toBe('succeeded');

      const events = await eventsOf(h.deskTenant.tenantId, connectorId);
      expect(events).toHaveLength(1);
      const event = events[0]!;
      expect(event).toMatchObject({
        type: 'connector.sync.succeeded',
        resourceType: 'connector',
        resourceId: connectorId,
        actorClientId: 'system',
      });
      expect(event.requestId).not.toBe(started.headers['x-request-id']);
      expect((event.data as any).object).toEqual(run);
      expect(event.changes).toMatchObject({
        status: { from: 'running', to: 'succeeded' },
        finished_at: { from: null, to: run.finished_at },
      });
    },
  );

  test('When a sync run fails (the directory refuses the token), then connector.sync.failed holds the run and its error', async () => {
    h.scim.failNext('GET', /^\/scim\/v2\/Users$/, 401, 1);
    const started = await call('post', `/connectors/${connectorId}/sync`, h.auth);
    const run = await until(`/connectors/${connectorId}/syncs/${started.body.id}`, ended);
    expect(run.status).toBe('failed');

    const events = await eventsOf(h.deskTenant.tenantId, connectorId);
    // The connector's runs in the order they ended.
    expect(events.map((e) => [e.type, (e.data as any).object.id])).toEqual([
      ['connector.sync.succeeded', expect.any(String)],
      ['connector.sync.failed', run.id],
    ]);
    const event = events[1]!;
    expect(event).toMatchObject({
      resourceType: 'connector',
      actorClientId: 'system',
      changes: expect.objectContaining({ status: { from: 'running', to: 'failed' } }),
    });
    expect((event.data as any).object).toEqual(run);
    expect((event.data as any).object.error).toContain('401');
  });
});

describe('onboardings', () => {
  const onboarding = (overrides: Record<string, unknown> = {}) => ({
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `new.${hex(4)}@${h.managed.domain}`,
    department: 'Engineering',
    manager_id: managerId,
    start_date: '2025-12-01',
    bundles: [],
    physical: { laptop: 'ThinkPad', badge: false, phone_extension: false },
    ...overrides,
  });

  async function onboard(body: Record<string, unknown>) {
    const created = await call('post', '/onboardings', h.auth, body);
    expect(created.status).toBe(201);
    return until(`/onboardings/${created.body.id}`, ended);
  }

  test('When an onboarding completes, then onboarding.completed holds the run and its tasks as GET shows them', async () => {
    const run = await onboard(onboarding());
    expect(run.status).toBe('completed');
    const event = await jobEvent(run.id, 'onboarding.completed');
    expect(event.resourceType).toBe('onboarding');
    expect(event.data.object).toEqual(run);
    expect(event.data.changes).toEqual({
      status: { from: 'in_progress', to: 'completed' },
      finished_at: { from: null, to: run.finished_at },
    });
  });

  test('When a bundle has no group, then onboarding.completed_with_errors holds the run with the failed task', async () => {
    const run = await onboard(onboarding({ bundles: ['VPN', 'No such group'] }));
    expect(run.status).toBe('completed_with_errors');
    const event = await jobEvent(run.id, 'onboarding.completed_with_errors');
    expect(event.data.object).toEqual(run);
    expect(event.data.object.tasks[1].status).toBe('failed');
    expect(event.data.changes.status).toEqual({ from: 'in_progress', to: 'completed_with_errors' });
  });

  test('When the account cannot be created, then onboarding.failed holds the run with the rest skipped', async () => {
    const body = onboarding();
    h.scim.addUser({ userName: body.email });
    const run = await onboard(body);
    expect(run.status).toBe('failed');
    const event = await jobEvent(run.id, 'onboarding.failed');
    expect(event.data.object).toEqual(run);
    expect(event.data.object.tasks.map((t: { status: string }) => t.status)).toEqual(['failed', 'skipped', 'skipped']);
    expect(event.data.changes.status).toEqual({ from: 'in_progress', to: 'failed' });
  });
});

describe('offboardings', () => {
  async function leaver(options: { account?: boolean; domain?: string } = {}) {
    const email = `leaver.${hex(4)}@${options.domain ?? h.managed.domain}`;
    const user = await h.deskTenant.createUser({ name: 'Lea Ver', email });
    if (options.account !== false) h.scim.addUser({ userName: email });
    return user;
  }

  async function offboard(user: { id: string }, lastDay = day(-1)) {
    const successor = await h.deskTenant.createUser();
    const created = await call('post', '/offboardings', h.auth, {
      user_id: user.id,
      last_day: lastDay,
      mailbox_retention_days: 0,
      successor_id: successor.id,
    });
    expect(created.status).toBe(201);
    return { created: created.body, successor };
  }

  test('When every task of an offboarding succeeds, then offboarding.completed holds the run and its tasks as GET shows them', async () => {
    const { created } = await offboard(await leaver());
    const run = await until(`/offboardings/${created.id}`, ended);
    expect(run.status).toBe('completed');
    const event = await jobEvent(run.id, 'offboarding.completed');
    expect(event.resourceType).toBe('offboarding');
    expect(event.data.object).toEqual(run);
    expect(event.data.changes).toEqual({
      status: { from: 'in_progress', to: 'completed' },
      finished_at: { from: null, to: run.finished_at },
    });
  });

  test('When the directory has no account, then offboarding.completed_with_errors holds the run with the failed tasks', async () => {
    const { created } = await offboard(await leaver({ account: false }));
    const run = await until(`/offboardings/${created.id}`, ended);
    expect(run.status).toBe('completed_with_errors');
    const event = await jobEvent(run.id, 'offboarding.completed_with_errors');
    expect(event.data.object).toEqual(run);
    expect(event.data.changes.status).toEqual({ from: 'in_progress', to: 'completed_with_errors' });
  });

  test('When no task can succeed, then offboarding.failed holds the run', async () => {
    // No managed tenant has the leaver's domain (no directory, no mailbox ticket), and the
    // successor leaves before the run, so desk refuses to give them the leaver's ticket (which then
    // keeps the leaver active in desk too).
    const user = await leaver({ account: false, domain: `gone-${hex(3)}.example` });
    const company = await h.deskTenant.createClient();
    await h.deskTenant.createTicket({ client_id: company.id, assignee_id: user.id });
    const { created, successor } = await offboard(user, day(5));
    expect((await h.deskTenant.call('DELETE', `/users/${successor.id}`)).status).toBe(204);
    // Its tasks fall due now, and the job arrives.
    await h.link.db.runTask.updateMany({
      where: { offboardingId: created.id },
      data: { dueAt: new Date(Date.now() - 1000) },
    });
    await h.runOffboardingJobNow(created.id);

    const run = (await call('get', `/offboardings/${created.id}`, h.auth)).body;
    expect(run.status).toBe('failed');
    expect(run.tasks.map((t: { status: string }) => t.status)).toEqual([
      'failed',
      'failed',
      'failed',
      'failed',
      'failed',
    ]);
    const events = await eventsOf(h.deskTenant.tenantId, run.id);
    expect(events).toHaveLength(1);
    const event = events[0]!;
    // Called directly, outside the queue and any request: link itself, no request id.
    expect(event).toMatchObject({
      type: 'offboarding.failed',
      resourceType: 'offboarding',
      actorClientId: 'system',
      requestId: null,
    });
    expect((event.data as any).object).toEqual(run);
    expect(event.changes).toMatchObject({ status: { from: 'in_progress', to: 'failed' } });
  });

  test(
    'When a scheduled offboarding is cancelled, then offboarding.cancelled holds the answer, ' +
      'the caller and the request id; a second cancel (409) records nothing',
    async () => {
      const { created } = await offboard(await leaver(), day(5));
      const clientId = `tech-${hex(3)}`;
      const auth = `Bearer ${h.link.token({ tenant_id: h.deskTenant.tenantId, sub: clientId })}`;
      const response = await call('post', `/offboardings/${created.id}/cancel`, auth);
      expect(response.status).toBe(200);
      expect((await call('post', `/offboardings/${created.id}/cancel`, auth)).status).toBe(409);

      const events = await eventsOf(h.deskTenant.tenantId, created.id);
      expect(events).toHaveLength(1);
      expect(events[0]!).toMatchObject({
        type: 'offboarding.cancelled',
        resourceType: 'offboarding',
        actorClientId: clientId,
        requestId: response.headers['x-request-id'],
      });
      expect((events[0]!.data as any).object).toEqual(response.body);
      expect(events[0]!.changes).toMatchObject({
        status: { from: 'scheduled', to: 'cancelled' },
        cancelled_at: { from: null, to: response.body.cancelled_at },
        tasks: { from: created.tasks, to: response.body.tasks },
      });
    },
  );
});

describe('a rolled-back write', () => {
  test('When the event cannot be stored, then the change is rolled back with it: the tenant is unchanged, none is created, and no event exists', async () => {
    const caller = newCaller();
    const created = await call('post', '/tenants', caller.auth, {
      name: 'Contoso',
      domain: `c${hex(4)}.example.com`,
      client_id: randomUUID(),
    });
    await whileEventsCannotBeStored(h.link.db, async () => {
      const patched = await call('patch', `/tenants/${created.body.id}`, caller.auth, { status: 'suspended' });
      const posted = await call('post', '/tenants', caller.auth, {
        name: 'Fabrikam',
        domain: `f${hex(4)}.example.com`,
        client_id: randomUUID(),
      });
      expect(patched.status).toBe(500);
      expect(posted.status).toBe(500);
    });

    expect((await call('get', `/tenants/${created.body.id}`, caller.auth)).body).toEqual(created.body);
    expect(await h.link.db.managedTenant.count({ where: { ownerTenantId: caller.tenantId } })).toBe(1);
    expect((await eventsOf(caller.tenantId)).map((event) => event.type)).toEqual(['tenant.created']);
  });
});
