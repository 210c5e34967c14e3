import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { runDateWindow } from './support/run-date-window';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

const MOVES = '/api/v1/moves';
const OFFBOARDINGS = '/api/v1/offboardings';
const DAY_MS = 86_400_000;
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

let h: RunsHarness;

beforeAll(async () => {
  h = await startRunsHarness();
});
afterAll(() => h?.close());

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
const hex = () => randomBytes(4).toString('hex');

/** A desk user with a directory account (userName = their desk e-mail) in the managed tenant. */
async function person(options: { account?: boolean; name?: string } = {}) {
  const email = `${options.name ?? 'mover'}.${hex()}@${h.managed.domain}`;
  const user = await h.deskTenant.createUser({ name: 'Moe Ver', email });
  const account = options.account === false ? undefined : h.scim.addUser({ userName: email });
  return { ...user, account };
}

const post = (body: unknown, auth = h.auth) =>
  request(h.link.app)
    .post(MOVES)
    .set('Authorization', auth)
    .send(body as object);
const get = (path: string, auth = h.auth) => request(h.link.app).get(path).set('Authorization', auth);
const cancel = (id: string) => request(h.link.app).post(`${MOVES}/${id}/cancel`).set('Authorization', h.auth);

function expectProblem(response: request.Response, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body.status).toBe(status);
}

async function until(id: string, done: (run: any) => boolean) {
  for (;;) {
    const response = await get(`${MOVES}/${id}`);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
const isFinished = (run: { status: string }) => !['scheduled', 'in_progress'].includes(run.status);
const eventTypes = async (resourceId: string) =>
  (await h.link.db.outboxEvent.findMany({ where: { resourceId }, orderBy: { seq: 'asc' } })).map((event) => event.type);
const account = (id: string) => h.scim.users().find((user) => user.id === id)!;
// A group whose last member left has no `members` at all (SCIMMY drops the empty attribute).
const members = (groupId: string) =>
  (h.scim.groups().find((group) => group.id === groupId)!.members ?? []).map((member) => member.value);

describe('POST /moves', () => {
  test(
    'When the effective date is today, then 201 and the run changes title, department and manager (by e-mail → ' +
      'directory id), joins and leaves groups, and opens the equipment ticket; event move.completed',
    async () => {
      const user = await person();
      const manager = await person({ name: 'boss' });
      const sales = h.scim.addGroup(`Sales ${hex()}`);
      const engineering = h.scim.addGroup(`Engineering ${hex()}`);
      engineering.members.push({ value: user.account!.id });
      const keep = h.scim.addGroup(`Everyone ${hex()}`);
      keep.members.push({ value: user.account!.id }, { value: manager.account!.id });

      const response = await post({
        user_id: user.id,
        effective_date: day(0),
        department: 'Sales',
        manager_id: manager.id,
        job_title: 'Account Executive',
        bundles: { add: [sales.displayName], remove: [engineering.displayName] },
        physical: { laptop: 'MacBook Pro 14', notes: 'Third floor.' },
      });

      expect(response.status).toBe(201);
      expect(response.headers.location).toBe(`${MOVES}/${response.body.id}`);
      expect(response.body).toMatchObject({
        status: 'scheduled',
        user_id: user.id,
        email: user.email.toLowerCase(),
        tenant_id: h.managed.id,
        effective_date: day(0),
        department: 'Sales',
        manager_id: manager.id,
        job_title: 'Account Executive',
        bundles: { add: [sales.displayName], remove: [engineering.displayName] },
        physical: { laptop: 'MacBook Pro 14', notes: 'Third floor.' },
      });
      expect(response.body.tasks.map((t: { name: string }) => t.name)).toEqual([
        'update_account',
        'change_bundles',
        'equipment_ticket',
      ]);

      const run = await until(response.body.id, isFinished);
      expect(run.status).toBe('completed');
      expect(run.directory_user_id).toBe(user.account!.id);
      const after = account(user.account!.id);
      expect(after.title).toBe('Account Executive');
      expect(after[ENTERPRISE]).toMatchObject({ department: 'Sales', manager: { value: manager.account!.id } });
      expect(run.tasks[0].result).toMatchObject({
        directory_user_id: user.account!.id,
        changed: ['title', 'department', 'manager'],
        manager_directory_id: manager.account!.id,
      });

      expect(members(sales.id)).toEqual([user.account!.id]);
      expect(members(engineering.id)).toEqual([]);
      expect(members(keep.id)).toEqual([user.account!.id, manager.account!.id]);
      expect(run.tasks[1].result).toEqual({
        added: [sales.displayName],
        removed: [engineering.displayName],
        missing: [],
      });

      const ticket = (await h.deskTenant.call('GET', `/tickets/${run.tasks[2].result.ticket_id}`)).body;
      expect(ticket).toMatchObject({
        category: 'hardware',
        client_id: h.managed.client_id,
        number: run.tasks[2].result.ticket_number,
      });
      expect(ticket.description).toContain('MacBook Pro 14');
      expect(await eventTypes(run.id)).toEqual(['move.completed']);

      const listed = await get(`${MOVES}?status=completed`);
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((m: { id: string }) => m.id)).toContain(run.id);
    },
  );

  test(
    'When a group to add or remove is missing, then change_bundles reports it in result.missing and ' +
      'changes the others, the task fails and the move is completed_with_errors',
    async () => {
      const user = await person();
      const vpn = h.scim.addGroup(`VPN ${hex()}`);
      const old = h.scim.addGroup(`Old ${hex()}`);
      old.members.push({ value: user.account!.id });
      const ghost = `Ghost ${hex()}`;
      const gone = `Gone ${hex()}`;

      const response = await post({
        user_id: user.id,
        effective_date: day(-3),
        job_title: 'Engineer',
        bundles: { add: [ghost, vpn.displayName], remove: [gone, old.displayName] },
      });
      expect(response.status).toBe(201);
      expect(response.body.tasks.map((t: { name: string }) => t.name)).toEqual(['update_account', 'change_bundles']);

      const run = await until(response.body.id, isFinished);
      expect(run.status).toBe('completed_with_errors');
      expect(run.tasks[0].status).toBe('succeeded');
      expect(run.tasks[1]).toMatchObject({
        status: 'failed',
        result: { added: [vpn.displayName], removed: [old.displayName], missing: [ghost, gone] },
      });
      expect(run.tasks[1].detail).toContain(ghost);
      expect(members(vpn.id)).toEqual([user.account!.id]);
      expect(members(old.id)).toEqual([]);
      expect(account(user.account!.id).title).toBe('Engineer');
      expect(await eventTypes(run.id)).toEqual(['move.completed_with_errors']);
    },
  );

  test('When the user has no directory account, then every task fails, the move is failed, and POST /moves/:id/retry re-queues it', async () => {
    const user = await person({ account: false });
    const response = await post({
      user_id: user.id,
      effective_date: day(0),
      department: 'Ops',
      bundles: { add: ['Anything'] },
    });
    expect(response.status).toBe(201);
    const run = await until(response.body.id, isFinished);
    expect(run.status).toBe('failed');
    expect(run.tasks[0].detail).toContain('has no account with userName');
    expect(await eventTypes(run.id)).toEqual(['move.failed']);

    h.scim.addUser({ userName: user.email.toLowerCase() });
    const retried = await request(h.link.app).post(`${MOVES}/${run.id}/retry`).set('Authorization', h.auth);
    expect(retried.status).toBe(202);
    const again = await until(run.id, isFinished);
    expect(again.tasks[0].status).toBe('succeeded');
    expect(await eventTypes(run.id)).toEqual(['move.failed', 'move.retried', 'move.completed_with_errors']);
  });

  test(
    'When the new manager has no directory account, then update_account fails naming their e-mail and ' +
      'changes nothing, the groups still change, and the move is completed_with_errors',
    async () => {
      const user = await person();
      const manager = await person({ name: 'nobody', account: false });
      const crm = h.scim.addGroup(`CRM ${hex()}`);
      const response = await post({
        user_id: user.id,
        effective_date: day(0),
        job_title: 'Never set',
        manager_id: manager.id,
        bundles: { add: [crm.displayName] },
      });
      expect(response.status).toBe(201);
      const run = await until(response.body.id, isFinished);
      expect(run.status).toBe('completed_with_errors');
      expect(run.tasks[0].status).toBe('failed');
      expect(run.tasks[0].detail).toContain(manager.email.toLowerCase());
      expect(account(user.account!.id).title).toBeUndefined();
      expect(run.tasks[1].status).toBe('succeeded');
      expect(members(crm.id)).toEqual([user.account!.id]);
    },
  );

  test(
    'When the effective date is ahead, then the move stays scheduled with its tasks due at the start of that ' +
      'day, and POST /moves/:id/cancel cancels it (move.cancelled); a second cancel is 409',
    async () => {
      const user = await person();
      const date = day(5);
      const response = await post({ user_id: user.id, effective_date: date, job_title: 'Later', bundles: {} });
      expect(response.status).toBe(201);
      expect(response.body.status).toBe('scheduled');
      expect(response.body.tasks.map((t: { due_at: string }) => t.due_at)).toEqual([
        `${date}T00:00:00.000Z`,
        `${date}T00:00:00.000Z`,
      ]);

      const cancelled = await cancel(response.body.id);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: 'cancelled' });
      expect(cancelled.body.tasks.map((t: { status: string }) => t.status)).toEqual(['skipped', 'skipped']);
      expect(await eventTypes(response.body.id)).toEqual(['move.cancelled']);
      expect(account(user.account!.id).title).toBeUndefined();

      const twice = await cancel(response.body.id);
      expectProblem(twice, 409);
      expect(twice.body.current_status).toBe('cancelled');
      // The date is free again.
      expect((await post({ user_id: user.id, effective_date: date, bundles: {} })).status).toBe(201);
    },
  );

  test('When a second move of the same user is scheduled for the same date, then 409; another date is fine', async () => {
    const user = await person();
    const first = await post({ user_id: user.id, effective_date: day(7), department: 'A', bundles: {} });
    expect(first.status).toBe(201);
    const before = await h.link.db.move.count();
    const second = await post({ user_id: user.id, effective_date: day(7), department: 'B', bundles: {} });
    expectProblem(second, 409);
    expect(second.body.errors).toEqual([
      { field: 'effective_date', message: 'the user already has a move on this date' },
    ]);
    expect(await h.link.db.move.count()).toBe(before);
    expect((await post({ user_id: user.id, effective_date: day(8), department: 'B', bundles: {} })).status).toBe(201);
  });

  test(
    'When user_id or manager_id is unknown, inactive or of another tenant, or the manager ' +
      'is the user, then 422 naming the field and nothing is stored',
    async () => {
      const user = await person();
      const gone = await h.deskTenant.createUser();
      expect((await h.deskTenant.call('DELETE', `/users/${gone.id}`)).status).toBe(204);
      const foreign = await (await h.desk.newTenant()).createUser();
      const before = await h.link.db.move.count();
      const body = { user_id: user.id, effective_date: day(2), bundles: {} };
      for (const [field, value] of [
        ['user_id', randomUUID()],
        ['user_id', gone.id],
        ['user_id', foreign.id],
        ['manager_id', randomUUID()],
        ['manager_id', gone.id],
        ['manager_id', foreign.id],
      ] as const) {
        const response = await post({ ...body, [field]: value });
        expectProblem(response, 422);
        expect(response.body.errors).toEqual([{ field, message: 'does not name an active desk user of your tenant' }]);
      }
      const self = await post({ ...body, manager_id: user.id });
      expectProblem(self, 422);
      expect(self.body.errors).toEqual([{ field: 'manager_id', message: 'must differ from user_id' }]);
      const both = await post({ ...body, bundles: { add: ['X'], remove: ['X'] } });
      expectProblem(both, 422);
      expect(both.body.errors[0].field).toBe('bundles.remove');
      expect(await h.link.db.move.count()).toBe(before);
    },
  );

  test("When the move is dated after the user's scheduled last day, then 422; on the last day itself it is accepted", async () => {
    const user = await person();
    const successor = await h.deskTenant.createUser();
    const offboarding = await request(h.link.app)
      .post(OFFBOARDINGS)
      .set('Authorization', h.auth)
      .send({ user_id: user.id, last_day: day(10), mailbox_retention_days: 0, successor_id: successor.id });
    expect(offboarding.status).toBe(201);
    const before = await h.link.db.move.count();

    const late = await post({ user_id: user.id, effective_date: day(11), department: 'X', bundles: {} });
    expectProblem(late, 422);
    expect(late.body.errors).toEqual([
      { field: 'effective_date', message: `is after the user's scheduled last day (${day(10)})` },
    ]);
    expect(await h.link.db.move.count()).toBe(before);
    expect((await post({ user_id: user.id, effective_date: day(10), department: 'X', bundles: {} })).status).toBe(201);
  });

  test(
    'When effective_date lies more than ten years back or five years ahead (year 9999, 0999), then 422 ' +
      'naming both limits, the dry run too, and nothing is stored; the edges are accepted',
    async () => {
      const { earliest, latest, outside } = runDateWindow();
      const user = await person();
      for (const effectiveDate of outside) {
        for (const path of [MOVES, `${MOVES}?dry_run=true`]) {
          const response = await request(h.link.app)
            .post(path)
            .set('Authorization', h.auth)
            .send({ user_id: user.id, effective_date: effectiveDate, department: 'X', bundles: {} });
          expectProblem(response, 422);
          expect(response.body.errors).toEqual([
            { field: 'effective_date', message: `must be between ${earliest} and ${latest}` },
          ]);
          expect(response.body).toMatchObject({ earliest, latest });
        }
      }
      expect(await h.link.db.move.count({ where: { userId: user.id } })).toBe(0);
      const furthest = await post({ user_id: user.id, effective_date: latest, department: 'X', bundles: {} });
      expect(furthest.status).toBe(201);
      expect(furthest.body.tasks[0].due_at).toBe(`${latest}T00:00:00.000Z`);
      expect((await post({ user_id: user.id, effective_date: earliest, department: 'X', bundles: {} })).status).toBe(
        201,
      );
    },
  );

  test(
    'When the equipment ticket is opened, then it carries an Idempotency-Key derived from ' +
      'the task, so a retried try after a lost answer makes one ticket',
    async () => {
      const user = await person();
      h.desk.answerLate('POST', /\/tickets$/, 3000);
      const response = await post({ user_id: user.id, effective_date: day(0), bundles: {}, physical: { badge: true } });
      expect(response.status).toBe(201);
      const run = await until(response.body.id, isFinished);
      expect(run.tasks[2]).toMatchObject({ name: 'equipment_ticket', status: 'succeeded' });
      expect(run.tasks[2].attempts).toBeGreaterThanOrEqual(2);
      const all = (await h.deskTenant.call('GET', '/tickets?per_page=100')).body.data as { description: string }[];
      expect(all.filter((ticket) => ticket.description.includes(`link's move ${run.id}`))).toHaveLength(1);
    },
  );
});

describe('GET /moves/:id', () => {
  test("When the move is unknown or another tenant's, then 404", async () => {
    expectProblem(await get(`${MOVES}/${randomUUID()}`), 404);
    const user = await person();
    const created = await post({ user_id: user.id, effective_date: day(20), bundles: {} });
    const other = `Bearer ${h.link.token({ tenant_id: randomUUID() })}`;
    expectProblem(await get(`${MOVES}/${created.body.id}`, other), 404);
  });
});
