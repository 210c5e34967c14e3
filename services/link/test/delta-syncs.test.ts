import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestDatabase } from '@msp/db';
import { MIGRATIONS_DIR } from '../src/db';
import { startLink, type TestLink } from './support/link';
import { startScimDirectory, type ScimDirectory } from './support/scim-directory';

/**
 * Delta syncs against a real SCIM 2.0 directory (SCIMMY) that filters on `meta.lastModified`:
 * only what changed since the last successful run began is asked for, a full sync comes at least
 * every FULL_SYNC_INTERVAL_HOURS and marks users no longer there deleted, and directories that do
 * not filter (or refuse the filter) get full syncs that say why. The directory's users and groups
 * are backdated an hour, so a delta's 60 s safety margin does not reach them.
 */

const CONNECTORS = '/api/v1/connectors';
const USERS = 30;
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

let scim: ScimDirectory;
let link: TestLink;

beforeAll(async () => {
  scim = await startScimDirectory();
  scim.setFilterSupported(true);
  // 20 per page: the 30 users take two pages.
  link = await startLink({ settings: { sync: { pageSize: 20 } } });
  const anHourAgo = new Date(Date.now() - 3600_000);
  const engineering = scim.addGroup('Engineering', anHourAgo);
  const sales = scim.addGroup('Sales', anHourAgo);
  scim.addGroup('Empty', anHourAgo);
  for (let i = 0; i < USERS; i++) {
    const user = scim.addUser({
      userName: `user${i}@fabrikam.example`,
      givenName: `User${i}`,
      familyName: 'Example',
      lastModified: anHourAgo,
    });
    (i % 2 ? engineering : sales).members.push({ value: user.id });
  }
});
afterAll(async () => {
  await link.close();
  await scim.close();
});

const caller = (app = link) => `Bearer ${app.token({ tenant_id: randomUUID(), scope: 'admin:tenant' })}`;

async function connector(app: TestLink, auth: string) {
  const tenant = await request(app.app)
    .post('/api/v1/tenants')
    .set('Authorization', auth)
    .send({ name: 'Fabrikam', domain: `f${randomBytes(5).toString('hex')}.example.com`, client_id: randomUUID() });
  const created = await request(app.app)
    .post(CONNECTORS)
    .set('Authorization', auth)
    .send({
      tenant_id: tenant.body.id,
      type: 'scim',
      name: 'Fabrikam directory',
      config: { base_url: scim.baseUrl, bearer_token: scim.bearerToken },
    });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function sync(app: TestLink, auth: string, connectorId: string) {
  const started = await request(app.app).post(`${CONNECTORS}/${connectorId}/sync`).set('Authorization', auth);
  expect(started.status).toBe(202);
  const deadline = Date.now() + 25_000;
  for (;;) {
    const run = await request(app.app)
      .get(`${CONNECTORS}/${connectorId}/syncs/${started.body.id}`)
      .set('Authorization', auth);
    if (run.body.status === 'succeeded' || run.body.status === 'failed') return run.body;
    if (Date.now() > deadline) throw new Error(`run ${started.body.id} still ${run.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Changes a resource through the directory's own SCIM API (so its meta.lastModified moves). */
async function patch(resource: 'Users' | 'Groups', id: string, operations: object[]) {
  await request(scim.baseUrl.replace('/scim/v2', ''))
    .patch(`/scim/v2/${resource}/${id}`)
    .set('Authorization', `Bearer ${scim.bearerToken}`)
    .set('Content-Type', 'application/scim+json')
    .send(JSON.stringify({ schemas: [PATCH_OP], Operations: operations }))
    .expect(200);
}

async function mirror(app: TestLink, auth: string, connectorId: string, what: 'users' | 'groups') {
  const page = await request(app.app)
    .get(`${CONNECTORS}/${connectorId}/${what}?per_page=100`)
    .set('Authorization', auth);
  expect(page.status).toBe(200);
  return page.body.data as any[];
}

const userNamed = (userName: string) => scim.users().find((user) => user.userName === userName)!;
const usersAsked = (from: number) =>
  scim
    .requestLog()
    .slice(from)
    .filter((line) => line.startsWith('GET /scim/v2/Users'));

describe('a delta sync', () => {
  test(
    'When two users changed since the last sync, then the run is a delta that asks the ' +
      'directory for changes since it began and fetches exactly those two',
    async () => {
      const auth = caller();
      const connectorId = await connector(link, auth);
      const first = await sync(link, auth, connectorId);
      expect(first).toMatchObject({
        status: 'succeeded',
        stats: { mode: 'full', users_seen: USERS, users_added: USERS, groups_seen: 3, delta_since: null },
      });
      expect(first.stats.mode_reason).toContain('no earlier successful full sync');

      const ada = userNamed('user3@fabrikam.example');
      const bob = userNamed('user4@fabrikam.example');
      await patch('Users', ada.id, [{ op: 'replace', path: 'displayName', value: 'Ada Lovelace' }]);
      await patch('Users', bob.id, [{ op: 'replace', path: 'active', value: false }]);
      const from = scim.requestLog().length;

      const second = await sync(link, auth, connectorId);

      expect(second).toMatchObject({
        status: 'succeeded',
        stats: { mode: 'delta', users_seen: 2, users_added: 0, users_updated: 2, users_removed: 0, groups_seen: 0 },
      });
      // The bound: the first run's start by the directory's clock, less the 60 s margin.
      const since = Date.parse(second.stats.delta_since);
      expect(since).toBeLessThanOrEqual(Date.parse(first.started_at) - 60_000 + 1000);
      expect(since).toBeGreaterThan(Date.parse(first.started_at) - 60_000 - 5000);
      const asked = usersAsked(from);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain(`filter=meta.lastModified gt "${second.stats.delta_since}"`);
      expect(scim.requestLog().slice(from)).toContain('GET /scim/v2/ServiceProviderConfig');

      const users = await mirror(link, auth, connectorId, 'users');
      expect(users).toHaveLength(USERS);
      expect(users.find((user) => user.id === ada.id)).toMatchObject({
        display_name: 'Ada Lovelace',
        active: true,
        groups: ['Engineering'],
        deleted: false,
        deleted_at: null,
      });
      expect(users.find((user) => user.id === bob.id)).toMatchObject({ active: false, groups: ['Sales'] });
    },
  );

  test("When a group gained a member since the last sync, then the delta updates its member count and the member's groups", async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    await sync(link, auth, connectorId);
    const empty = scim.groups().find((group) => group.displayName === 'Empty')!;
    const carol = userNamed('user5@fabrikam.example');
    await patch('Groups', empty.id, [{ op: 'add', path: 'members', value: [{ value: carol.id }] }]);

    const run = await sync(link, auth, connectorId);

    expect(run.stats).toMatchObject({ mode: 'delta', groups_seen: 1, users_updated: 1 });
    expect((await mirror(link, auth, connectorId, 'groups')).find((group) => group.id === empty.id)).toMatchObject({
      display_name: 'Empty',
      member_count: 1,
    });
    expect((await mirror(link, auth, connectorId, 'users')).find((user) => user.id === carol.id).groups).toEqual([
      'Empty',
      'Engineering',
    ]);
  });
});

describe('full syncs', () => {
  test(
    'When FULL_SYNC_INTERVAL_HOURS has passed since the last full sync, then the run is full ' +
      'and marks a user deleted from the directory deleted in the mirror',
    async () => {
      // One database, two links in turn: the first with the default 24 h interval (its second run is
      // surely a delta), then the same link restarted with a 1 s interval.
      const database = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR });
      const encryptionKey = randomBytes(32);
      const tenantId = randomUUID();
      const authOf = (app: TestLink) => `Bearer ${app.token({ tenant_id: tenantId, scope: 'admin:tenant' })}`;
      let daily: TestLink | undefined = await startLink({
        databaseUrl: database.url,
        workers: true,
        encryptionKey,
        settings: { sync: { pageSize: 20 } },
      });
      let hourly: TestLink | undefined;
      try {
        const gone = scim.addUser({
          userName: `gone-${randomBytes(3).toString('hex')}@fabrikam.example`,
          lastModified: new Date(Date.now() - 3600_000),
        });
        const connectorId = await connector(daily, authOf(daily));
        expect((await sync(daily, authOf(daily), connectorId)).stats.mode).toBe('full');
        await request(scim.baseUrl.replace('/scim/v2', ''))
          .delete(`/scim/v2/Users/${gone.id}`)
          .set('Authorization', `Bearer ${scim.bearerToken}`)
          .expect(204);

        const delta = await sync(daily, authOf(daily), connectorId);
        expect(delta.stats).toMatchObject({ mode: 'delta', users_removed: 0 });
        expect(
          (await mirror(daily, authOf(daily), connectorId, 'users')).find((user) => user.id === gone.id),
        ).toMatchObject({ deleted: false });
        await daily.close();
        daily = undefined;

        // 1 s: an interval in hours would make this test a day long. The full run above began more than 1 s ago.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        hourly = await startLink({
          databaseUrl: database.url,
          workers: true,
          encryptionKey,
          settings: { sync: { pageSize: 20, fullSyncIntervalMs: 1000 } },
        });
        const full = await sync(hourly, authOf(hourly), connectorId);

        expect(full.stats).toMatchObject({
          mode: 'full',
          users_seen: scim.users().length,
          users_removed: 1,
          users_added: 0,
          delta_since: null,
        });
        expect(full.stats.mode_reason).toContain('FULL_SYNC_INTERVAL_HOURS');
        const marked = (await mirror(hourly, authOf(hourly), connectorId, 'users')).find((user) => user.id === gone.id);
        expect(marked).toMatchObject({ user_name: gone.userName, deleted: true });
        expect(Date.parse(marked.deleted_at)).toBeGreaterThanOrEqual(Date.parse(full.started_at));
      } finally {
        await daily?.close();
        await hourly?.close();
        await database.drop();
      }
    },
  );

  test('When the directory does not advertise filter support, then every run is full, says why, and asks for no filter', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    scim.setFilterSupported(false);
    try {
      await sync(link, auth, connectorId);
      const from = scim.requestLog().length;
      const run = await sync(link, auth, connectorId);
      expect(run).toMatchObject({
        status: 'succeeded',
        stats: { mode: 'full', users_seen: scim.users().length, delta_since: null },
      });
      expect(run.stats.mode_reason).toContain('does not advertise filter support');
      expect(usersAsked(from).length).toBeGreaterThan(0);
      expect(usersAsked(from).filter((line) => line.includes('filter='))).toEqual([]);
    } finally {
      scim.setFilterSupported(true);
    }
  });

  test("When the directory answers the delta's filter with 400 invalidFilter, then the run falls back to a full sync and says why", async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    await sync(link, auth, connectorId);
    scim.refuseFilters(/meta\.lastModified/);
    try {
      const from = scim.requestLog().length;
      const run = await sync(link, auth, connectorId);
      expect(run).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        error: null,
        stats: { mode: 'full', users_seen: scim.users().length, delta_since: null },
      });
      expect(run.stats.mode_reason).toContain('invalidFilter');
      const asked = usersAsked(from);
      expect(asked[0]).toContain('filter=meta.lastModified gt');
      expect(asked.slice(1).length).toBeGreaterThan(0);
      expect(asked.slice(1).filter((line) => line.includes('filter='))).toEqual([]);
    } finally {
      scim.refuseFilters(null);
    }
  });
});

describe('GET /connectors/:id/groups', () => {
  test('When a connector was synced, then its groups are listed with member counts, paged like every list', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    await sync(link, auth, connectorId);

    const first = await request(link.app)
      .get(`${CONNECTORS}/${connectorId}/groups?per_page=2`)
      .set('Authorization', auth);

    expect(first.status).toBe(200);
    expect(first.body.pagination).toEqual({ page: 1, per_page: 2, total: 3, total_pages: 2 });
    expect(first.headers.link).toContain('rel="next"');
    expect(first.headers.etag).toBeDefined();
    const second = await request(link.app)
      .get(`${CONNECTORS}/${connectorId}/groups?per_page=2&page=2`)
      .set('Authorization', auth);
    const groups = [...first.body.data, ...second.body.data];
    expect(groups.map((group) => group.display_name)).toEqual(['Empty', 'Engineering', 'Sales']);
    for (const group of groups) {
      const inDirectory = scim.groups().find((g) => g.id === group.id)!;
      expect(group).toEqual({
        id: inDirectory.id,
        display_name: inDirectory.displayName,
        member_count: inDirectory.members.length,
        synced_at: expect.any(String),
      });
    }
    expect(groups.find((group) => group.display_name === 'Engineering').member_count).toBeGreaterThanOrEqual(USERS / 2);

    const again = await request(link.app)
      .get(`${CONNECTORS}/${connectorId}/groups?per_page=2`)
      .set('Authorization', auth)
      .set('If-None-Match', String(first.headers.etag));
    expect(again.status).toBe(304);
  });

  test("When the connector is another tenant's, or the page is out of range, then 404 and 400", async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    const other = await request(link.app).get(`${CONNECTORS}/${connectorId}/groups`).set('Authorization', caller());
    expect(other.status).toBe(404);
    const bad = await request(link.app)
      .get(`${CONNECTORS}/${connectorId}/groups?per_page=101`)
      .set('Authorization', auth);
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    const none = await request(link.app).get(`${CONNECTORS}/${connectorId}/groups`);
    expect(none.status).toBe(401);
  });
});
