import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Entry } from 'ldapts';
import { adGroup, organizationalUnit, startSambaDc, type SambaDc, UF_ACCOUNTDISABLE } from '@msp/peers';
import { directoryOutboundFromConfig, loadLinkConfig } from '../src/config';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

const DAY_MS = 86_400_000;
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);

let dc: SambaDc;
let h: RunsHarness;
let managed: { id: string; domain: string; client_id: string };
let managerId: string;
let groupsOu: string;
let disabledOu: string;
/** The run engine's clock runs this far ahead of the real time: a test moves it to make a dated task due. */
let clockOffsetMs = 0;

beforeAll(async () => {
  dc = await startSambaDc({ usersOu: 'OU=Staff' });
  groupsOu = `OU=Groups,${dc.baseDn}`;
  disabledOu = `OU=Disabled,${dc.baseDn}`;
  await dc.addEntries([
    organizationalUnit(groupsOu),
    organizationalUnit(disabledOu),
    adGroup({ cn: 'VPN', parentDn: groupsOu }),
    adGroup({ cn: 'Finance Team', parentDn: groupsOu }),
  ]);
  const config = loadLinkConfig({
    DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/link',
    OUTBOUND_ALLOWED_NETWORKS: dc.subnet,
    OUTBOUND_ALLOW_LOOPBACK: 'true',
    OUTBOUND_TIMEOUT_MS: '5000',
  });
  h = await startRunsHarness({
    outbound: directoryOutboundFromConfig(config),
    now: () => new Date(Date.now() + clockOffsetMs),
  });
  managed = await h.registerManagedTenant({ withConnector: false });
  managerId = (await h.deskTenant.createUser({ name: 'Grace Manager' })).id;
  const created = await request(h.link.app)
    .post('/api/v1/connectors')
    .set('Authorization', h.auth)
    .send({
      tenant_id: managed.id,
      type: 'ldap',
      name: 'Corp AD',
      config: {
        flavor: 'active_directory',
        url: dc.url,
        bind_dn: dc.adminDn,
        bind_password: dc.adminPassword,
        base_dn: dc.baseDn,
        users_ou: dc.usersOu,
        disabled_ou: disabledOu,
        groups_base: groupsOu,
        ca_certificate: dc.caCertificatePem,
        bundle_groups: { vpn: `CN=VPN,${groupsOu}`, finance: 'Finance Team' },
        upn_suffix: 'corp.example',
      },
    });
  expect(created.status).toBe(201);
}, 180_000);
afterAll(async () => {
  await h?.close();
  await dc?.stop();
});

async function until(path: string, done: (run: { status: string }) => boolean) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await request(h.link.app).get(path).set('Authorization', h.auth);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    if (Date.now() > deadline) throw new Error(`${path} still ${response.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

async function read(filter: string, attributes: string[]): Promise<Entry[]> {
  const client = await dc.connect();
  try {
    return (await client.search(dc.baseDn, { scope: 'sub', filter, attributes })).searchEntries;
  } finally {
    await client.unbind();
  }
}

/** Runs a run's due job now by a clock `days` ahead, as the queue would on that day, and reads the run back. */
async function runDue(kind: 'onboarding' | 'offboarding', id: string, days: number) {
  clockOffsetMs = days * DAY_MS;
  try {
    await h.runJobNow(kind, id);
  } finally {
    clockOffsetMs = 0;
  }
  const response = await request(h.link.app).get(`/api/v1/${kind}s/${id}`).set('Authorization', h.auth);
  expect(response.status).toBe(200);
  return response.body;
}

async function onboard(
  email: string,
  overrides: Record<string, unknown> = {},
  done: (run: { status: string }) => boolean = (run) => !['scheduled', 'in_progress'].includes(run.status),
) {
  const response = await request(h.link.app)
    .post('/api/v1/onboardings')
    .set('Authorization', h.auth)
    .send({
      first_name: 'Ada',
      last_name: 'Lovelace',
      email,
      department: 'Research',
      manager_id: managerId,
      start_date: day(-1),
      bundles: ['vpn'],
      physical: { laptop: 'ThinkPad T14', badge: false, phone_extension: false },
      ...overrides,
    });
  expect(response.status).toBe(201);
  return until(`/api/v1/onboardings/${response.body.id}`, done);
}

describe('Active Directory joiner and leaver', () => {
  test(
    'When a joiner is onboarded, then the account is created under users_ou with sAMAccountName, UPN, ' +
      "mail, department and an enabled account, and added to the bundle's group",
    async () => {
      const email = `ada.${randomBytes(3).toString('hex')}@${managed.domain}`;
      const run = await onboard(email);

      expect(run.status).toBe('completed');
      const [entry] = await read(`(mail=${email})`, [
        'sAMAccountName',
        'userPrincipalName',
        'userAccountControl',
        'department',
        'givenName',
        'sn',
        'memberOf',
        'pwdLastSet',
      ]);
      expect(entry).toMatchObject({
        dn: `CN=Ada Lovelace,${dc.usersOu}`,
        sAMAccountName: 'ada.lovelace',
        userPrincipalName: email,
        userAccountControl: '512',
        department: 'Research',
        givenName: 'Ada',
        sn: 'Lovelace',
        memberOf: `CN=VPN,${groupsOu}`,
        pwdLastSet: '0',
      });
      expect(run.tasks.find((task: { name: string }) => task.name === 'assign_bundles')).toMatchObject({
        status: 'succeeded',
        result: { assigned: ['vpn'], missing: [] },
      });
      expect(JSON.stringify(run)).not.toMatch(/initial_password/);

      // The initial password, once: it lets the new account bind (AD's complexity rules were met).
      const credentials = await request(h.link.app)
        .post(`/api/v1/onboardings/${run.id}/credentials`)
        .set('Authorization', h.auth);
      expect(credentials.status).toBe(200);
      expect(credentials.body).toEqual({
        user_name: 'ada.lovelace',
        initial_password: expect.stringMatching(/^.{20}$/),
      });
      expect(JSON.stringify(await h.link.db.onboarding.findUniqueOrThrow({ where: { id: run.id } }))).not.toContain(
        credentials.body.initial_password,
      );
      const again = await request(h.link.app)
        .post(`/api/v1/onboardings/${run.id}/credentials`)
        .set('Authorization', h.auth);
      expect(again.status).toBe(410);
      expect(again.body.type).toBe('urn:msp:problem:credentials_already_retrieved');
      // pwdLastSet 0: the password is right but must be changed (AD answers 773 "must change" in the bind's data).
      const bind = await dc
        .connect({ bindDn: `CN=Ada Lovelace,${dc.usersOu}`, password: credentials.body.initial_password })
        .then(
          async (client) => {
            await client.unbind();
            return 'bound';
          },
          (error: Error) => error.message,
        );
      expect(bind).toMatch(/bound|data 773/);
      const wrong = await dc.connect({ bindDn: `CN=Ada Lovelace,${dc.usersOu}`, password: 'Not-The-Password-1' }).then(
        async (client) => {
          await client.unbind();
          return 'bound';
        },
        (error: Error) => error.message,
      );
      expect(wrong).not.toMatch(/bound|data 773/);
    },
  );

  test('When credentials are asked of an onboarding of another tenant or one that does not exist, then 404', async () => {
    const response = await request(h.link.app)
      .post(`/api/v1/onboardings/00000000-0000-4000-8000-000000000000/credentials`)
      .set('Authorization', h.auth);
    expect(response.status).toBe(404);
  });

  test('When a second joiner has the same name, then they get a unique sAMAccountName and cn rather than a failed run', async () => {
    const email = `ada.${randomBytes(3).toString('hex')}@${managed.domain}`;
    const run = await onboard(email, { bundles: [] });

    expect(run.status).toBe('completed');
    const [entry] = await read(`(mail=${email})`, ['sAMAccountName']);
    expect(entry?.sAMAccountName).toMatch(/^ada\.lovelace\d$/);
    expect(entry?.dn).toMatch(/^CN=Ada Lovelace \d,/);
  });

  test('When a bundle names no group of the directory, then assign_bundles fails naming it as for SCIM', async () => {
    const email = `ada.${randomBytes(3).toString('hex')}@${managed.domain}`;
    const run = await onboard(email, { first_name: 'Missing', bundles: ['no-such-bundle'] });
    expect(run.tasks.find((task: { name: string }) => task.name === 'assign_bundles')).toMatchObject({
      status: 'failed',
      result: { missing: ['no-such-bundle'] },
    });
  });

  test(
    'When a leaver is offboarded after last_day, then the account is disabled, removed from its groups ' +
      '(listed in the result), described "Left <last_day>" and moved to disabled_ou',
    async () => {
      const email = `lea.${randomBytes(3).toString('hex')}@${managed.domain}`;
      expect((await onboard(email, { first_name: 'Lea', last_name: 'Ver', bundles: ['vpn', 'finance'] })).status).toBe(
        'completed',
      );
      const user = await h.deskTenant.createUser({ name: 'Lea Ver', email });
      const successor = await h.deskTenant.createUser({ name: 'Sam Successor' });
      const lastDay = day(-1);

      const created = await request(h.link.app)
        .post('/api/v1/offboardings')
        .set('Authorization', h.auth)
        .send({ user_id: user.id, last_day: lastDay, mailbox_retention_days: 30, successor_id: successor.id });
      expect(created.status).toBe(201);
      const run = await until(`/api/v1/offboardings/${created.body.id}`, (body) =>
        ['succeeded', 'failed'].includes(
          (body as unknown as { tasks: { name: string; status: string }[] }).tasks.find(
            (task) => task.name === 'disable_account',
          )?.status ?? 'pending',
        ),
      );

      const disable = run.tasks.find((task: { name: string }) => task.name === 'disable_account');
      expect(disable).toMatchObject({
        status: 'succeeded',
        result: {
          removed_groups: expect.arrayContaining(['VPN', 'Finance Team']),
          moved_to: `CN=Lea Ver,${disabledOu}`,
        },
      });
      const [entry] = await read(`(mail=${email})`, ['userAccountControl', 'memberOf', 'description']);
      expect(entry?.dn).toBe(`CN=Lea Ver,${disabledOu}`);
      expect(Number(entry?.userAccountControl) & UF_ACCOUNTDISABLE).toBe(UF_ACCOUNTDISABLE);
      expect(entry?.memberOf ?? []).toEqual([]);
      expect(entry?.description).toBe(`Left ${lastDay}`);
      expect(run.status).toBe('in_progress');
      expect(run.tasks.find((task: { name: string }) => task.name === 'delete_account')).toMatchObject({
        status: 'pending',
      });

      // Thirty days after last_day the mailbox's retention has passed: delete_account removes the entry.
      const done = await runDue('offboarding', created.body.id, 31);
      expect(done.tasks.find((task: { name: string }) => task.name === 'delete_account')).toMatchObject({
        status: 'succeeded',
        result: { directory_user_id: disable.result.directory_user_id },
      });
      expect(done.status).toBe('completed');
      expect(await read(`(mail=${email})`, ['1.1'])).toEqual([]);
      expect(await read(`(cn=Lea Ver)`, ['1.1'])).toEqual([]);
    },
  );
});

describe('Active Directory staged joiner', () => {
  test(
    'When the start date is ahead, then the account is created disabled (514) with its groups, the ' +
      'credentials can be read, and activate_account enables it (512) at the start of the start date',
    async () => {
      const email = `sta.${randomBytes(3).toString('hex')}@${managed.domain}`;
      const startDate = day(2);
      const staged = await onboard(email, { first_name: 'Stan', last_name: 'Staged', start_date: startDate }, (run) =>
        (run as unknown as { tasks: { name: string; finished_at: string | null }[] }).tasks.every(
          (task) => task.name === 'activate_account' || task.finished_at !== null,
        ),
      );
      expect(staged.status).toBe('in_progress');
      expect(staged.tasks.map((task: { name: string; status: string }) => [task.name, task.status])).toEqual([
        ['create_account', 'succeeded'],
        ['assign_bundles', 'succeeded'],
        ['equipment_ticket', 'succeeded'],
        ['activate_account', 'pending'],
      ]);
      expect(staged.tasks[3].due_at).toBe(`${startDate}T00:00:00.000Z`);
      const [before] = await read(`(mail=${email})`, ['userAccountControl', 'memberOf']);
      expect(before).toMatchObject({
        dn: `CN=Stan Staged,${dc.usersOu}`,
        userAccountControl: '514',
        memberOf: `CN=VPN,${groupsOu}`,
      });
      const credentials = await request(h.link.app)
        .post(`/api/v1/onboardings/${staged.id}/credentials`)
        .set('Authorization', h.auth);
      expect(credentials.status).toBe(200);
      expect(credentials.body.user_name).toBe('stan.staged');

      // The day before the start date nothing is due yet; on the start date the account is enabled.
      const early = await runDue('onboarding', staged.id, 1);
      expect(early.tasks[3]).toMatchObject({ name: 'activate_account', status: 'pending', attempts: 0 });
      expect((await read(`(mail=${email})`, ['userAccountControl']))[0]?.userAccountControl).toBe('514');

      const run = await runDue('onboarding', staged.id, 2);
      expect(run.status).toBe('completed');
      expect(run.tasks[3]).toMatchObject({ name: 'activate_account', status: 'succeeded', attempts: 1 });
      expect((await read(`(mail=${email})`, ['userAccountControl']))[0]?.userAccountControl).toBe('512');
    },
  );
});
