import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Entry } from 'ldapts';
import { groupOfNames, inetOrgPerson, startSlapd, type Slapd } from '@msp/peers';
import { directoryOutboundFromConfig, loadLinkConfig } from '../src/config';
import { startRunsHarness, type RunsHarness } from './support/runs-harness';

const DAY_MS = 86_400_000;
const day = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);

let slapd: Slapd;
let h: RunsHarness;
let managed: { id: string; domain: string; client_id: string };
let disabledOu: string;

beforeAll(async () => {
  slapd = await startSlapd();
  disabledOu = `ou=disabled,${slapd.baseDn}`;
  await slapd.addEntries([
    { dn: disabledOu, attributes: { objectClass: ['top', 'organizationalUnit'], ou: 'disabled' } },
    // groupOfNames needs a member: the group's own DN stands in.
    groupOfNames({ cn: 'wiki', parentDn: slapd.groupsOu }),
    groupOfNames({ cn: 'sales', parentDn: slapd.groupsOu }),
  ]);
  const config = loadLinkConfig({
    DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/link',
    OUTBOUND_ALLOW_LOOPBACK: 'true',
    OUTBOUND_TIMEOUT_MS: '5000',
  });
  h = await startRunsHarness({ outbound: directoryOutboundFromConfig(config) });
  managed = await h.registerManagedTenant({ withConnector: false });
  const created = await request(h.link.app)
    .post('/api/v1/connectors')
    .set('Authorization', h.auth)
    .send({
      tenant_id: managed.id,
      type: 'ldap',
      name: 'OpenLDAP',
      config: {
        flavor: 'openldap',
        url: slapd.ldapsUrl,
        bind_dn: slapd.adminDn,
        bind_password: slapd.adminPassword,
        base_dn: slapd.baseDn,
        users_ou: slapd.peopleOu,
        disabled_ou: disabledOu,
        groups_base: slapd.groupsOu,
        ca_certificate: slapd.caCertificatePem,
        bundle_groups: { wiki: `cn=wiki,${slapd.groupsOu}`, sales: 'sales' },
      },
    });
  expect(created.status).toBe(201);
}, 180_000);
afterAll(async () => {
  await h?.close();
  await slapd?.stop();
});

async function until(
  path: string,
  done: (run: { status: string; tasks: { name: string; status: string }[] }) => boolean,
) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await request(h.link.app).get(path).set('Authorization', h.auth);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    if (Date.now() > deadline) throw new Error(`${path} still ${response.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}
const taskDone = (name: string) => (run: { tasks: { name: string; status: string }[] }) =>
  ['succeeded', 'failed'].includes(run.tasks.find((task) => task.name === name)?.status ?? 'pending');

async function read(filter: string, attributes: string[]): Promise<Entry[]> {
  const client = await slapd.connect();
  try {
    return (await client.search(slapd.baseDn, { scope: 'sub', filter, attributes })).searchEntries;
  } finally {
    await client.unbind();
  }
}

describe('OpenLDAP joiner, mover and leaver', () => {
  test(
    'When a joiner with a job title is onboarded, then the inetOrgPerson holds title, departmentNumber and ' +
      "manager (the manager's DN found by e-mail), and the dry run named its DN and group DNs",
    async () => {
      const uid = `mgr${randomBytes(3).toString('hex')}`;
      const managerEmail = `${uid}@${managed.domain}`;
      await slapd.addEntries([
        inetOrgPerson({ uid, parentDn: slapd.peopleOu, cn: 'Mia Manager', sn: 'Manager', mail: managerEmail }),
      ]);
      const manager = await h.deskTenant.createUser({ name: 'Mia Manager', email: managerEmail });
      const email = `tia.${randomBytes(3).toString('hex')}@${managed.domain}`;
      const body = {
        first_name: 'Tia',
        last_name: 'Title',
        email,
        department: 'Research',
        job_title: 'Librarian',
        manager_id: manager.id,
        start_date: day(-1),
        bundles: ['wiki', 'nope'],
        physical: { laptop: 'X1', badge: false, phone_extension: false },
      };

      const dry = await request(h.link.app)
        .post('/api/v1/onboardings?dry_run=true')
        .set('Authorization', h.auth)
        .send(body);
      expect(dry.status).toBe(200);
      expect(dry.body.tasks.map((task: { plan: string }) => task.plan).slice(0, 2)).toEqual([
        `create uid=${email.split('@')[0]},${slapd.peopleOu} in ${slapd.baseDn.replace(/dc=/gi, '').replace(/,/g, '.')}`,
        `add to cn=wiki,${slapd.groupsOu}, add to group nope`,
      ]);
      expect(dry.body.problems).toEqual([expect.objectContaining({ task: 'assign_bundles', code: 'group_missing' })]);

      const created = await request(h.link.app)
        .post('/api/v1/onboardings')
        .set('Authorization', h.auth)
        .send({ ...body, bundles: ['wiki'] });
      expect(created.status).toBe(201);
      const run = await until(
        `/api/v1/onboardings/${created.body.id}`,
        (r) => !['scheduled', 'in_progress'].includes(r.status),
      );
      expect(run.status).toBe('completed');
      const [entry] = await read(`(mail=${email})`, ['title', 'departmentNumber', 'manager']);
      expect(entry).toMatchObject({
        title: 'Librarian',
        departmentNumber: 'Research',
        manager: `uid=${uid},${slapd.peopleOu}`,
      });
    },
  );

  test(
    'When a joiner is onboarded, moved and offboarded, then slapd holds the inetOrgPerson with its groups, ' +
      'then its new department, title and manager, then it sits in disabled_ou without groups',
    async () => {
      const email = `olly.${randomBytes(3).toString('hex')}@${managed.domain}`;
      const managerId = (await h.deskTenant.createUser({ name: 'Grace Manager' })).id;
      const onboarding = await request(h.link.app)
        .post('/api/v1/onboardings')
        .set('Authorization', h.auth)
        .send({
          first_name: 'Olly',
          last_name: 'Open',
          email,
          department: 'Research',
          manager_id: managerId,
          start_date: day(-1),
          bundles: ['wiki'],
          physical: { laptop: 'X1', badge: false, phone_extension: false },
        });
      expect(onboarding.status).toBe(201);
      const joined = await until(
        `/api/v1/onboardings/${onboarding.body.id}`,
        (run) => !['scheduled', 'in_progress'].includes(run.status),
      );
      expect(joined.status).toBe('completed');
      const [entry] = await read(`(mail=${email})`, ['uid', 'cn', 'departmentNumber', 'memberOf']);
      expect(entry).toMatchObject({
        dn: expect.stringMatching(new RegExp(`^uid=[a-z0-9.]+,${slapd.peopleOu}$`)),
        cn: 'Olly Open',
        departmentNumber: 'Research',
        memberOf: `cn=wiki,${slapd.groupsOu}`,
      });
      const credentials = await request(h.link.app)
        .post(`/api/v1/onboardings/${onboarding.body.id}/credentials`)
        .set('Authorization', h.auth);
      expect(credentials.status).toBe(200);
      const bound = await slapd.connect({ bindDn: entry!.dn, password: credentials.body.initial_password });
      await bound.unbind();

      // Mover: new department, title and manager (an existing directory person), and the sales group.
      const bossEmail = `boss.${randomBytes(3).toString('hex')}@${managed.domain}`;
      await slapd.addEntries([
        inetOrgPerson({ uid: 'boss', parentDn: slapd.peopleOu, cn: 'Boss', sn: 'Boss', mail: bossEmail }),
      ]);
      const boss = await h.deskTenant.createUser({ name: 'Boss', email: bossEmail });
      const user = await h.deskTenant.createUser({ name: 'Olly Open', email });
      const move = await request(h.link.app)
        .post('/api/v1/moves')
        .set('Authorization', h.auth)
        .send({
          user_id: user.id,
          effective_date: day(0),
          department: 'Sales',
          manager_id: boss.id,
          job_title: 'Account Executive',
          bundles: { add: ['sales'], remove: ['wiki'] },
        });
      expect(move.status).toBe(201);
      const moved = await until(
        `/api/v1/moves/${move.body.id}`,
        (run) => !['scheduled', 'in_progress'].includes(run.status),
      );
      expect(moved.status).toBe('completed');
      const [after] = await read(`(mail=${email})`, ['departmentNumber', 'title', 'manager', 'memberOf']);
      expect(after).toMatchObject({
        departmentNumber: 'Sales',
        title: 'Account Executive',
        manager: `uid=boss,${slapd.peopleOu}`,
        memberOf: `cn=sales,${slapd.groupsOu}`,
      });

      // Leaver.
      const successor = await h.deskTenant.createUser({ name: 'Sam Successor' });
      const offboarding = await request(h.link.app)
        .post('/api/v1/offboardings')
        .set('Authorization', h.auth)
        .send({ user_id: user.id, last_day: day(-1), mailbox_retention_days: 30, successor_id: successor.id });
      expect(offboarding.status).toBe(201);
      const left = await until(`/api/v1/offboardings/${offboarding.body.id}`, taskDone('disable_account'));
      expect(left.tasks.find((task: { name: string }) => task.name === 'disable_account')).toMatchObject({
        status: 'succeeded',
        result: { removed_groups: ['sales'] },
      });
      const [gone] = await read(`(mail=${email})`, ['memberOf', 'description']);
      expect(gone?.dn.endsWith(`,${disabledOu}`)).toBe(true);
      expect(gone?.memberOf ?? []).toEqual([]);
      expect(gone?.description).toBe(`Left ${day(-1)}`);
    },
  );
});
