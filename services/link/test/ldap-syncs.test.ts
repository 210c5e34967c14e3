import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Change, Attribute } from 'ldapts';
import {
  adGroup,
  adUser,
  inetOrgPerson,
  groupOfNames,
  objectGuidToString,
  organizationalUnit,
  startSambaDc,
  startSlapd,
  type SambaDc,
  type Slapd,
} from '@msp/peers';
import { directoryOutboundFromConfig, loadLinkConfig } from '../src/config';
import { createLdapDirectory } from '../src/ldap/ldap-directory';
import { ldapSettingsFrom } from '../src/ldap/ldap-config';
import { startLink, type TestLink } from './support/link';

const CONNECTORS = '/api/v1/connectors';
const STAFF = 5;

let dc: SambaDc;
let slapd: Slapd;
let link: TestLink;
const outboundConfig = () =>
  loadLinkConfig({
    DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/link',
    OUTBOUND_ALLOWED_NETWORKS: dc.subnet,
    OUTBOUND_ALLOW_LOOPBACK: 'true',
    OUTBOUND_TIMEOUT_MS: '5000',
  });

beforeAll(async () => {
  [dc, slapd] = await Promise.all([startSambaDc({ usersOu: 'OU=Staff' }), startSlapd()]);
  // Person 2 reports to Person 4 (listed after them), Person 3 to Person 1 (listed before).
  const managerOf: Record<number, number> = { 2: 4, 3: 1 };
  const staff = Array.from({ length: STAFF }, (_, i) =>
    adUser({
      cn: `Person ${i + 1}`,
      parentDn: dc.usersOu!,
      sAMAccountName: `person${i + 1}`,
      mail: `person${i + 1}@corp.example`,
      displayName: `Person ${i + 1}`,
      enabled: i !== 4,
      ...(i === 1 || i === 2 ? { department: i === 1 ? 'Finance' : 'Research' } : {}),
      ...(managerOf[i + 1] ? { manager: `CN=Person ${managerOf[i + 1]},${dc.usersOu!}` } : {}),
    }),
  );
  await dc.addEntries([
    // A manager must exist before the entry naming it.
    ...staff.filter((_, i) => !managerOf[i + 1]),
    ...staff.filter((_, i) => managerOf[i + 1]),
    organizationalUnit(`OU=Groups,${dc.baseDn}`),
    adGroup({ cn: 'VPN', parentDn: `OU=Groups,${dc.baseDn}`, members: [staff[0]!.dn, staff[1]!.dn] }),
    adGroup({ cn: 'Finance', parentDn: `OU=Groups,${dc.baseDn}`, members: [staff[1]!.dn] }),
  ]);
  const people = [1, 2, 3].map((i) =>
    inetOrgPerson({
      uid: `olly${i}`,
      parentDn: slapd.peopleOu,
      cn: `Olly ${i}`,
      sn: `${i}`,
      mail: `olly${i}@example.org`,
      displayName: `Olly ${i}`,
      ...(i === 2 ? { departmentNumber: 'Sales', manager: `uid=olly3,${slapd.peopleOu}` } : {}),
    }),
  );
  await slapd.addEntries([...people, groupOfNames({ cn: 'wiki', parentDn: slapd.groupsOu, members: [people[0]!.dn] })]);
  link = await startLink({
    outbound: directoryOutboundFromConfig(outboundConfig()),
    settings: { sync: { pageSize: 2 } },
  });
}, 120_000);
afterAll(async () => {
  await link?.close();
  await Promise.all([dc?.stop(), slapd?.stop()]);
});

function caller() {
  return `Bearer ${link.token({ tenant_id: randomUUID(), scope: 'admin:tenant' })}`;
}

async function connector(auth: string, config: Record<string, unknown>): Promise<string> {
  const tenant = await request(link.app)
    .post('/api/v1/tenants')
    .set('Authorization', auth)
    .send({ name: 'Corp', domain: `c${randomUUID().slice(0, 8)}.example.com`, client_id: randomUUID() });
  expect(tenant.status).toBe(201);
  const created = await request(link.app)
    .post(CONNECTORS)
    .set('Authorization', auth)
    .send({ tenant_id: tenant.body.id, type: 'ldap', name: 'Directory', config });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const adConfig = () => ({
  flavor: 'active_directory',
  url: dc.url,
  bind_dn: dc.adminDn,
  bind_password: dc.adminPassword,
  base_dn: dc.baseDn,
  users_ou: dc.usersOu,
  groups_base: `OU=Groups,${dc.baseDn}`,
  ca_certificate: dc.caCertificatePem,
});
const slapdConfig = () => ({
  flavor: 'openldap',
  url: slapd.ldapsUrl,
  bind_dn: slapd.adminDn,
  bind_password: slapd.adminPassword,
  base_dn: slapd.baseDn,
  users_ou: slapd.peopleOu,
  groups_base: slapd.groupsOu,
  ca_certificate: slapd.caCertificatePem,
});

async function sync(auth: string, connectorId: string) {
  const started = await request(link.app).post(`${CONNECTORS}/${connectorId}/sync`).set('Authorization', auth);
  expect(started.status).toBe(202);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const run = await request(link.app)
      .get(`${CONNECTORS}/${connectorId}/syncs/${started.body.id}`)
      .set('Authorization', auth);
    if (run.body.status === 'succeeded' || run.body.status === 'failed') return run.body;
    if (Date.now() > deadline) throw new Error(`run ${started.body.id} still ${run.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function all(auth: string, path: string) {
  const items: Record<string, unknown>[] = [];
  let url: string | undefined = `${path}?per_page=2`;
  while (url) {
    const page: request.Response = await request(link.app).get(url).set('Authorization', auth);
    expect(page.status).toBe(200);
    items.push(...page.body.data);
    const next: string | undefined = /<([^>]+)>;\s*rel="next"/.exec(page.headers.link ?? '')?.[1];
    url = next ? next.replace(/^https?:\/\/[^/]+/, '') : undefined;
  }
  return items;
}

async function guidOf(dn: string): Promise<string> {
  const client = await dc.connect();
  try {
    const { searchEntries } = await client.search(dn, {
      scope: 'base',
      attributes: ['objectGUID'],
      explicitBufferAttributes: ['objectGUID'],
    });
    return objectGuidToString(searchEntries[0]!.objectGUID as Buffer);
  } finally {
    await client.unbind();
  }
}

describe('ldap syncs: Active Directory', () => {
  test(
    'When an AD connector is synced, then GET /users lists every user of users_ou with objectGUID ids, ' +
      'sAMAccountName, mail, active from userAccountControl and group names, and GET /groups the groups',
    async () => {
      const auth = caller();
      const id = await connector(auth, adConfig());

      const run = await sync(auth, id);

      expect(run).toMatchObject({
        status: 'succeeded',
        stats: { mode: 'full', users_seen: STAFF, users_added: STAFF, groups_seen: 2 },
      });
      const users = await all(auth, `${CONNECTORS}/${id}/users`);
      expect(users).toHaveLength(STAFF);
      const first = users.find((user) => user.user_name === 'person1');
      expect(first).toEqual({
        id: await guidOf(`CN=Person 1,${dc.usersOu}`),
        external_id: null,
        user_name: 'person1',
        display_name: 'Person 1',
        email: 'person1@corp.example',
        active: true,
        groups: ['VPN'],
        department: null,
        manager: null,
        deleted: false,
        deleted_at: null,
      });
      expect(users.find((user) => user.user_name === 'person2')).toMatchObject({
        groups: ['Finance', 'VPN'],
        department: 'Finance',
        manager: await guidOf(`CN=Person 4,${dc.usersOu}`),
      });
      expect(users.find((user) => user.user_name === 'person3')).toMatchObject({
        department: 'Research',
        manager: await guidOf(`CN=Person 1,${dc.usersOu}`),
      });
      expect(users.find((user) => user.user_name === 'person5')?.active).toBe(false);
      const groups = await all(auth, `${CONNECTORS}/${id}/groups`);
      expect(groups.map((group) => [group.display_name, group.member_count])).toEqual([
        ['Finance', 1],
        ['VPN', 2],
      ]);
      expect(groups.find((group) => group.display_name === 'VPN')?.id).toBe(
        await guidOf(`CN=VPN,OU=Groups,${dc.baseDn}`),
      );
    },
  );

  test(
    'When a user changes after a full sync, then the next sync is a delta by uSNChanged (above the ' +
      'highest committed USN the last sync began at) and the mirror shows the change',
    async () => {
      const auth = caller();
      const id = await connector(auth, adConfig());
      expect((await sync(auth, id)).stats.mode).toBe('full');
      const client = await dc.connect();
      try {
        await client.modify(
          `CN=Person 3,${dc.usersOu}`,
          new Change({
            operation: 'replace',
            modification: new Attribute({ type: 'displayName', values: ['Person Three'] }),
          }),
        );
      } finally {
        await client.unbind();
      }

      const delta = await sync(auth, id);

      expect(delta).toMatchObject({ status: 'succeeded', stats: { mode: 'delta', users_seen: 1, users_updated: 1 } });
      expect(delta.stats.delta_since).toEqual(expect.any(String));
      expect(delta.stats.mode_reason).toMatch(/^changes after uSNChanged \d+ of CN=NTDS Settings,/);
      const users = await all(auth, `${CONNECTORS}/${id}/users`);
      expect(users.find((user) => user.user_name === 'person3')).toMatchObject({
        display_name: 'Person Three',
        manager: await guidOf(`CN=Person 1,${dc.usersOu}`),
      });

      // Nothing changed since: the next delta reads nothing.
      expect(await sync(auth, id)).toMatchObject({
        status: 'succeeded',
        stats: { mode: 'delta', users_seen: 0, groups_seen: 0, users_updated: 0 },
      });

      // A membership change touches the group (its uSNChanged), and its members' groups follow.
      const admin = await dc.connect();
      try {
        await admin.modify(
          `CN=Finance,OU=Groups,${dc.baseDn}`,
          new Change({
            operation: 'add',
            modification: new Attribute({ type: 'member', values: [`CN=Person 3,${dc.usersOu}`] }),
          }),
        );
      } finally {
        await admin.unbind();
      }
      expect(await sync(auth, id)).toMatchObject({
        status: 'succeeded',
        stats: { mode: 'delta', groups_seen: 1, users_updated: 1 },
      });
      expect(
        (await all(auth, `${CONNECTORS}/${id}/users`)).find((user) => user.user_name === 'person3')?.groups,
      ).toEqual(['Finance']);
    },
  );

  test("When the last sync read another domain controller's USN, then the next sync is full and says why", async () => {
    const auth = caller();
    const id = await connector(auth, adConfig());
    const first = await sync(auth, id);
    expect(first.stats.mode).toBe('full');
    const stored = await link.db.syncRun.findUniqueOrThrow({ where: { id: first.id } });
    expect(stored.directoryCursor).toMatch(/^\d+@CN=NTDS Settings,CN=DC1,/);
    await link.db.syncRun.update({
      where: { id: first.id },
      data: {
        directoryCursor: `12@CN=NTDS Settings,CN=DC2,CN=Servers,CN=Default-First-Site-Name,CN=Sites,CN=Configuration,${dc.baseDn}`,
      },
    });

    const next = await sync(auth, id);

    expect(next.stats).toMatchObject({
      mode: 'full',
      delta_since: null,
      mode_reason: expect.stringMatching(/CN=DC2,.*CN=DC1,.*uSNChanged/),
    });
    expect(await sync(auth, id)).toMatchObject({ stats: { mode: 'delta' } });
  });

  test('When the bind password is wrong, then the sync fails at once saying credentials_refused, not retried', async () => {
    const auth = caller();
    const id = await connector(auth, { ...adConfig(), bind_password: 'Wrong-Passw0rd!' });
    const run = await sync(auth, id);
    expect(run).toMatchObject({ status: 'failed', attempts: 1 });
    expect(run.error).toMatch(/^credentials_refused: .*config\.bind_password/);
  });

  test('When the domain controller is down, then the sync is retried as directory_unreachable and fails after its attempts saying so', async () => {
    const auth = caller();
    const id = await connector(auth, adConfig());
    await dc.setDown(true);
    try {
      const run = await sync(auth, id);
      expect(run).toMatchObject({ status: 'failed', attempts: 3 });
      expect(run.error).toMatch(/^all 3 attempts failed; the last: directory_unreachable: /);
    } finally {
      await dc.setDown(false);
    }
    expect(await sync(auth, id)).toMatchObject({ status: 'succeeded', stats: { mode: 'full', users_seen: STAFF } });
  }, 60_000);

  test(
    'When users are read with a page size smaller than the directory, then every page ' +
      'holds at most that many and together they hold every user',
    async () => {
      const { url, settings } = ldapSettingsFrom({ ...adConfig() });
      const directory = createLdapDirectory({
        url,
        settings,
        bindPassword: dc.adminPassword,
        outbound: directoryOutboundFromConfig(outboundConfig()),
        pageSize: 2,
      });
      const pages: number[] = [];
      try {
        for await (const page of directory.listUsers()) pages.push(page.length);
      } finally {
        await directory.close();
      }
      expect(pages.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...pages)).toBeLessThanOrEqual(2);
      expect(pages.reduce((sum, n) => sum + n, 0)).toBe(STAFF);
    },
  );
});

describe('ldap syncs: OpenLDAP', () => {
  test(
    'When an OpenLDAP connector is synced, then GET /users lists the people with entryUUID ' +
      'ids and uid, and GET /groups the groupOfNames with their members',
    async () => {
      const auth = caller();
      const id = await connector(auth, slapdConfig());

      const run = await sync(auth, id);

      expect(run).toMatchObject({ status: 'succeeded', stats: { mode: 'full', users_seen: 3, groups_seen: 1 } });
      const users = await all(auth, `${CONNECTORS}/${id}/users`);
      expect(users.map((user) => user.user_name)).toEqual(['olly1', 'olly2', 'olly3']);
      expect(users[0]).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        email: 'olly1@example.org',
        display_name: 'Olly 1',
        active: true,
        groups: ['wiki'],
        department: null,
        manager: null,
      });
      expect(users[1]).toMatchObject({ department: 'Sales', manager: users[2]!.id });
      const groups = await all(auth, `${CONNECTORS}/${id}/groups`);
      expect(groups).toEqual([expect.objectContaining({ display_name: 'wiki', member_count: 1 })]);

      const client = await slapd.connect();
      try {
        await client.modify(
          `uid=olly2,${slapd.peopleOu}`,
          new Change({
            operation: 'replace',
            modification: new Attribute({ type: 'mail', values: ['second@example.org'] }),
          }),
        );
      } finally {
        await client.unbind();
      }
      const delta = await sync(auth, id);
      expect(delta.stats).toMatchObject({ mode: 'delta', mode_reason: expect.stringMatching(/^changes since /) });
      expect((await all(auth, `${CONNECTORS}/${id}/users`)).find((user) => user.user_name === 'olly2')?.email).toBe(
        'second@example.org',
      );
    },
  );
});
