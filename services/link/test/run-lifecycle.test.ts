import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

/**
 * The run engine's lifecycle beyond creation: staged joiners (an account made inactive ahead of
 * the start date and activated on it, by the engine's clock), cancelling a staged onboarding, and
 * re-running what failed. One try per step (maxAttempts 1), so an outage fails a step at once.
 */

const API = '/api/v1';
const DAY_MS = 86_400_000;

let h: RunsHarness;
let managerId: string;
/** The engine's clock runs this far ahead of the real time. */
let clockOffsetMs = 0;

beforeAll(async () => {
  h = await startRunsHarness({ maxAttempts: 1, now: () => new Date(Date.now() + clockOffsetMs) });
  managerId = (await h.deskTenant.createUser({ name: 'Grace Manager' })).id;
  h.scim.addGroup('M365 E3');
});
afterAll(() => h?.close());

const hex = (n: number) => randomBytes(n).toString('hex');
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);

const call = (method: 'get' | 'post', path: string, body?: object) =>
  request(h.link.app)[method](`${API}${path}`).set('Authorization', h.auth).send(body);

function onboarding(overrides: Record<string, unknown> = {}) {
  return {
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `joiner.${hex(4)}@${h.managed.domain}`,
    department: 'Engineering',
    manager_id: managerId,
    start_date: day(1),
    bundles: ['M365 E3'],
    physical: { laptop: 'ThinkPad', badge: false, phone_extension: false },
    ...overrides,
  };
}

/** Polls GET `path` until `done` holds (the job queue works in the background). */
async function until(path: string, done: (run: any) => boolean) {
  const deadline = Date.now() + 25_000;
  for (;;) {
    const response = await call('get', path);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    if (Date.now() > deadline)
      throw new Error(
        `${path} still ${response.body.status}: ${JSON.stringify(response.body.tasks.map((t: any) => t.status))}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const ended = (run: { status: string }) => !['scheduled', 'in_progress'].includes(run.status);
/** A staged onboarding whose first three tasks are done: only the activation waits. */
const staged = (run: { tasks: { name: string; finished_at: string | null }[] }) =>
  run.tasks.every((t) => t.name === 'activate_account' || t.finished_at !== null);

const account = (email: string) => h.scim.users().find((user) => user.userName === email);
const creates = (path: RegExp) => h.scim.requests().filter((r) => path.test(r)).length;
const eventTypes = async (resourceId: string) =>
  (await h.link.db.outboxEvent.findMany({ where: { resourceId }, orderBy: { seq: 'asc' } })).map((event) => event.type);

function expectConflict(response: request.Response, currentStatus: string) {
  expect(response.status).toBe(409);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body.current_status).toBe(currentStatus);
}

/**
 * Resolves once `pending` has settled or something waits for an advisory lock in link's
 * database (the run's lock, held by the other side of the race).
 */
async function settledOrWaiting(pending: Promise<unknown>) {
  let settled = false;
  void pending.then(
    () => (settled = true),
    () => (settled = true),
  );
  const deadline = Date.now() + 10_000;
  while (!settled && Date.now() < deadline && !(await h.waitingForLock()))
    await new Promise((resolve) => setTimeout(resolve, 20));
}
const untilRequest = async (line: string) => {
  const deadline = Date.now() + 10_000;
  while (!h.scim.requests().includes(line)) {
    if (Date.now() > deadline) throw new Error(`the directory never received ${line}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('staged joiners', () => {
  test(
    'When the start date is ahead, then the account is created inactive with its groups and ' +
      'ticket, and activate_account waits for the start of the start date',
    async () => {
      const body = onboarding();
      const created = await call('post', '/onboardings', body);
      expect(created.status).toBe(201);
      expect(created.body.tasks.map((t: { name: string }) => t.name)).toEqual([
        'create_account',
        'assign_bundles',
        'equipment_ticket',
        'activate_account',
      ]);
      expect(created.body.tasks[3].due_at).toBe(`${body.start_date}T00:00:00.000Z`);

      const run = await until(`/onboardings/${created.body.id}`, staged);
      expect(run.status).toBe('in_progress');
      expect(run.tasks.map((t: { status: string }) => t.status)).toEqual([
        'succeeded',
        'succeeded',
        'succeeded',
        'pending',
      ]);
      expect(account(body.email)).toMatchObject({ id: run.directory_user_id, active: false });
      expect(
        h.scim
          .groups()
          .find((g) => g.displayName === 'M365 E3')!
          .members.map((m) => m.value),
      ).toContain(run.directory_user_id);
      expect(run.equipment_ticket).toEqual({ id: expect.any(String), number: expect.any(Number) });
    },
  );

  test('When the start date has come, then a staged account is activated on its day across a restart and the run completes', async () => {
    const body = onboarding();
    const created = await call('post', '/onboardings', body);
    expect(created.status).toBe(201);
    await until(`/onboardings/${created.body.id}`, staged);
    expect(account(body.email)!.active).toBe(false);

    // link stops; when a new instance starts on the same database, its clock says the day has come.
    clockOffsetMs = 2 * DAY_MS;
    try {
      await h.restart();
      const run = await until(`/onboardings/${created.body.id}`, ended);
      expect(run.status).toBe('completed');
      expect(run.tasks[3]).toMatchObject({ name: 'activate_account', status: 'succeeded', attempts: 1 });
      expect(account(body.email)!.active).toBe(true);
      expect(await eventTypes(created.body.id)).toEqual(['onboarding.completed']);
    } finally {
      clockOffsetMs = 0;
    }
  });

  test('When the start date is today or past, then the account is active at once and there is no activate_account', async () => {
    const body = onboarding({ start_date: day(0) });
    const created = await call('post', '/onboardings', body);
    expect(created.status).toBe(201);
    const run = await until(`/onboardings/${created.body.id}`, ended);
    expect(run.status).toBe('completed');
    expect(run.tasks.map((t: { name: string }) => t.name)).toEqual([
      'create_account',
      'assign_bundles',
      'equipment_ticket',
    ]);
    expect(account(body.email)!.active).toBe(true);
  });
});

describe('POST /onboardings/:id/cancel', () => {
  test(
    'When a staged onboarding is cancelled, then its account is deleted from the directory, the run is ' +
      'cancelled with onboarding.cancelled, and the e-mail may be onboarded again',
    async () => {
      const body = onboarding();
      const created = await call('post', '/onboardings', body);
      const before = await until(`/onboardings/${created.body.id}`, staged);
      expect(account(body.email)).toBeDefined();

      const response = await call('post', `/onboardings/${created.body.id}/cancel`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: created.body.id,
        status: 'cancelled',
        cancelled_at: expect.any(String),
      });
      expect(response.body.tasks.map((t: { status: string }) => t.status)).toEqual([
        'succeeded',
        'succeeded',
        'succeeded',
        'skipped',
      ]);
      expect(account(body.email)).toBeUndefined();
      expect(h.scim.requests()).toContain(`DELETE /scim/v2/Users/${before.directory_user_id}`);
      expect(await eventTypes(created.body.id)).toEqual(['onboarding.cancelled']);
      expect((await call('get', `/onboardings/${created.body.id}`)).body).toEqual(response.body);

      // Cancelled is final: a second cancel, or a retry, is 409.
      expectConflict(await call('post', `/onboardings/${created.body.id}/cancel`), 'cancelled');
      expectConflict(await call('post', `/onboardings/${created.body.id}/retry`), 'cancelled');
      expect(await eventTypes(created.body.id)).toEqual(['onboarding.cancelled']);

      expect((await call('post', '/onboardings', { ...body })).status).toBe(201);
    },
  );

  test('When the onboarding is not staged, or has finished, then cancel is 409 with current_status and the account stays', async () => {
    const body = onboarding({ start_date: day(-3) });
    const created = await call('post', '/onboardings', body);
    const run = await until(`/onboardings/${created.body.id}`, ended);
    expect(run.status).toBe('completed');
    expectConflict(await call('post', `/onboardings/${created.body.id}/cancel`), 'completed');
    expect(account(body.email)).toBeDefined();
    expect((await call('get', `/onboardings/${created.body.id}`)).body).toEqual(run);

    // A run not staged, still at its first tasks (the directory holds the create): the cancel waits
    // for the worker's job (the run's lock) and then finds it completed: 409 as well.
    const release = h.scim.hold('POST', /\/Users$/);
    try {
      const open = await call('post', '/onboardings', onboarding({ start_date: day(-3) }));
      await until(`/onboardings/${open.body.id}`, (r) => r.status === 'in_progress');
      const cancelling = call('post', `/onboardings/${open.body.id}/cancel`).then((response) => response);
      await settledOrWaiting(cancelling);
      release();
      expectConflict(await cancelling, 'completed');
      expect((await call('get', `/onboardings/${open.body.id}`)).body.status).toBe('completed');
    } finally {
      release();
    }
  });

  test(
    'When a staged onboarding is cancelled while its account is being prepared, then the ' +
      'cancel waits for the preparation and then deletes the account',
    async () => {
      const release = h.scim.hold('POST', /\/Users$/);
      try {
        const body = onboarding();
        const created = await call('post', '/onboardings', body);
        await until(`/onboardings/${created.body.id}`, (r) => r.status === 'in_progress');
        const cancelling = call('post', `/onboardings/${created.body.id}/cancel`).then((response) => response);
        await settledOrWaiting(cancelling);
        release();
        const response = await cancelling;
        expect(response.status).toBe(200);
        expect(response.body.status).toBe('cancelled');
        expect(response.body.tasks.map((t: { status: string }) => t.status)).toEqual([
          'succeeded',
          'succeeded',
          'succeeded',
          'skipped',
        ]);
        expect(response.body.directory_user_id).toEqual(expect.any(String));
        expect(h.scim.requests()).toContain(`DELETE /scim/v2/Users/${response.body.directory_user_id}`);
        expect(account(body.email)).toBeUndefined();
        expect(await eventTypes(created.body.id)).toEqual(['onboarding.cancelled']);
      } finally {
        release();
      }
    },
  );

  test('When the directory cannot delete the staged account, then 503 and nothing is cancelled', async () => {
    const body = onboarding();
    const created = await call('post', '/onboardings', body);
    const before = await until(`/onboardings/${created.body.id}`, staged);
    h.scim.failNext('DELETE', /\/Users\//, 503);
    const response = await call('post', `/onboardings/${created.body.id}/cancel`);
    expect(response.status).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await call('get', `/onboardings/${created.body.id}`)).body).toEqual(before);
    expect(account(body.email)).toBeDefined();
  });
});

describe('POST /onboardings/:id/cancel: the equipment ticket', () => {
  const deskTicket = async (id: string) =>
    (await h.deskTenant.call('GET', `/tickets/${id}`)).body as { status: string; assignee_id: string | null };
  const comments = async (id: string) =>
    (await h.deskTenant.call('GET', `/tickets/${id}/comments?per_page=100`)).body.data as {
      body: string;
      internal: boolean;
    }[];

  async function stagedOnboarding() {
    const body = onboarding();
    const created = await call('post', '/onboardings', body);
    expect(created.status).toBe(201);
    const run = await until(`/onboardings/${created.body.id}`, staged);
    expect(run.equipment_ticket).toEqual({ id: expect.any(String), number: expect.any(Number) });
    return { body, run, ticket: run.equipment_ticket as { id: string; number: number } };
  }

  test(
    'When a staged onboarding is cancelled, then its equipment ticket gets an internal ' +
      'comment saying why and is resolved, and the skipped task says so',
    async () => {
      const { body, run, ticket } = await stagedOnboarding();
      expect((await deskTicket(ticket.id)).status).toBe('open');

      const response = await call('post', `/onboardings/${run.id}/cancel`);
      expect(response.status).toBe(200);
      expect(response.body.status).toBe('cancelled');
      expect(response.body.equipment_ticket).toEqual(ticket);
      expect(response.body.tasks[3]).toMatchObject({ name: 'activate_account', status: 'skipped' });
      expect(response.body.tasks[3].detail).toContain(`the equipment ticket #${ticket.number} is resolved in desk`);

      expect((await deskTicket(ticket.id)).status).toBe('resolved');
      const notes = await comments(ticket.id);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ internal: true });
      expect(notes[0]!.body).toContain('was cancelled before the start date');
      expect(notes[0]!.body).toContain(body.email);
      expect(notes[0]!.body).toContain(run.id);
      expect(account(body.email)).toBeUndefined();
    },
  );

  test(
    "When a technician closed the equipment ticket before the cancel, or closes it between link's " +
      'read and its change, then link leaves it closed and the cancel succeeds',
    async () => {
      // Closed before: left as it is, no comment.
      const before = await stagedOnboarding();
      expect((await h.deskTenant.call('PATCH', `/tickets/${before.ticket.id}`, { status: 'closed' })).status).toBe(200);
      const first = await call('post', `/onboardings/${before.run.id}/cancel`);
      expect(first.status).toBe(200);
      expect((await deskTicket(before.ticket.id)).status).toBe('closed');
      expect(await comments(before.ticket.id)).toEqual([]);

      // Closed in between: the technician's change lands just before link's PATCH is handled, so the
      // ETag link read is stale (412); link reads the ticket again and finds it closed.
      const { run, ticket } = await stagedOnboarding();
      h.desk.beforeNext('PATCH', new RegExp(`/tickets/${ticket.id}$`), () =>
        h.deskTenant.call('PATCH', `/tickets/${ticket.id}`, { status: 'closed' }),
      );
      const response = await call('post', `/onboardings/${run.id}/cancel`);
      expect(response.status).toBe(200);
      expect(response.body.status).toBe('cancelled');
      // A PATCH without If-Match would have met a closed ticket (final: 422) and failed the cancel.
      expect((await deskTicket(ticket.id)).status).toBe('closed');
      expect(await comments(ticket.id)).toHaveLength(1);
    },
  );

  test(
    'When desk cannot be reached, then the cancel is 503 desk-unavailable and nothing ' +
      'is cancelled; once desk is back, a cancel resolves the ticket',
    async () => {
      const { body, run, ticket } = await stagedOnboarding();
      await h.desk.suspend();
      let response: request.Response;
      try {
        response = await call('post', `/onboardings/${run.id}/cancel`);
      } finally {
        await h.desk.resume();
      }
      expect(response.status).toBe(503);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body.type).toBe('urn:msp:problem:desk-unavailable');
      expect(response.headers['retry-after']).toBe('30');
      expect((await call('get', `/onboardings/${run.id}`)).body).toEqual(run);
      expect(account(body.email)).toMatchObject({ active: false });
      expect((await deskTicket(ticket.id)).status).toBe('open');

      const again = await call('post', `/onboardings/${run.id}/cancel`);
      expect(again.status).toBe(200);
      expect((await deskTicket(ticket.id)).status).toBe('resolved');
      expect(await comments(ticket.id)).toHaveLength(1);
    },
  );

  test('When desk added the comment but its answer came too late, then the cancel is 503, and tried again it adds no second comment', async () => {
    const { run, ticket } = await stagedOnboarding();
    // link waits 2 s for desk; desk commits the comment, then answers after 3 s.
    h.desk.answerLate('POST', new RegExp(`/tickets/${ticket.id}/comments$`), 3000);
    const response = await call('post', `/onboardings/${run.id}/cancel`);
    expect(response.status).toBe(503);
    expect((await call('get', `/onboardings/${run.id}`)).body.status).toBe('in_progress');

    const again = await call('post', `/onboardings/${run.id}/cancel`);
    expect(again.status).toBe(200);
    expect((await deskTicket(ticket.id)).status).toBe('resolved');
    expect(await comments(ticket.id)).toHaveLength(1);
  });
});

describe('a cancel racing the activation worker', () => {
  test(
    'When the activation comes due while a cancel is deleting the staged account, then the activation waits for ' +
      'the cancel and finds the run cancelled: the account is gone and was never activated',
    async () => {
      const body = onboarding();
      const created = await call('post', '/onboardings', body);
      const before = await until(`/onboardings/${created.body.id}`, staged);
      const userPath = `/scim/v2/Users/${before.directory_user_id}`;

      // The directory holds the cancel's DELETE; meanwhile the start date comes and the activation job runs.
      const release = h.scim.hold('DELETE', /\/Users\//);
      clockOffsetMs = 2 * DAY_MS;
      try {
        const cancelling = call('post', `/onboardings/${created.body.id}/cancel`).then((response) => response);
        await untilRequest(`DELETE ${userPath}`);
        const activating = h.runJobNow('onboarding', created.body.id);
        await settledOrWaiting(activating);
        release();
        const [response] = await Promise.all([cancelling, activating]);

        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ id: created.body.id, status: 'cancelled' });
        expect(response.body.tasks.map((t: { status: string }) => t.status)).toEqual([
          'succeeded',
          'succeeded',
          'succeeded',
          'skipped',
        ]);
        expect(response.body.tasks[3]).toMatchObject({ name: 'activate_account', attempts: 0, started_at: null });
        expect((await call('get', `/onboardings/${created.body.id}`)).body).toEqual(response.body);
        expect(account(body.email)).toBeUndefined();
        expect(h.scim.requests()).not.toContain(`PATCH ${userPath}`);
        expect(await eventTypes(created.body.id)).toEqual(['onboarding.cancelled']);
      } finally {
        release();
        clockOffsetMs = 0;
      }
    },
  );

  test('When a cancel arrives while the activation is running, then the cancel waits for it and answers 409 completed: the account stays, active', async () => {
    const body = onboarding();
    const created = await call('post', '/onboardings', body);
    const before = await until(`/onboardings/${created.body.id}`, staged);
    const userPath = `/scim/v2/Users/${before.directory_user_id}`;

    // The directory holds the activation's PATCH; meanwhile a cancel comes in.
    const release = h.scim.hold('PATCH', /\/Users\//);
    clockOffsetMs = 2 * DAY_MS;
    try {
      const activating = h.runJobNow('onboarding', created.body.id);
      await untilRequest(`PATCH ${userPath}`);
      const cancelling = call('post', `/onboardings/${created.body.id}/cancel`).then((response) => response);
      await settledOrWaiting(cancelling);
      release();
      const [response] = await Promise.all([cancelling, activating]);

      expectConflict(response, 'completed');
      const run = (await call('get', `/onboardings/${created.body.id}`)).body;
      expect(run.status).toBe('completed');
      expect(run.tasks[3]).toMatchObject({ name: 'activate_account', status: 'succeeded', attempts: 1 });
      expect(account(body.email)).toMatchObject({ id: before.directory_user_id, active: true });
      expect(h.scim.requests()).not.toContain(`DELETE ${userPath}`);
      expect(await eventTypes(created.body.id)).toEqual(['onboarding.completed']);
    } finally {
      release();
      clockOffsetMs = 0;
    }
  });
});

describe('POST /onboardings/:id/retry', () => {
  test('When a task failed while the directory was down, then a retry after the directory came back re-runs only that task and the run completes', async () => {
    const body = onboarding({ start_date: day(-1) });
    h.scim.failNext('PATCH', /\/Groups\//, 503);
    const created = await call('post', '/onboardings', body);
    const failed = await until(`/onboardings/${created.body.id}`, ended);
    expect(failed.status).toBe('completed_with_errors');
    expect(failed.tasks.map((t: { status: string }) => t.status)).toEqual(['succeeded', 'failed', 'succeeded']);
    const usersCreated = creates(/^POST \/scim\/v2\/Users$/);
    const tickets = (await h.deskTenant.call('GET', '/tickets?per_page=100')).body.pagination.total;

    const response = await call('post', `/onboardings/${created.body.id}/retry`);
    expect(response.status).toBe(202);
    expect(response.body.status).toBe('in_progress');
    expect(response.body.finished_at).toBeNull();
    expect(response.body.tasks[1]).toMatchObject({
      name: 'assign_bundles',
      status: 'pending',
      attempts: 0,
      detail: null,
      finished_at: null,
    });
    expect(response.body.tasks[0]).toEqual(failed.tasks[0]);
    expect(response.body.tasks[2]).toEqual(failed.tasks[2]);

    const run = await until(`/onboardings/${created.body.id}`, ended);
    expect(run.status).toBe('completed');
    expect(run.tasks[1]).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(
      h.scim
        .groups()
        .find((g) => g.displayName === 'M365 E3')!
        .members.map((m) => m.value),
    ).toContain(run.directory_user_id);
    // What had succeeded did not run again: no second account, no second ticket.
    expect(creates(/^POST \/scim\/v2\/Users$/)).toBe(usersCreated);
    expect((await h.deskTenant.call('GET', '/tickets?per_page=100')).body.pagination.total).toBe(tickets);
    expect(run.equipment_ticket).toEqual(failed.equipment_ticket);
    expect(await eventTypes(created.body.id)).toEqual([
      'onboarding.completed_with_errors',
      'onboarding.retried',
      'onboarding.completed',
    ]);

    // Nothing failed any more: 409.
    expectConflict(await call('post', `/onboardings/${created.body.id}/retry`), 'completed');
  });

  test('When the account could not be created, then a retry re-runs it and the tasks skipped after it', async () => {
    const body = onboarding({ start_date: day(-1), bundles: [] });
    h.scim.failNext('POST', /\/Users$/, 503);
    const created = await call('post', '/onboardings', body);
    const failed = await until(`/onboardings/${created.body.id}`, ended);
    expect(failed.status).toBe('failed');
    expect(failed.tasks.map((t: { status: string }) => t.status)).toEqual(['failed', 'skipped', 'skipped']);

    const response = await call('post', `/onboardings/${created.body.id}/retry`);
    expect(response.status).toBe(202);
    expect(response.body.status).toBe('scheduled');
    expect(response.body.tasks.map((t: { status: string }) => t.status)).toEqual(['pending', 'pending', 'pending']);
    const run = await until(`/onboardings/${created.body.id}`, ended);
    expect(run.status).toBe('completed');
    expect(account(body.email)).toMatchObject({ id: run.directory_user_id, active: true });
  });

  test('When the run is still open, then retry is 409 with current_status and changes nothing', async () => {
    const created = await call('post', '/onboardings', onboarding());
    const run = await until(`/onboardings/${created.body.id}`, staged);
    expectConflict(await call('post', `/onboardings/${created.body.id}/retry`), 'in_progress');
    expect((await call('get', `/onboardings/${created.body.id}`)).body).toEqual(run);
    expect((await call('post', `/onboardings/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/retry`)).status).toBe(
      404,
    );
  });
});

describe('POST /offboardings/:id/retry', () => {
  async function leaver(options: { account: boolean }) {
    const email = `leaver.${hex(4)}@${h.managed.domain}`;
    const user = await h.deskTenant.createUser({ name: 'Lea Ver', email });
    if (options.account) h.scim.addUser({ userName: email });
    return user;
  }

  test('When the directory had no account, then a retry once it has one re-runs the failed tasks only and the run completes', async () => {
    const user = await leaver({ account: false });
    const successor = await h.deskTenant.createUser();
    const created = await call('post', '/offboardings', {
      user_id: user.id,
      last_day: day(-2),
      mailbox_retention_days: 0,
      successor_id: successor.id,
    });
    expect(created.status).toBe(201);
    const failed = await until(`/offboardings/${created.body.id}`, ended);
    expect(failed.status).toBe('completed_with_errors');
    expect(failed.tasks.map((t: { status: string }) => t.status)).toEqual([
      'succeeded',
      'succeeded',
      'failed',
      'succeeded',
      'failed',
    ]);
    const tickets = (await h.deskTenant.call('GET', '/tickets?per_page=100')).body.pagination.total;

    h.scim.addUser({ userName: user.email.toLowerCase() });
    const response = await call('post', `/offboardings/${created.body.id}/retry`);
    expect(response.status).toBe(202);
    expect(response.body.status).toBe('in_progress');
    expect(response.body.tasks.map((t: { status: string }) => t.status)).toEqual([
      'succeeded',
      'succeeded',
      'pending',
      'succeeded',
      'pending',
    ]);

    const run = await until(`/offboardings/${created.body.id}`, ended);
    expect(run.status).toBe('completed');
    expect(account(user.email.toLowerCase())).toBeUndefined();
    // The mailbox ticket was not opened twice.
    expect((await h.deskTenant.call('GET', '/tickets?per_page=100')).body.pagination.total).toBe(tickets);
    expect(await eventTypes(created.body.id)).toEqual([
      'offboarding.completed_with_errors',
      'offboarding.retried',
      'offboarding.completed',
    ]);
  });

  /** Runs the offboarding's due job by a clock five days ahead, when its tasks are due. */
  async function runDue(id: string) {
    clockOffsetMs = 5 * DAY_MS;
    try {
      await h.runJobNow('offboarding', id);
    } finally {
      clockOffsetMs = 0;
    }
    return (await call('get', `/offboardings/${id}`)).body;
  }

  test(
    'When a ticket could not be reassigned, then deactivate_user deactivates nobody and fails naming it; ' +
      'once it is reassigned, a retry deactivates the leaver and the run completes',
    async () => {
      const user = await leaver({ account: true });
      const successor = await h.deskTenant.createUser();
      const company = await h.deskTenant.createClient();
      const theirs = await h.deskTenant.createTicket({ client_id: company.id, assignee_id: user.id });
      const created = await call('post', '/offboardings', {
        user_id: user.id,
        last_day: day(2),
        mailbox_retention_days: 0,
        successor_id: successor.id,
      });
      expect(created.status).toBe(201);
      // The successor leaves before the day: desk refuses to assign them anything.
      expect((await h.deskTenant.call('DELETE', `/users/${successor.id}`)).status).toBe(204);

      const run = await runDue(created.body.id);
      expect(run.status).toBe('completed_with_errors');
      expect(run.tasks.map((t: { name: string; status: string }) => [t.name, t.status])).toEqual([
        ['reassign_tickets', 'failed'],
        ['deactivate_user', 'failed'],
        ['disable_account', 'succeeded'],
        ['delegate_mailbox', 'succeeded'],
        ['delete_account', 'succeeded'],
      ]);
      expect(run.tasks[1].result).toEqual({ user_id: user.id, deactivated: false, still_assigned: [theirs.number] });
      expect(run.tasks[1].detail).toContain(`#${theirs.number}`);
      expect((await h.deskTenant.call('GET', `/users/${user.id}`)).body.active).toBe(true);
      expect((await h.deskTenant.call('GET', `/tickets/${theirs.id}`)).body.assignee_id).toBe(user.id);

      // A technician hands the ticket on; the retry re-runs the two failed tasks.
      const colleague = await h.deskTenant.createUser();
      expect((await h.deskTenant.call('PATCH', `/tickets/${theirs.id}`, { assignee_id: colleague.id })).status).toBe(
        200,
      );
      // By the same clock, the retried tasks are due at once.
      clockOffsetMs = 5 * DAY_MS;
      let done;
      try {
        expect((await call('post', `/offboardings/${created.body.id}/retry`)).status).toBe(202);
        done = await until(`/offboardings/${created.body.id}`, ended);
      } finally {
        clockOffsetMs = 0;
      }
      expect(done.status).toBe('completed');
      expect(done.tasks[1]).toMatchObject({
        name: 'deactivate_user',
        status: 'succeeded',
        result: { user_id: user.id, deactivated: true },
      });
      expect((await h.deskTenant.call('GET', `/users/${user.id}`)).body.active).toBe(false);
      expect((await h.deskTenant.call('GET', `/tickets/${theirs.id}`)).body.assignee_id).toBe(colleague.id);
    },
  );

  test('When desk already has the leaver inactive by the time the tasks are due, then deactivate_user succeeds saying so', async () => {
    const user = await leaver({ account: true });
    const successor = await h.deskTenant.createUser();
    const created = await call('post', '/offboardings', {
      user_id: user.id,
      last_day: day(2),
      mailbox_retention_days: 0,
      successor_id: successor.id,
    });
    expect(created.status).toBe(201);
    expect((await h.deskTenant.call('DELETE', `/users/${user.id}`)).status).toBe(204);

    const run = await runDue(created.body.id);
    expect(run.status).toBe('completed');
    expect(run.tasks[1]).toMatchObject({
      name: 'deactivate_user',
      status: 'succeeded',
      detail: `${user.email.toLowerCase()} was already inactive in desk.`,
      result: { user_id: user.id, deactivated: false },
    });
  });

  test('When the offboarding is scheduled or cancelled, then retry is 409 with current_status', async () => {
    const user = await leaver({ account: true });
    const successor = await h.deskTenant.createUser();
    const created = await call('post', '/offboardings', {
      user_id: user.id,
      last_day: day(5),
      mailbox_retention_days: 0,
      successor_id: successor.id,
    });
    expectConflict(await call('post', `/offboardings/${created.body.id}/retry`), 'scheduled');
    expect((await call('post', `/offboardings/${created.body.id}/cancel`)).status).toBe(200);
    expectConflict(await call('post', `/offboardings/${created.body.id}/retry`), 'cancelled');
  });
});
