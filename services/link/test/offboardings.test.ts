import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { runDateWindow } from './support/run-date-window';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

const OFFBOARDINGS = '/api/v1/offboardings';
const DAY_MS = 86_400_000;

let h: RunsHarness;
let company: { id: string };

beforeAll(async () => {
  h = await startRunsHarness();
  company = await h.deskTenant.createClient();
});
afterAll(() => h?.close());

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
const endOf = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString();

/** A desk user with a directory account (userName = their desk e-mail) in the managed tenant. */
async function leaver(options: { account?: boolean } = {}) {
  const email = `leaver.${randomBytes(4).toString('hex')}@${h.managed.domain}`;
  const user = await h.deskTenant.createUser({ name: 'Lea Ver', email });
  const account = options.account === false ? undefined : h.scim.addUser({ userName: email });
  return { ...user, account };
}

const post = (body: unknown, auth = h.auth) =>
  request(h.link.app)
    .post(OFFBOARDINGS)
    .set('Authorization', auth)
    .send(body as object);
const get = (path: string, auth = h.auth) => request(h.link.app).get(path).set('Authorization', auth);
const cancel = (id: string, auth = h.auth) =>
  request(h.link.app).post(`${OFFBOARDINGS}/${id}/cancel`).set('Authorization', auth);

function expectProblem(response: request.Response, status: number, type?: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body.status).toBe(status);
  if (type) expect(response.body.type).toBe(`urn:msp:problem:${type}`);
}

/** Polls until `done` holds for the run (the queue works in the background). */
async function until(id: string, done: (run: any) => boolean) {
  for (;;) {
    const response = await get(`${OFFBOARDINGS}/${id}`);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const isFinished = (run: { status: string }) => !['scheduled', 'in_progress'].includes(run.status);

const ticket = async (id: string) =>
  (await h.deskTenant.call('GET', `/tickets/${id}`)).body as { assignee_id: string | null; status: string };

describe('POST /offboardings', () => {
  test(
    'When the last day has passed, then 201 scheduled, and the due tasks reassign the open tickets, ' +
      'disable the account and open the mailbox ticket; deletion waits for the retention',
    async () => {
      const user = await leaver();
      const successor = await h.deskTenant.createUser({ name: 'Sam Successor' });
      const open = await h.deskTenant.createTicket({ client_id: company.id, assignee_id: user.id });
      const pending = await h.deskTenant.createTicket({ client_id: company.id, assignee_id: user.id });
      expect((await h.deskTenant.call('PATCH', `/tickets/${pending.id}`, { status: 'pending' })).status).toBe(200);
      const resolved = await h.deskTenant.createTicket({ client_id: company.id, assignee_id: user.id });
      expect((await h.deskTenant.call('PATCH', `/tickets/${resolved.id}`, { status: 'resolved' })).status).toBe(200);
      const lastDay = day(-2);

      const response = await post({
        user_id: user.id,
        last_day: lastDay,
        mailbox_retention_days: 30,
        successor_id: successor.id,
      });

      expect(response.status).toBe(201);
      expect(response.headers.location).toBe(`${OFFBOARDINGS}/${response.body.id}`);
      expect(response.body).toMatchObject({
        status: 'scheduled',
        user_id: user.id,
        successor_id: successor.id,
        email: user.email.toLowerCase(),
        tenant_id: h.managed.id,
        last_day: lastDay,
        mailbox_retention_days: 30,
        cancelled_at: null,
      });
      expect(response.body.tasks.map((t: { name: string; status: string }) => [t.name, t.status])).toEqual([
        ['reassign_tickets', 'pending'],
        ['deactivate_user', 'pending'],
        ['disable_account', 'pending'],
        ['delegate_mailbox', 'pending'],
        ['delete_account', 'pending'],
      ]);
      // Past due: now. Deletion: the end of the last day plus the retention, still ahead.
      const created = Date.parse(response.body.created_at);
      expect(Math.abs(Date.parse(response.body.tasks[0].due_at) - created)).toBeLessThan(60_000);
      expect(response.body.tasks[4].due_at).toBe(new Date(Date.parse(endOf(lastDay)) + 30 * DAY_MS).toISOString());

      const run = await until(response.body.id, (r) =>
        r.tasks.slice(0, 4).every((t: { finished_at: string | null }) => t.finished_at),
      );
      expect(run.status).toBe('in_progress');
      expect(run.tasks.map((t: { status: string }) => t.status)).toEqual([
        'succeeded',
        'succeeded',
        'succeeded',
        'succeeded',
        'pending',
      ]);

      expect((await ticket(open.id)).assignee_id).toBe(successor.id);
      expect((await ticket(pending.id)).assignee_id).toBe(successor.id);
      expect((await ticket(resolved.id)).assignee_id).toBe(user.id);
      expect(run.tasks[0].result.reassigned.sort()).toEqual([open.number, pending.number].sort());

      expect(h.scim.users().find((u) => u.id === user.account!.id)!.active).toBe(false);
      expect(run.directory_user_id).toBe(user.account!.id);

      const mailbox = (await h.deskTenant.call('GET', `/tickets/${run.tasks[3].result.ticket_id}`)).body;
      expect(mailbox).toMatchObject({
        category: 'email',
        client_id: h.managed.client_id,
        number: run.tasks[3].result.ticket_number,
      });
      expect(mailbox.title).toContain(user.email.toLowerCase());
      expect(mailbox.description).toContain('Sam Successor');

      // Nothing deleted before its time.
      expect(h.scim.users().some((u) => u.id === user.account!.id)).toBe(true);
      expect(h.scim.requests().some((r) => r === `DELETE /scim/v2/Users/${user.account!.id}`)).toBe(false);
    },
  );

  test(
    'When desk opens the mailbox ticket but answers after link has given up waiting, ' +
      'then the retry gets that ticket and desk holds exactly one',
    async () => {
      const user = await leaver();
      const successor = await h.deskTenant.createUser({ name: 'Sam Successor' });
      // link waits 2 s for desk (the harness's timeout); desk commits, then answers after 3 s.
      h.desk.answerLate('POST', /\/tickets$/, 3000);
      const response = await post({
        user_id: user.id,
        last_day: day(-2),
        mailbox_retention_days: 30,
        successor_id: successor.id,
      });
      expect(response.status).toBe(201);
      const run = await until(response.body.id, (r) =>
        r.tasks.slice(0, 4).every((t: { finished_at: string | null }) => t.finished_at),
      );
      expect(run.tasks[3]).toMatchObject({ name: 'delegate_mailbox', status: 'succeeded' });
      expect(run.tasks[3].attempts).toBeGreaterThanOrEqual(2);
      const all = (await h.deskTenant.call('GET', '/tickets?per_page=100')).body.data as {
        id: string;
        description: string;
      }[];
      const opened = all.filter((t) => t.description.includes(`offboarding ${response.body.id}`));
      expect(opened.map((t) => t.id)).toEqual([run.tasks[3].result.ticket_id]);
    },
  );

  test('When the retention is 0, then the account is deleted after the other tasks and the run completes', async () => {
    const user = await leaver();
    const successor = await h.deskTenant.createUser();
    const response = await post({
      user_id: user.id,
      last_day: day(-1),
      mailbox_retention_days: 0,
      successor_id: successor.id,
    });
    expect(response.status).toBe(201);

    const run = await until(response.body.id, isFinished);
    expect(run.status).toBe('completed');
    expect(run.tasks.map((t: { status: string }) => t.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    expect(run.tasks[0].detail).toBe('No open tickets to reassign.');
    expect(h.scim.users().some((u) => u.id === user.account!.id)).toBe(false);
    expect(run.finished_at).toEqual(expect.any(String));
  });

  test(
    'When an offboarding completes, then deactivate_user, dated and run right after reassign_tickets, ' +
      'has deactivated the leaver in desk while their tickets stay with the successor',
    async () => {
      const user = await leaver();
      const successor = await h.deskTenant.createUser({ name: 'Sam Successor' });
      const theirs = await h.deskTenant.createTicket({ client_id: company.id, assignee_id: user.id });
      const lastDay = day(-1);
      const response = await post({
        user_id: user.id,
        last_day: lastDay,
        mailbox_retention_days: 0,
        successor_id: successor.id,
      });
      expect(response.status).toBe(201);
      expect(response.body.tasks[1]).toMatchObject({
        name: 'deactivate_user',
        status: 'pending',
        due_at: response.body.tasks[0].due_at,
      });

      const run = await until(response.body.id, isFinished);
      expect(run.status).toBe('completed');
      expect(run.tasks.map((t: { name: string }) => t.name)).toEqual([
        'reassign_tickets',
        'deactivate_user',
        'disable_account',
        'delegate_mailbox',
        'delete_account',
      ]);
      expect(run.tasks[1]).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        detail: `Deactivated ${user.email.toLowerCase()} in desk.`,
        result: { user_id: user.id, deactivated: true },
      });
      // In order: the reassignment had finished before the deactivation began.
      expect(Date.parse(run.tasks[1].started_at)).toBeGreaterThanOrEqual(Date.parse(run.tasks[0].finished_at));

      const deskUser = await h.deskTenant.call('GET', `/users/${user.id}`);
      expect(deskUser.body).toMatchObject({ id: user.id, active: false });
      const listed = (await h.deskTenant.call('GET', '/users?per_page=100')).body.data as { id: string }[];
      expect(listed.some((u) => u.id === user.id)).toBe(false);
      // desk unassigns a deactivated user's open tickets: this one had been moved on before.
      expect(await ticket(theirs.id)).toMatchObject({ assignee_id: successor.id, status: 'open' });
    },
  );

  test('When the last day is in the future, then the run stays scheduled and nothing is touched, while a due offboarding queued after it runs', async () => {
    const future = await leaver();
    const successor = await h.deskTenant.createUser();
    const theirs = await h.deskTenant.createTicket({ client_id: company.id, assignee_id: future.id });
    const lastDay = day(10);
    const scheduled = await post({
      user_id: future.id,
      last_day: lastDay,
      mailbox_retention_days: 5,
      successor_id: successor.id,
    });
    expect(scheduled.status).toBe(201);
    expect(scheduled.body.tasks.map((t: { due_at: string }) => t.due_at)).toEqual([
      endOf(lastDay),
      endOf(lastDay),
      endOf(lastDay),
      endOf(lastDay),
      new Date(Date.parse(endOf(lastDay)) + 5 * DAY_MS).toISOString(),
    ]);

    // A due run created afterwards finishing proves the worker was running all along.
    const due = await leaver();
    const barrier = await post({
      user_id: due.id,
      last_day: day(-1),
      mailbox_retention_days: 0,
      successor_id: successor.id,
    });
    await until(barrier.body.id, isFinished);

    const still = (await get(`${OFFBOARDINGS}/${scheduled.body.id}`)).body;
    expect(still.status).toBe('scheduled');
    expect(still.started_at).toBeNull();
    expect(
      still.tasks.every(
        (t: { status: string; attempts: number; started_at: string | null }) =>
          t.status === 'pending' && t.attempts === 0 && t.started_at === null,
      ),
    ).toBe(true);
    expect(h.scim.users().find((u) => u.id === future.account!.id)!.active).toBe(true);
    expect((await ticket(theirs.id)).assignee_id).toBe(future.id);
    // Its jobs wait in the queue for their time.
    const jobs = await h.queuedJobs(scheduled.body.id);
    expect(jobs.map((j) => j.startAfter.toISOString()).sort()).toEqual([
      endOf(lastDay),
      new Date(Date.parse(endOf(lastDay)) + 5 * DAY_MS).toISOString(),
    ]);
  });

  test('When the users are the same, unknown, inactive or of another tenant, then 422 naming the field and nothing is stored', async () => {
    const before = await h.link.db.offboarding.count();
    const user = await leaver();
    const successor = await h.deskTenant.createUser();
    const gone = await h.deskTenant.createUser();
    expect((await h.deskTenant.call('DELETE', `/users/${gone.id}`)).status).toBe(204);
    const foreign = await (await h.desk.newTenant()).createUser();
    const body = { user_id: user.id, last_day: day(3), mailbox_retention_days: 30, successor_id: successor.id };

    const same = await post({ ...body, successor_id: user.id });
    expectProblem(same, 422);
    expect(same.body.errors).toEqual([{ field: 'successor_id', message: 'must differ from user_id' }]);
    // Ids compare as values: the leaver in capitals is still the leaver.
    const sameInCapitals = await post({ ...body, successor_id: user.id.toUpperCase() });
    expectProblem(sameInCapitals, 422);
    expect(sameInCapitals.body.errors).toEqual([{ field: 'successor_id', message: 'must differ from user_id' }]);
    for (const [field, value] of [
      ['user_id', randomUUID()],
      ['user_id', foreign.id],
      ['successor_id', gone.id],
      ['successor_id', foreign.id],
    ] as const) {
      const response = await post({ ...body, [field]: value });
      expectProblem(response, 422);
      expect(response.body.errors).toEqual([{ field, message: 'does not name an active desk user of your tenant' }]);
    }
    expect(await h.link.db.offboarding.count()).toBe(before);
  });

  test('When mailbox_retention_days is outside 0–3650 or the body is malformed, then 400 and nothing is stored', async () => {
    const before = await h.link.db.offboarding.count();
    const base = { user_id: randomUUID(), last_day: day(3), mailbox_retention_days: 30, successor_id: randomUUID() };
    for (const body of [
      { ...base, mailbox_retention_days: 3651 },
      { ...base, mailbox_retention_days: -1 },
      { ...base, mailbox_retention_days: 1.5 },
      { ...base, last_day: '2026-02-30x' },
      { ...base, user_id: 'lea' },
      { ...base, successor_id: undefined },
    ]) {
      const response = await post(body);
      expectProblem(response, 400, 'validation-error');
    }
    expect(await h.link.db.offboarding.count()).toBe(before);
    // The edges are fine.
    const user = await leaver();
    const successor = await h.deskTenant.createUser();
    expect(
      (await post({ user_id: user.id, last_day: day(30), mailbox_retention_days: 3650, successor_id: successor.id }))
        .status,
    ).toBe(201);
  });

  test(
    'When last_day lies more than ten years back or five years ahead (year 9999, 0999), then 422 naming both ' +
      'limits, the dry run too, and nothing is stored; the edges are accepted, the furthest deletion dated',
    async () => {
      const { earliest, latest, outside } = runDateWindow();
      const user = await leaver();
      const successor = await h.deskTenant.createUser();
      const body = { user_id: user.id, mailbox_retention_days: 3650, successor_id: successor.id };
      for (const lastDay of outside) {
        for (const path of [OFFBOARDINGS, `${OFFBOARDINGS}?dry_run=true`]) {
          const response = await request(h.link.app)
            .post(path)
            .set('Authorization', h.auth)
            .send({ ...body, last_day: lastDay });
          expectProblem(response, 422);
          expect(response.body.errors).toEqual([
            { field: 'last_day', message: `must be between ${earliest} and ${latest}` },
          ]);
          expect(response.body).toMatchObject({ earliest, latest });
          expect(response.body.detail).toContain(`${earliest} to ${latest}`);
        }
      }
      expect(await h.link.db.offboarding.count({ where: { userId: user.id } })).toBe(0);

      const furthest = await post({ ...body, last_day: latest });
      expect(furthest.status).toBe(201);
      expect(furthest.body.tasks[4].due_at).toBe(new Date(Date.parse(endOf(latest)) + 3650 * DAY_MS).toISOString());
      expect((await cancel(furthest.body.id)).status).toBe(200);
      expect((await post({ ...body, last_day: earliest, mailbox_retention_days: 30 })).status).toBe(201);
    },
  );

  test('When the user already has a scheduled offboarding, then 409; racing requests create exactly one', async () => {
    const user = await leaver();
    const successor = await h.deskTenant.createUser();
    const body = { user_id: user.id, last_day: day(5), mailbox_retention_days: 30, successor_id: successor.id };
    expect((await post(body)).status).toBe(201);
    const again = await post({ ...body, last_day: day(6) });
    expectProblem(again, 409);
    expect(again.body.errors).toEqual([{ field: 'user_id', message: 'is already being offboarded' }]);

    const racer = await leaver();
    const results = await Promise.all([1, 2, 3].map(() => post({ ...body, user_id: racer.id })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(await h.link.db.offboarding.count({ where: { userId: racer.id } })).toBe(1);
  });

  test('When the directory has no account for the user, then disable_account fails saying so and the run completes with errors', async () => {
    const user = await leaver({ account: false });
    const successor = await h.deskTenant.createUser();
    const response = await post({
      user_id: user.id,
      last_day: day(-1),
      mailbox_retention_days: 0,
      successor_id: successor.id,
    });
    const run = await until(response.body.id, isFinished);
    expect(run.status).toBe('completed_with_errors');
    expect(run.tasks.map((t: { status: string }) => t.status)).toEqual([
      'succeeded',
      'succeeded',
      'failed',
      'succeeded',
      'failed',
    ]);
    expect(run.tasks[2].detail).toBe(
      `The directory of ${h.managed.domain} has no account with userName ${user.email.toLowerCase()}.`,
    );
  });
});

describe('POST /offboardings/:id/cancel', () => {
  test(
    'When a scheduled offboarding is cancelled, then 200 cancelled, its tasks are ' +
      'skipped, it never runs, and the user may be offboarded again',
    async () => {
      const user = await leaver();
      const successor = await h.deskTenant.createUser();
      const body = { user_id: user.id, last_day: day(2), mailbox_retention_days: 0, successor_id: successor.id };
      const created = await post(body);

      const response = await cancel(created.body.id);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: created.body.id,
        status: 'cancelled',
        cancelled_at: expect.any(String),
      });
      expect(
        response.body.tasks.every(
          (t: { status: string; started_at: string | null }) => t.status === 'skipped' && t.started_at === null,
        ),
      ).toBe(true);
      expect(await h.queuedJobs(created.body.id)).toEqual([]);

      // Even a job that does arrive (a crafted one, due now) does nothing for a cancelled run.
      await h.runOffboardingJobNow(created.body.id);
      const after = (await get(`${OFFBOARDINGS}/${created.body.id}`)).body;
      expect(after.status).toBe('cancelled');
      expect(after.tasks.every((t: { attempts: number }) => t.attempts === 0)).toBe(true);
      expect(h.scim.users().find((u) => u.id === user.account!.id)!.active).toBe(true);

      expectProblem(await cancel(created.body.id), 409);
      expect((await post(body)).status).toBe(201);
    },
  );

  test('When something has already run, then cancel is 409 and changes nothing', async () => {
    const user = await leaver();
    const successor = await h.deskTenant.createUser();
    const created = await post({
      user_id: user.id,
      last_day: day(-1),
      mailbox_retention_days: 30,
      successor_id: successor.id,
    });
    await until(created.body.id, (r) => r.status === 'in_progress' && r.tasks[3].finished_at);

    const response = await cancel(created.body.id);
    expectProblem(response, 409);
    expect(response.body.current_status).toBe('in_progress');
    expect((await get(`${OFFBOARDINGS}/${created.body.id}`)).body.status).toBe('in_progress');
    expectProblem(await cancel(randomUUID()), 404);
  });
});

describe('GET /offboardings', () => {
  test('When listed, then it pages newest first and filters by status; other tenants see none', async () => {
    const page = await get(`${OFFBOARDINGS}?per_page=1`);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(1);
    expect(page.body.pagination.total).toBe(
      await h.link.db.offboarding.count({ where: { ownerTenantId: h.deskTenant.tenantId } }),
    );
    const newest = await h.link.db.offboarding.findFirst({
      where: { ownerTenantId: h.deskTenant.tenantId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    expect(page.body.data[0].id).toBe(newest!.id);

    const cancelled = await get(`${OFFBOARDINGS}?status=cancelled&per_page=100`);
    expect(cancelled.body.data.every((r: { status: string }) => r.status === 'cancelled')).toBe(true);

    const stranger = `Bearer ${h.link.token({ tenant_id: randomUUID() })}`;
    expect((await get(OFFBOARDINGS, stranger)).body.pagination.total).toBe(0);
    expectProblem(await get(`${OFFBOARDINGS}/${newest!.id}`, stranger), 404);
    expectProblem(await cancel(newest!.id, stranger), 404);
  });
});
