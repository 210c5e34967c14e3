import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { JOB_SCHEMA } from '../src/jobs/job-queue';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

const DAY_MS = 86_400_000;

let h: RunsHarness;

beforeAll(async () => {
  h = await startRunsHarness();
});
afterAll(() => h?.close());

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
const hex = () => randomBytes(4).toString('hex');
const post = (path: string, body: object) =>
  request(h.link.app).post(`/api/v1${path}?dry_run=true`).set('Authorization', h.auth).send(body);

/** Every row of every link table, the run queues' jobs, the directory's users and groups, and desk's tickets. */
async function snapshot() {
  const pg = new Client({ connectionString: h.link.databaseUrl });
  await pg.connect();
  try {
    const { rows: tables } = await pg.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
    );
    const rows: Record<string, unknown[]> = {};
    for (const { name } of tables) rows[name] = (await pg.query(`SELECT * FROM "${name}" ORDER BY 1`)).rows;
    const jobs = (
      await pg.query(`SELECT id, name, data, state FROM ${JOB_SCHEMA}.job WHERE name LIKE '%-run' ORDER BY id`)
    ).rows;
    const tickets = (await h.deskTenant.call('GET', '/tickets?per_page=100')).body.data;
    return { rows, jobs, users: structuredClone(h.scim.users()), groups: structuredClone(h.scim.groups()), tickets };
  } finally {
    await pg.end();
  }
}

/** Runs `act` between two snapshots: they must be equal, and the directory must have received no write. */
async function leavesEverythingUntouched(act: () => Promise<void>) {
  const before = await snapshot();
  const seen = h.scim.requests().length;
  await act();
  const after = await snapshot();
  expect(Object.keys(before.rows)).toEqual(
    expect.arrayContaining(['moves', 'onboardings', 'offboardings', 'run_tasks', 'events']),
  );
  expect(after).toEqual(before);
  const requests = h.scim.requests().slice(seen);
  expect(requests.length).toBeGreaterThan(0);
  expect(requests.filter((line) => !line.startsWith('GET '))).toEqual([]);
}

const plans = (body: { tasks: { name: string; plan: string }[] }) => body.tasks.map((task) => [task.name, task.plan]);

describe('?dry_run=true', () => {
  test(
    'When an onboarding is dry-run, then 200 with every task, its due time and plan, and the ' +
      'missing group as a problem; no row, event, job, account or ticket is made',
    async () => {
      const manager = await h.deskTenant.createUser();
      const vpn = h.scim.addGroup(`VPN ${hex()}`);
      const email = `ada.${hex()}@${h.managed.domain}`;
      const ghost = `Ghost ${hex()}`;
      await leavesEverythingUntouched(async () => {
        const response = await post('/onboardings', {
          first_name: 'Ada',
          last_name: 'Lovelace',
          email,
          department: 'Engineering',
          manager_id: manager.id,
          start_date: day(10),
          bundles: [vpn.displayName, ghost],
          physical: { laptop: 'ThinkPad', badge: true, phone_extension: false },
        });
        expect(response.status).toBe(200);
        expect(response.headers.location).toBeUndefined();
        expect(response.body).toMatchObject({ id: null, status: 'scheduled', email, directory_user_id: null });
        expect(plans(response.body)).toEqual([
          ['create_account', `create user ${email} in ${h.managed.domain}'s directory (inactive until ${day(10)})`],
          ['assign_bundles', `add to group ${vpn.displayName}, add to group ${ghost}`],
          ['equipment_ticket', 'open a hardware ticket in desk for the equipment of Ada Lovelace (laptop ThinkPad)'],
          ['activate_account', `activate ${email} in the directory on ${day(10)}`],
        ]);
        expect(response.body.tasks[3].due_at).toBe(`${day(10)}T00:00:00.000Z`);
        expect(response.body.problems).toEqual([
          { task: 'assign_bundles', code: 'group_missing', detail: `The directory has no group named "${ghost}".` },
        ]);
      });
    },
  );

  test("When the onboarding's account already exists, or the directory is unreachable, then each is a problem, and nothing is written", async () => {
    const manager = await h.deskTenant.createUser();
    const email = `taken.${hex()}@${h.managed.domain}`;
    h.scim.addUser({ userName: email });
    const body = {
      first_name: 'T',
      last_name: 'Aken',
      email,
      department: 'X',
      manager_id: manager.id,
      start_date: day(0),
      bundles: [],
      physical: { laptop: 'L', badge: false, phone_extension: false },
    };
    await leavesEverythingUntouched(async () => {
      const response = await post('/onboardings', body);
      expect(response.status).toBe(200);
      expect(response.body.problems).toEqual([
        {
          task: 'create_account',
          code: 'account_exists',
          detail: `The directory of ${h.managed.domain} already has an account with userName ${email}.`,
        },
      ]);
      h.scim.failNext('GET', /\/Users$/, 503, 1);
      const down = await post('/onboardings', body);
      expect(down.status).toBe(200);
      expect(down.body.problems).toEqual([
        expect.objectContaining({ task: 'create_account', code: 'directory_unreachable' }),
      ]);
    });
  });

  test(
    'When an offboarding is dry-run for a user without a directory account, then 200 with the ' +
      'plans and account_not_found; no ticket is reassigned and nothing is written',
    async () => {
      const email = `lea.${hex()}@${h.managed.domain}`;
      const user = await h.deskTenant.createUser({ email });
      const successor = await h.deskTenant.createUser();
      const client = await h.deskTenant.createClient();
      await h.deskTenant.createTicket({ client_id: client.id, assignee_id: user.id });
      await leavesEverythingUntouched(async () => {
        const response = await post('/offboardings', {
          user_id: user.id,
          last_day: day(-1),
          mailbox_retention_days: 30,
          successor_id: successor.id,
        });
        expect(response.status).toBe(200);
        expect(plans(response.body)).toEqual([
          ['reassign_tickets', `reassign 1 open ticket(s) of ${email} to the successor`],
          ['deactivate_user', `deactivate the desk user ${email} once their tickets are reassigned`],
          ['disable_account', `disable ${email} in ${h.managed.domain}'s directory`],
          ['delegate_mailbox', `open an email ticket in desk to delegate the mailbox of ${email} to the successor`],
          ['delete_account', `delete ${email} from ${h.managed.domain}'s directory after 30 day(s)`],
        ]);
        expect(response.body.problems).toEqual([
          {
            task: 'disable_account',
            code: 'account_not_found',
            detail: `The directory of ${h.managed.domain} has no account with userName ${email}.`,
          },
        ]);
      });
    },
  );

  test(
    'When a move is dry-run, then 200 with its plans (remove from group …) and the missing ' +
      'group; the account, groups, tables and desk stay as they were',
    async () => {
      const email = `moe.${hex()}@${h.managed.domain}`;
      const user = await h.deskTenant.createUser({ email });
      const account = h.scim.addUser({ userName: email });
      const bossEmail = `boss.${hex()}@${h.managed.domain}`;
      const boss = await h.deskTenant.createUser({ email: bossEmail });
      h.scim.addUser({ userName: bossEmail });
      const vpn = h.scim.addGroup(`VPN ${hex()}`);
      vpn.members.push({ value: account.id });
      const ghost = `Ghost ${hex()}`;
      await leavesEverythingUntouched(async () => {
        const response = await post('/moves', {
          user_id: user.id,
          effective_date: day(0),
          job_title: 'Lead',
          department: 'Ops',
          manager_id: boss.id,
          bundles: { add: [ghost], remove: [vpn.displayName] },
          physical: { notes: 'New desk.' },
        });
        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({
          id: null,
          status: 'scheduled',
          user_id: user.id,
          directory_user_id: null,
        });
        expect(plans(response.body)).toEqual([
          [
            'update_account',
            `set title "Lead", department "Ops", manager ${bossEmail} of ${email} in ${h.managed.domain}'s directory`,
          ],
          ['change_bundles', `add to group ${ghost}, remove from group ${vpn.displayName}`],
          ['equipment_ticket', `open a hardware ticket in desk for the move of ${email}`],
        ]);
        expect(response.body.problems).toEqual([
          { task: 'change_bundles', code: 'group_missing', detail: `The directory has no group named "${ghost}".` },
        ]);
      });
    },
  );

  test('When desk knows no client for the managed tenant, then the ticket task lists desk_refusing, and nothing is written', async () => {
    const manager = await h.deskTenant.createUser();
    const tenant = await h.registerManagedTenant();
    const unknownClient = '00000000-0000-4000-8000-00000000c11e';
    await h.link.db.managedTenant.update({ where: { id: tenant.id }, data: { clientId: unknownClient } });
    const email = `nc.${hex()}@${tenant.domain}`;
    await leavesEverythingUntouched(async () => {
      const response = await post('/onboardings', {
        first_name: 'N',
        last_name: 'C',
        email,
        department: 'X',
        manager_id: manager.id,
        start_date: day(0),
        bundles: [],
        physical: { laptop: 'L', badge: false, phone_extension: false },
      });
      expect(response.status).toBe(200);
      expect(response.body.problems).toEqual([
        {
          task: 'equipment_ticket',
          code: 'desk_refusing',
          detail: `desk knows no client ${unknownClient} in your tenant: the ticket would be refused.`,
        },
      ]);
    });
  });

  test(
    'When a dry run and the real request carry the same Idempotency-Key, then the real one is not ' +
      'answered with the dry run (422 key reused), and a fresh key creates the run',
    async () => {
      const email = `idem.${hex()}@${h.managed.domain}`;
      const user = await h.deskTenant.createUser({ email });
      const body = { user_id: user.id, effective_date: day(40), bundles: {} };
      const key = `"dry-${hex()}"`;
      const dry = await request(h.link.app)
        .post('/api/v1/moves?dry_run=true')
        .set('Authorization', h.auth)
        .set('Idempotency-Key', key)
        .send(body);
      expect(dry.status).toBe(200);
      const real = await request(h.link.app)
        .post('/api/v1/moves')
        .set('Authorization', h.auth)
        .set('Idempotency-Key', key)
        .send(body);
      expect(real.status).toBe(422);
      expect(real.body.type).toBe('urn:msp:problem:idempotency-key-reused');
      const fresh = await request(h.link.app)
        .post('/api/v1/moves')
        .set('Authorization', h.auth)
        .set('Idempotency-Key', `"real-${hex()}"`)
        .send(body);
      expect(fresh.status).toBe(201);
    },
  );

  test('When a dry run breaks a rule, then it answers as the real request would (422, 409), and writes nothing', async () => {
    const email = `dup.${hex()}@${h.managed.domain}`;
    const user = await h.deskTenant.createUser({ email });
    const real = await request(h.link.app)
      .post('/api/v1/moves')
      .set('Authorization', h.auth)
      .send({ user_id: user.id, effective_date: day(30), bundles: {} });
    expect(real.status).toBe(201);
    await leavesEverythingUntouched(async () => {
      expect((await post('/moves', { user_id: user.id, effective_date: day(30), bundles: {} })).status).toBe(409);
      const unknown = await post('/moves', {
        user_id: '00000000-0000-4000-8000-000000000000',
        effective_date: day(1),
        bundles: {},
      });
      expect(unknown.status).toBe(422);
      // Something must have been read of the directory for the untouched check: a valid dry run.
      expect((await post('/moves', { user_id: user.id, effective_date: day(31), bundles: {} })).status).toBe(200);
    });
  });
});
