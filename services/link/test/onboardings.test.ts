import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { runDateWindow } from './support/run-date-window';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

const ONBOARDINGS = '/api/v1/onboardings';

let h: RunsHarness;
let managerId: string;

beforeAll(async () => {
  h = await startRunsHarness();
  managerId = (await h.deskTenant.createUser({ name: 'Grace Manager' })).id;
  h.scim.addGroup('M365 E3');
  h.scim.addGroup('VPN');
});
afterAll(() => h?.close());

const newEmail = (domain = h.managed.domain) => `new.hire.${randomBytes(4).toString('hex')}@${domain}`;

function input(overrides: Record<string, unknown> = {}) {
  return {
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: newEmail(),
    department: 'Engineering',
    manager_id: managerId,
    start_date: '2025-12-01',
    bundles: ['M365 E3', 'VPN'],
    physical: { laptop: 'ThinkPad T14 Gen 5', badge: true, phone_extension: false },
    ...overrides,
  };
}

const post = (body: unknown, auth = h.auth) =>
  request(h.link.app)
    .post(ONBOARDINGS)
    .set('Authorization', auth)
    .send(body as object);
const get = (path: string, auth = h.auth) => request(h.link.app).get(path).set('Authorization', auth);

function expectProblem(response: request.Response, status: number, type?: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body.status).toBe(status);
  if (type) expect(response.body.type).toBe(`urn:msp:problem:${type}`);
}

/** Polls GET /onboardings/:id until the run has finished (the queue runs it in the background). */
async function finished(id: string) {
  for (;;) {
    const response = await get(`${ONBOARDINGS}/${id}`);
    expect(response.status).toBe(200);
    if (!['scheduled', 'in_progress'].includes(response.body.status)) return response.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const desksTickets = async () =>
  (await h.deskTenant.call('GET', '/tickets?per_page=100')).body.data as {
    id: string;
    number: number;
    title: string;
    description: string;
    category: string;
    client_id: string;
  }[];

describe('POST /onboardings', () => {
  test(
    'When a valid onboarding is posted, then it answers 201 with Location and the run, and the ' +
      'queue creates the account, assigns the bundles and opens the hardware ticket',
    async () => {
      const body = input();
      const response = await post(body);

      expect(response.status).toBe(201);
      expect(response.headers.location).toBe(`${ONBOARDINGS}/${response.body.id}`);
      expect(response.body).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        tenant_id: h.managed.id,
        status: expect.stringMatching(/^(scheduled|in_progress|completed)$/),
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: body.email,
        department: 'Engineering',
        manager_id: managerId,
        start_date: '2025-12-01',
        bundles: ['M365 E3', 'VPN'],
        physical: { laptop: 'ThinkPad T14 Gen 5', badge: true, phone_extension: false },
      });
      expect(response.body.tasks.map((t: { name: string }) => t.name)).toEqual([
        'create_account',
        'assign_bundles',
        'equipment_ticket',
      ]);

      const run = await finished(response.body.id);
      expect(run.status).toBe('completed');
      expect(run.tasks.map((t: { status: string }) => t.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      for (const task of run.tasks) {
        expect(Date.parse(task.started_at)).toBeLessThanOrEqual(Date.parse(task.finished_at));
        expect(task.detail).toEqual(expect.any(String));
      }

      // The directory has the account as SCIM describes it, and it is in both groups.
      const account = h.scim.users().find((u) => u.userName === body.email)!;
      expect(account).toMatchObject({
        userName: body.email,
        active: true,
        name: { givenName: 'Ada', familyName: 'Lovelace' },
      });
      expect(account.emails).toEqual([expect.objectContaining({ value: body.email, primary: true })]);
      expect(account['urn:ietf:params:scim:schemas:extension:enterprise:2.0:User']).toMatchObject({
        department: 'Engineering',
      });
      expect(run.directory_user_id).toBe(account.id);
      expect(run.tasks[0].result).toEqual({ directory_user_id: account.id });
      for (const group of h.scim.groups().filter((g) => ['M365 E3', 'VPN'].includes(g.displayName))) {
        expect(group.members.map((m) => m.value)).toContain(account.id);
      }

      // desk has the hardware ticket for the managed tenant's client, naming person, date and equipment.
      const ticket = (await desksTickets()).find((t) => t.id === run.equipment_ticket.id)!;
      expect(run.equipment_ticket).toEqual({ id: ticket.id, number: ticket.number });
      expect(run.tasks[2].result).toEqual({ ticket_id: ticket.id, ticket_number: ticket.number });
      expect(ticket).toMatchObject({ category: 'hardware', client_id: h.managed.client_id });
      expect(ticket.title).toContain('Ada Lovelace');
      expect(ticket.description).toContain('2025-12-01');
      expect(ticket.description).toContain('ThinkPad T14 Gen 5');
      expect(ticket.description).toMatch(/Badge: needed/);
      expect(ticket.description).toMatch(/Phone extension: not needed/);
    },
  );

  test(
    'When a bundle has no directory group, then assign_bundles fails naming it, the other ' +
      'bundles are still assigned, and the run completes with errors',
    async () => {
      const body = input({ bundles: ['VPN', 'Visio Pro'] });
      const created = await post(body);
      expect(created.status).toBe(201);

      const run = await finished(created.body.id);
      expect(run.status).toBe('completed_with_errors');
      expect(run.tasks.map((t: { status: string }) => t.status)).toEqual(['succeeded', 'failed', 'succeeded']);
      expect(run.tasks[1].detail).toContain('"Visio Pro"');
      expect(run.tasks[1].result).toEqual({ assigned: ['VPN'], missing: ['Visio Pro'] });
      const vpn = h.scim.groups().find((g) => g.displayName === 'VPN')!;
      expect(vpn.members.map((m) => m.value)).toContain(run.directory_user_id);
      expect(run.equipment_ticket).toEqual({ id: expect.any(String), number: expect.any(Number) });
    },
  );

  test('When the account cannot be created, then the run fails and the other tasks are skipped', async () => {
    const email = newEmail();
    h.scim.addUser({ userName: email });
    const ticketsBefore = (await desksTickets()).length;

    const created = await post(input({ email }));
    expect(created.status).toBe(201);
    const run = await finished(created.body.id);

    expect(run.status).toBe('failed');
    expect(run.tasks.map((t: { status: string }) => t.status)).toEqual(['failed', 'skipped', 'skipped']);
    expect(run.tasks[0].detail).toEqual(expect.stringMatching(/409|already|exists|uniqueness/i));
    expect(run.directory_user_id).toBeNull();
    expect((await desksTickets()).length).toBe(ticketsBefore);
  });

  test('When tenant_id names the managed tenant, then the e-mail domain need not match', async () => {
    const created = await post(input({ email: newEmail('elsewhere.example'), tenant_id: h.managed.id, bundles: [] }));
    expect(created.status).toBe(201);
    const run = await finished(created.body.id);
    expect(run.status).toBe('completed');
    expect(run.tasks[1].detail).toBe('No bundles to assign.');
  });

  test(
    "When the domain is no managed tenant, tenant_id is not the caller's, or the " +
      'tenant has no enabled connector, then 422 and nothing is stored',
    async () => {
      const before = await h.link.db.onboarding.count();
      const unknownDomain = await post(input({ email: newEmail('nowhere.example') }));
      expectProblem(unknownDomain, 422);
      expect(unknownDomain.body.errors).toEqual([expect.objectContaining({ field: 'email' })]);

      const foreign = await post(input({ tenant_id: randomUUID() }));
      expectProblem(foreign, 422);
      expect(foreign.body.errors).toEqual([expect.objectContaining({ field: 'tenant_id' })]);

      const bare = await h.registerManagedTenant({ withConnector: false });
      const noConnector = await post(input({ email: newEmail(bare.domain) }));
      expectProblem(noConnector, 422);
      expect(noConnector.body.detail).toMatch(/no enabled connector/);
      expect(await h.link.db.onboarding.count()).toBe(before);
    },
  );

  test("When manager_id is no desk user of the caller's tenant, or a deactivated one, then 422 naming manager_id and nothing is stored", async () => {
    const before = await h.link.db.onboarding.count();
    const gone = await h.deskTenant.createUser();
    expect((await h.deskTenant.call('DELETE', `/users/${gone.id}`)).status).toBe(204);
    const otherTenant = await h.desk.newTenant();
    const foreign = await otherTenant.createUser();

    for (const manager of [randomUUID(), gone.id, foreign.id]) {
      const response = await post(input({ manager_id: manager }));
      expectProblem(response, 422);
      expect(response.body.errors).toEqual([
        { field: 'manager_id', message: 'does not name an active desk user of your tenant' },
      ]);
    }
    expect(await h.link.db.onboarding.count()).toBe(before);
  });

  test('When the body is malformed, then 400 names the fields and nothing is stored', async () => {
    const before = await h.link.db.onboarding.count();
    const cases: Record<string, unknown>[] = [
      { ...input(), email: 'not-an-address' },
      { ...input(), start_date: '01.12.2030' },
      { ...input(), physical: undefined },
      { ...input(), physical: { laptop: 'X', badge: 'yes', phone_extension: false } },
      { ...input(), bundles: 'VPN' },
      { ...input(), manager_id: 'grace' },
      { ...input(), unexpected: true },
    ];
    for (const body of cases) expectProblem(await post(body), 400, 'validation-error');
    expect(await h.link.db.onboarding.count()).toBe(before);
  });

  test(
    'When start_date lies more than ten years back or five years ahead (year 9999, 0999), then 422 ' +
      'naming both limits, the dry run too, and nothing is stored; the edges are accepted',
    async () => {
      const { earliest, latest, outside } = runDateWindow();
      const before = await h.link.db.onboarding.count();
      for (const startDate of outside) {
        for (const path of [ONBOARDINGS, `${ONBOARDINGS}?dry_run=true`]) {
          const response = await request(h.link.app)
            .post(path)
            .set('Authorization', h.auth)
            .send(input({ start_date: startDate }));
          expectProblem(response, 422);
          expect(response.body.errors).toEqual([
            { field: 'start_date', message: `must be between ${earliest} and ${latest}` },
          ]);
          expect(response.body).toMatchObject({ earliest, latest });
        }
      }
      expect(await h.link.db.onboarding.count()).toBe(before);

      const staged = await post(input({ start_date: latest }));
      expect(staged.status).toBe(201);
      expect(staged.body.tasks.at(-1)).toMatchObject({ name: 'activate_account', due_at: `${latest}T00:00:00.000Z` });
      expect((await post(input({ start_date: earliest }))).status).toBe(201);
    },
  );

  test('When the same e-mail is already being onboarded, then 409; two racing requests create exactly one run', async () => {
    const release = h.scim.hold('POST', /\/Users$/);
    try {
      const body = input();
      const first = await post(body);
      expect(first.status).toBe(201);
      const second = await post({ ...body, email: body.email.toUpperCase() });
      expectProblem(second, 409);
      expect(second.body.errors).toEqual([{ field: 'email', message: 'is already being onboarded' }]);

      const racing = input();
      const results = await Promise.all([post(racing), post(racing), post(racing)]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      expect(await h.link.db.onboarding.count({ where: { email: racing.email } })).toBe(1);
    } finally {
      release();
    }
  });

  test('When the run has finished, then the same e-mail may be onboarded again', async () => {
    const body = input({ bundles: [] });
    const first = await post(body);
    await finished(first.body.id);
    const again = await post(body);
    expect(again.status).toBe(201);
    const run = await finished(again.body.id);
    expect(run.status).toBe('failed'); // the account exists now: the directory refuses a second one
  });

  test('When desk is down while the hardware ticket is due, then that task fails and is retried, and the run completes once desk is back', async () => {
    const release = h.scim.hold('POST', /\/Users$/);
    const created = await post(input({ bundles: [] }));
    expect(created.status).toBe(201);
    await h.desk.suspend();
    release();
    try {
      // Wait for the failed try the queue will retry.
      for (;;) {
        const task = await h.link.db.runTask.findFirst({
          where: { onboardingId: created.body.id, name: 'equipment_ticket' },
        });
        if (task!.status === 'failed' && task!.finishedAt === null) {
          expect(task!.detail).toMatch(/^desk is unreachable.*will be retried/);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const during = (await get(`${ONBOARDINGS}/${created.body.id}`)).body;
      expect(during.status).toBe('in_progress');
      expect(during.tasks.map((t: { status: string }) => t.status)).toEqual(['succeeded', 'succeeded', 'failed']);
      expect(during.tasks[2].finished_at).toBeNull();
    } finally {
      await h.desk.resume();
    }
    const run = await finished(created.body.id);
    expect(run.status).toBe('completed');
    expect(run.tasks[2].attempts).toBeGreaterThanOrEqual(2);
    expect((await desksTickets()).filter((t) => t.id === run.equipment_ticket.id)).toHaveLength(1);
  });

  test(
    'When desk opens the hardware ticket but answers after link has given up waiting, ' +
      'then the retry gets that ticket and desk holds exactly one',
    async () => {
      // link waits 2 s for desk (the harness's timeout); desk commits, then answers after 3 s.
      h.desk.answerLate('POST', /\/tickets$/, 3000);
      const created = await post(input({ bundles: [] }));
      expect(created.status).toBe(201);
      const run = await finished(created.body.id);
      expect(run.status).toBe('completed');
      expect(run.tasks[2].attempts).toBeGreaterThanOrEqual(2);
      const opened = (await desksTickets()).filter((t) => t.description.includes(`onboarding ${created.body.id}`));
      expect(opened.map((t) => t.id)).toEqual([run.equipment_ticket.id]);
    },
  );

  test('When link restarts in the middle of a run, then the run still finishes and no finished step is repeated', async () => {
    h.scim.failNext('PATCH', /\/Groups\//, 503, 1);
    const body = input({ bundles: ['M365 E3'] });
    const created = await post(body);
    expect(created.status).toBe(201);
    for (;;) {
      const task = await h.link.db.runTask.findFirst({
        where: { onboardingId: created.body.id, name: 'assign_bundles' },
      });
      if (task!.attempts >= 1 && task!.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const accountsCreated = h.scim.requests().filter((r) => r === 'POST /scim/v2/Users').length;
    await h.restart();

    const run = await finished(created.body.id);
    expect(run.status).toBe('completed');
    expect(run.tasks[1].attempts).toBe(2);
    expect(h.scim.users().filter((u) => u.userName === body.email)).toHaveLength(1);
    // create_account had finished before the restart: it was not run again.
    expect(h.scim.requests().filter((r) => r === 'POST /scim/v2/Users')).toHaveLength(accountsCreated);
    expect(run.tasks[0].attempts).toBe(1);
  });
});

describe('GET /onboardings', () => {
  test('When listed, then it pages newest first and filters by status; another tenant sees none of them', async () => {
    const created = await post(input({ bundles: [] }));
    await finished(created.body.id);

    const page = await get(`${ONBOARDINGS}?per_page=2`);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(2);
    expect(page.body.pagination).toMatchObject({
      page: 1,
      per_page: 2,
      total: await h.link.db.onboarding.count({ where: { ownerTenantId: h.deskTenant.tenantId } }),
    });
    expect(page.headers.link).toMatch(/rel="next"/);
    expect(page.body.data[0].id).toBe(created.body.id);

    const failed = await get(`${ONBOARDINGS}?status=failed&per_page=100`);
    expect(failed.body.data.length).toBeGreaterThan(0);
    expect(failed.body.data.every((run: { status: string }) => run.status === 'failed')).toBe(true);
    expectProblem(await get(`${ONBOARDINGS}?status=done`), 400);

    const stranger = `Bearer ${h.link.token({ tenant_id: randomUUID() })}`;
    expect((await get(ONBOARDINGS, stranger)).body.pagination.total).toBe(0);
    expectProblem(await get(`${ONBOARDINGS}/${created.body.id}`, stranger), 404);
    expectProblem(await get(`${ONBOARDINGS}/${randomUUID()}`), 404);
  });

  test('When the token lacks admin:tenant, then 403', async () => {
    const reader = `Bearer ${h.link.token({ tenant_id: h.deskTenant.tenantId, scope: 'read:tickets' })}`;
    expectProblem(await get(ONBOARDINGS, reader), 403);
    expectProblem(await post(input(), reader), 403);
  });
});
