import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Attribute, Change, type Entry } from 'ldapts';
import { adGroup, adUser, organizationalUnit, startSambaDc, type SambaDc } from '@msp/peers';
import { directoryOutboundFromConfig, loadLinkConfig } from '../src/config';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

/**
 * The joiner's profile, the mover, dry runs and the named directory errors of an `ldap`
 * connector, through link's HTTP API against a real Samba AD DC.
 */

const DAY_MS = 86_400_000;
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
const hex = () => randomBytes(3).toString('hex');

type Task = {
  name: string;
  status: string;
  detail: string | null;
  attempts: number;
  result: Record<string, unknown> | null;
  finished_at: string | null;
  plan?: string;
};
type Run = { id: string; status: string; tasks: Task[] };

let dc: SambaDc;
let h: RunsHarness;
let managed: { id: string; domain: string; client_id: string };
let groupsOu: string;
let salesOu: string;
let bossEmail: string;
let bossDesk: { id: string };

beforeAll(async () => {
  dc = await startSambaDc({ usersOu: 'OU=Staff' });
  groupsOu = `OU=Groups,${dc.baseDn}`;
  salesOu = `OU=Sales,${dc.baseDn}`;
  const config = loadLinkConfig({
    DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/link',
    OUTBOUND_ALLOWED_NETWORKS: dc.subnet,
    OUTBOUND_ALLOW_LOOPBACK: 'true',
    OUTBOUND_TIMEOUT_MS: '3000',
  });
  h = await startRunsHarness({ outbound: directoryOutboundFromConfig(config) });
  managed = await connectorTenant({});
  bossEmail = `grace.${hex()}@${managed.domain}`;
  await dc.addEntries([
    organizationalUnit(groupsOu),
    organizationalUnit(salesOu),
    adGroup({ cn: 'VPN', parentDn: groupsOu }),
    adGroup({ cn: 'Sales Team', parentDn: groupsOu }),
    adUser({
      cn: 'Grace Hopper',
      parentDn: dc.usersOu!,
      sAMAccountName: 'grace.hopper',
      mail: bossEmail,
      givenName: 'Grace',
      sn: 'Hopper',
    }),
  ]);
  bossDesk = await h.deskTenant.createUser({ name: 'Grace Hopper', email: bossEmail });
}, 180_000);
afterAll(async () => {
  await h?.close();
  await dc?.stop();
});

/** A managed tenant with an AD connector (overrides over the usual config). */
async function connectorTenant(overrides: Record<string, unknown>) {
  const tenant = await h.registerManagedTenant({ withConnector: false });
  const created = await request(h.link.app)
    .post('/api/v1/connectors')
    .set('Authorization', h.auth)
    .send({
      tenant_id: tenant.id,
      type: 'ldap',
      name: 'Corp AD',
      config: {
        flavor: 'active_directory',
        url: dc.url,
        bind_dn: dc.adminDn,
        bind_password: dc.adminPassword,
        base_dn: dc.baseDn,
        users_ou: dc.usersOu,
        groups_base: groupsOu,
        ca_certificate: dc.caCertificatePem,
        bundle_groups: { vpn: `CN=VPN,${groupsOu}`, sales: 'Sales Team', ghost: `CN=Ghost,${groupsOu}` },
        department_ous: { Sales: salesOu },
        upn_suffix: 'corp.example',
        ...overrides,
      },
    });
  expect(created.status).toBe(201);
  return tenant;
}

async function until(path: string, done: (run: Run) => boolean, timeoutMs = 60_000): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await request(h.link.app).get(path).set('Authorization', h.auth);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    if (Date.now() > deadline) throw new Error(`${path} still ${JSON.stringify(response.body.tasks)}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}
const finished = (run: Run) => !['scheduled', 'in_progress'].includes(run.status);
const task = (run: Run, name: string) => run.tasks.find((candidate) => candidate.name === name)!;

async function read(filter: string, attributes: string[]): Promise<Entry[]> {
  const client = await dc.connect();
  try {
    return (await client.search(dc.baseDn, { scope: 'sub', filter, attributes })).searchEntries;
  } finally {
    await client.unbind();
  }
}

async function setDomain(attribute: string, value: string) {
  const client = await dc.connect();
  try {
    await client.modify(
      dc.baseDn,
      new Change({ operation: 'replace', modification: new Attribute({ type: attribute, values: [value] }) }),
    );
  } finally {
    await client.unbind();
  }
}

const onboardingBody = (email: string, overrides: Record<string, unknown> = {}) => ({
  first_name: 'Ada',
  last_name: 'Lovelace',
  email,
  department: 'Research',
  job_title: 'Analyst',
  manager_id: bossDesk.id,
  start_date: day(-1),
  bundles: ['vpn'],
  physical: { laptop: 'ThinkPad T14', badge: false, phone_extension: false },
  ...overrides,
});

async function onboard(
  email: string,
  overrides: Record<string, unknown> = {},
  done: (run: Run) => boolean = finished,
): Promise<Run> {
  const response = await request(h.link.app)
    .post('/api/v1/onboardings')
    .set('Authorization', h.auth)
    .send(onboardingBody(email, overrides));
  expect(response.status).toBe(201);
  return until(`/api/v1/onboardings/${response.body.id}`, done);
}

describe('Active Directory joiner profile and mover', () => {
  test(
    'When a joiner with a job title is onboarded, then the entry holds title, department and manager ' +
      '(the DN of the manager found by e-mail), and the onboarding shows job_title',
    async () => {
      const email = `ada.${hex()}@${managed.domain}`;
      const run = await onboard(email, { first_name: 'Profile' });

      expect(run.status).toBe('completed');
      expect(run).toMatchObject({ job_title: 'Analyst', department: 'Research' });
      const [entry] = await read(`(mail=${email})`, ['title', 'department', 'manager']);
      expect(entry).toMatchObject({
        title: 'Analyst',
        department: 'Research',
        manager: `CN=Grace Hopper,${dc.usersOu}`,
      });
    },
  );

  test('When the manager has no account in the directory, then the joiner is created all the same, without a manager', async () => {
    const nobody = await h.deskTenant.createUser({ name: 'Nobody Here', email: `nobody.${hex()}@${managed.domain}` });
    const email = `ada.${hex()}@${managed.domain}`;
    const run = await onboard(email, { first_name: 'Unmanaged', manager_id: nobody.id, job_title: undefined });

    expect(run.status).toBe('completed');
    expect(run).toMatchObject({ job_title: null });
    expect(task(run, 'create_account').detail).toContain(`The manager ${nobody.email} has no account in the directory`);
    const [entry] = await read(`(mail=${email})`, ['title', 'manager']);
    expect([entry?.manager ?? []].flat()).toEqual([]);
    expect([entry?.title ?? []].flat()).toEqual([]);
  });

  test(
    'When a person moves to a department mapped in department_ous, then title, department and ' +
      'manager change, the entry moves to that OU and its groups change',
    async () => {
      const email = `mo.${hex()}@${managed.domain}`;
      expect(
        (
          await onboard(email, {
            first_name: 'Mo',
            last_name: 'Ver',
            manager_id: (await h.deskTenant.createUser({ name: 'Other Boss' })).id,
          })
        ).status,
      ).toBe('completed');
      const user = await h.deskTenant.createUser({ name: 'Mo Ver', email });

      const created = await request(h.link.app)
        .post('/api/v1/moves')
        .set('Authorization', h.auth)
        .send({
          user_id: user.id,
          effective_date: day(0),
          department: 'Sales',
          manager_id: bossDesk.id,
          job_title: 'Account Executive',
          bundles: { add: ['sales'], remove: ['vpn'] },
        });
      expect(created.status).toBe(201);
      const moved = await until(`/api/v1/moves/${created.body.id}`, finished);

      expect(moved.status).toBe('completed');
      expect(task(moved, 'update_account')).toMatchObject({
        status: 'succeeded',
        result: { changed: ['title', 'department', 'manager'] },
      });
      expect(task(moved, 'change_bundles')).toMatchObject({
        status: 'succeeded',
        result: { added: ['sales'], removed: ['vpn'], missing: [] },
      });
      const [entry] = await read(`(mail=${email})`, ['title', 'department', 'manager', 'memberOf']);
      expect(entry).toMatchObject({
        dn: `CN=Mo Ver,${salesOu}`,
        title: 'Account Executive',
        department: 'Sales',
        manager: `CN=Grace Hopper,${dc.usersOu}`,
        memberOf: `CN=Sales Team,${groupsOu}`,
      });
    },
  );

  test('When a move names a bundle without a group, then change_bundles fails naming it and the other groups are changed', async () => {
    const email = `gh.${hex()}@${managed.domain}`;
    expect((await onboard(email, { first_name: 'Gho', last_name: 'St' })).status).toBe('completed');
    const user = await h.deskTenant.createUser({ name: 'Gho St', email });
    const created = await request(h.link.app)
      .post('/api/v1/moves')
      .set('Authorization', h.auth)
      .send({ user_id: user.id, effective_date: day(0), bundles: { add: ['ghost', 'sales'], remove: [] } });
    expect(created.status).toBe(201);
    const moved = await until(`/api/v1/moves/${created.body.id}`, finished);
    expect(task(moved, 'change_bundles')).toMatchObject({
      status: 'failed',
      result: { added: ['sales'], missing: ['ghost'] },
    });
  });
});

describe('Active Directory dry runs', () => {
  test(
    "When an onboarding is dry-run, then the plans name the new entry's DN and the " +
      "groups' DNs, a missing group is a problem, and nothing is written",
    async () => {
      const email = `dry.${hex()}@${managed.domain}`;
      const response = await request(h.link.app)
        .post('/api/v1/onboardings?dry_run=true')
        .set('Authorization', h.auth)
        .send(onboardingBody(email, { first_name: 'Dry', last_name: 'Run', bundles: ['vpn', 'ghost'] }));

      expect(response.status).toBe(200);
      expect(task(response.body, 'create_account')).toMatchObject({
        plan: `create CN=Dry Run,${dc.usersOu} in corp.example`,
      });
      expect(task(response.body, 'assign_bundles')).toMatchObject({
        plan: `add to CN=VPN,${groupsOu}, add to group ghost`,
      });
      expect(response.body.problems).toEqual([
        { task: 'assign_bundles', code: 'group_missing', detail: expect.stringContaining('ghost') },
      ]);
      expect(await read(`(mail=${email})`, ['1.1'])).toEqual([]);
    },
  );

  test('When a move and an offboarding are dry-run, then their plans name the entry, the target OU and the group DNs, and nothing changes', async () => {
    const email = `dm.${hex()}@${managed.domain}`;
    expect((await onboard(email, { first_name: 'Dry', last_name: 'Mover' })).status).toBe('completed');
    const user = await h.deskTenant.createUser({ name: 'Dry Mover', email });
    const dn = `CN=Dry Mover,${dc.usersOu}`;

    const move = await request(h.link.app)
      .post('/api/v1/moves?dry_run=true')
      .set('Authorization', h.auth)
      .send({
        user_id: user.id,
        effective_date: day(0),
        department: 'Sales',
        job_title: 'Account Executive',
        bundles: { add: ['sales'], remove: ['vpn'] },
      });
    expect(move.status).toBe(200);
    expect(task(move.body, 'update_account')).toMatchObject({
      plan: `set title "Account Executive", department "Sales" of ${dn} in corp.example, and move it to ${salesOu}`,
    });
    expect(task(move.body, 'change_bundles')).toMatchObject({
      plan: `add to CN=Sales Team,${groupsOu}, remove from CN=VPN,${groupsOu}`,
    });
    expect(move.body.problems).toEqual([]);

    const successor = await h.deskTenant.createUser({ name: 'Sam Successor' });
    const leave = await request(h.link.app)
      .post('/api/v1/offboardings?dry_run=true')
      .set('Authorization', h.auth)
      .send({ user_id: user.id, last_day: day(-1), mailbox_retention_days: 30, successor_id: successor.id });
    expect(leave.status).toBe(200);
    expect(task(leave.body, 'disable_account').plan).toMatch(
      new RegExp(`^disable ${dn.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} in corp\\.example`),
    );

    const [entry] = await read(`(mail=${email})`, ['department', 'userAccountControl', 'memberOf']);
    expect(entry).toMatchObject({
      dn,
      department: 'Research',
      userAccountControl: '512',
      memberOf: `CN=VPN,${groupsOu}`,
    });
  });

  test('When the e-mail already has an account, then the dry run says account_exists', async () => {
    const email = `twice.${hex()}@${managed.domain}`;
    expect((await onboard(email, { first_name: 'Twice', bundles: [] })).status).toBe('completed');
    const response = await request(h.link.app)
      .post('/api/v1/onboardings?dry_run=true')
      .set('Authorization', h.auth)
      .send(onboardingBody(email, { first_name: 'Twice', bundles: [] }));
    expect(response.status).toBe(200);
    expect(response.body.problems).toEqual([
      expect.objectContaining({ task: 'create_account', code: 'account_exists' }),
    ]);
  });

  test('When the bind password is wrong, then the dry run says credentials_refused', async () => {
    const tenant = await connectorTenant({ bind_password: 'Wrong-Passw0rd!' });
    const response = await request(h.link.app)
      .post('/api/v1/onboardings?dry_run=true')
      .set('Authorization', h.auth)
      .send(onboardingBody(`cr.${hex()}@${tenant.domain}`, { bundles: ['vpn'] }));
    expect(response.status).toBe(200);
    expect(response.body.problems.map((p: { task: string; code: string }) => [p.task, p.code])).toEqual([
      ['create_account', 'credentials_refused'],
      ['assign_bundles', 'credentials_refused'],
    ]);
  });

  test('When the domain controller cannot be reached, then the dry run says directory_unreachable', async () => {
    const tenant = await connectorTenant({ url: `ldaps://${dc.host.replace(/\.\d+$/, '.253')}` });
    const response = await request(h.link.app)
      .post('/api/v1/onboardings?dry_run=true')
      .set('Authorization', h.auth)
      .send(onboardingBody(`du.${hex()}@${tenant.domain}`, { bundles: [] }));
    expect(response.status).toBe(200);
    expect(response.body.problems).toEqual([
      expect.objectContaining({ task: 'create_account', code: 'directory_unreachable' }),
    ]);
  }, 30_000);
});

describe('Active Directory errors, named', () => {
  test(
    'When the domain asks for longer passwords than link sets, then the dry run says ' +
      'password_policy and the joiner fails once with password_policy (0000052D), not retried',
    async () => {
      await setDomain('minPwdLength', '30');
      try {
        const email = `pp.${hex()}@${managed.domain}`;
        const dry = await request(h.link.app)
          .post('/api/v1/onboardings?dry_run=true')
          .set('Authorization', h.auth)
          .send(onboardingBody(email, { first_name: 'Policy', bundles: [] }));
        expect(dry.body.problems).toEqual([
          expect.objectContaining({
            task: 'create_account',
            code: 'password_policy',
            detail: expect.stringContaining('30'),
          }),
        ]);

        const run = await onboard(email, { first_name: 'Policy', bundles: [] });
        expect(run.status).toBe('failed');
        expect(task(run, 'create_account')).toMatchObject({
          status: 'failed',
          attempts: 1,
          result: { error: 'password_policy' },
          detail: expect.stringMatching(/^password_policy: .*password policy/),
        });
        expect(task(run, 'create_account').detail).not.toMatch(/0000052D/);
        expect(await read(`(mail=${email})`, ['1.1'])).toEqual([]);
      } finally {
        await setDomain('minPwdLength', '7');
      }
    },
  );

  test('When the e-mail already has an account, then a second joiner fails with account_exists and creates nothing, not retried', async () => {
    const email = `dup.${hex()}@${managed.domain}`;
    expect((await onboard(email, { first_name: 'Dup', bundles: [] })).status).toBe('completed');
    const run = await onboard(email, { first_name: 'Dup', bundles: [] });
    expect(run.status).toBe('failed');
    expect(task(run, 'create_account')).toMatchObject({
      status: 'failed',
      attempts: 1,
      result: { error: 'account_exists' },
      detail: expect.stringMatching(/^account_exists: /),
    });
    expect(await read(`(mail=${email})`, ['1.1'])).toHaveLength(1);
  });

  test('When users_ou does not exist, then the joiner fails with ou_missing, not retried', async () => {
    const tenant = await connectorTenant({ users_ou: `OU=Nowhere,${dc.baseDn}` });
    const run = await onboard(`om.${hex()}@${tenant.domain}`, { bundles: [] });
    expect(task(run, 'create_account')).toMatchObject({
      status: 'failed',
      attempts: 1,
      result: { error: 'ou_missing' },
      detail: expect.stringMatching(/^ou_missing: /),
    });
  });

  test('When the bind account may not create users, then the joiner fails with insufficient_access, not retried', async () => {
    const password = 'Us3r!Passw0rd-1';
    const dn = `CN=Plain User,${dc.usersOu}`;
    await dc.addEntries([
      adUser({ cn: 'Plain User', parentDn: dc.usersOu!, sAMAccountName: `plain.${hex()}`, password }),
    ]);
    const tenant = await connectorTenant({ bind_dn: dn, bind_password: password });
    const run = await onboard(`ia.${hex()}@${tenant.domain}`, { bundles: [] });
    expect(task(run, 'create_account')).toMatchObject({
      status: 'failed',
      attempts: 1,
      result: { error: 'insufficient_access' },
      detail: expect.stringMatching(/^insufficient_access: /),
    });
  });

  test('When the domain controller is down, then create_account fails as directory_unreachable and is retried, and succeeds once it is back', async () => {
    const email = `back.${hex()}@${managed.domain}`;
    await dc.setDown(true);
    let up = false;
    try {
      const response = await request(h.link.app)
        .post('/api/v1/onboardings')
        .set('Authorization', h.auth)
        .send(onboardingBody(email, { first_name: 'Back', bundles: [] }));
      expect(response.status).toBe(201);
      const waiting = await until(
        `/api/v1/onboardings/${response.body.id}`,
        (run) => task(run, 'create_account').attempts >= 2 && task(run, 'create_account').status === 'failed',
      );
      expect(task(waiting, 'create_account')).toMatchObject({
        finished_at: null,
        detail: expect.stringMatching(/^directory_unreachable: .*will be retried/),
      });
      // No account yet, so no initial password: 409, and asking does not use up the one retrieval.
      const early = await request(h.link.app)
        .post(`/api/v1/onboardings/${response.body.id}/credentials`)
        .set('Authorization', h.auth);
      expect(early.status).toBe(409);
      expect(early.body).toMatchObject({
        type: 'urn:msp:problem:credentials_not_ready',
        status: 409,
        detail: expect.stringContaining('has not created its account yet'),
      });
      await dc.setDown(false);
      up = true;
      const run = await until(`/api/v1/onboardings/${response.body.id}`, finished);
      if (run.status !== 'completed') {
        // The tries ran out while samba started: the run's retry takes it up.
        expect(task(run, 'create_account')).toMatchObject({
          status: 'failed',
          result: { error: 'directory_unreachable' },
        });
        const retried = await request(h.link.app)
          .post(`/api/v1/onboardings/${run.id}/retry`)
          .set('Authorization', h.auth);
        expect(retried.status).toBe(200);
        expect((await until(`/api/v1/onboardings/${run.id}`, finished)).status).toBe('completed');
      }
      expect(await read(`(mail=${email})`, ['1.1'])).toHaveLength(1);
      const credentials = await request(h.link.app)
        .post(`/api/v1/onboardings/${response.body.id}/credentials`)
        .set('Authorization', h.auth);
      expect(credentials.status).toBe(200);
      expect(credentials.body).toEqual({ user_name: 'back.lovelace', initial_password: expect.any(String) });
    } finally {
      if (!up) await dc.setDown(false);
    }
  }, 120_000);
});
