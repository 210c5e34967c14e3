import { randomBytes, randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import request from 'supertest';
import { createTestDatabase } from '@msp/db';
import { createOutbound } from '@msp/outbound';
import { createSecretBox } from '@msp/secrets';
import { MIGRATIONS_DIR } from '../src/db';
import { startLink, type TestLink } from './support/link';
import { startScimDirectory, type ScimDirectory } from './support/scim-directory';

/**
 * Sync runs end to end: link with its real job queue (pg-boss in its test database) against a
 * real SCIM 2.0 directory (SCIMMY) it did not write. Every log line link writes is kept, to prove
 * the directory's bearer token never reaches one.
 */

const CONNECTORS = '/api/v1/connectors';
const USERS = 45;
const logs: string[] = [];
const logStream = new PassThrough().on('data', (chunk) => logs.push(String(chunk)));

let scim: ScimDirectory;
let link: TestLink;
const responses: string[] = [];

beforeAll(async () => {
  scim = await startScimDirectory();
  // Full syncs here (each reads every page); deltas are delta-syncs.test.ts's.
  scim.setFilterSupported(false);
  // 20 per page: the 45 users below take three pages (a directory that sends fewer than asked is
  // covered in scim-client.test.ts), each page compared with the mirror on its own.
  link = await startLink({ logStream, settings: { sync: { pageSize: 20, compareBatchSize: 10, retryDelayMs: 200 } } });
  const engineering = scim.addGroup('Engineering');
  const sales = scim.addGroup('Sales');
  scim.addGroup('Empty');
  for (let i = 0; i < USERS; i++) {
    const user = scim.addUser({ userName: `user${i}@contoso.example`, givenName: `User${i}`, familyName: 'Example' });
    (i % 2 ? engineering : sales).members.push({ value: user.id });
  }
});
afterAll(async () => {
  await link.close();
  await scim.close();
});

function caller(app = link) {
  return `Bearer ${app.token({ tenant_id: randomUUID(), scope: 'admin:tenant' })}`;
}

async function call(app: TestLink, method: 'get' | 'post' | 'patch', path: string, auth: string, body?: object) {
  const response = await request(app.app)[method](path).set('Authorization', auth).send(body);
  responses.push(JSON.stringify(response.headers) + response.text);
  return response;
}

async function connector(app: TestLink, auth: string, config: { base_url?: string; bearer_token?: string } = {}) {
  const tenant = await call(app, 'post', '/api/v1/tenants', auth, {
    name: 'Contoso',
    domain: `c${randomBytes(5).toString('hex')}.example.com`,
    client_id: randomUUID(),
  });
  const created = await call(app, 'post', CONNECTORS, auth, {
    tenant_id: tenant.body.id,
    type: 'scim',
    name: 'Contoso directory',
    config: { base_url: scim.baseUrl, bearer_token: scim.bearerToken, ...config },
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function finished(app: TestLink, auth: string, connectorId: string, runId: string) {
  const deadline = Date.now() + 25_000;
  for (;;) {
    const run = await call(app, 'get', `${CONNECTORS}/${connectorId}/syncs/${runId}`, auth);
    if (run.body.status === 'succeeded' || run.body.status === 'failed') return run.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

async function sync(app: TestLink, auth: string, connectorId: string) {
  const started = await call(app, 'post', `${CONNECTORS}/${connectorId}/sync`, auth);
  expect(started.status).toBe(202);
  return finished(app, auth, connectorId, started.body.id);
}

const usersRequests = () => scim.requests().filter((line) => line.startsWith('GET /scim/v2/Users'));

describe('a sync run', () => {
  test('When the directory spans several SCIM pages, then every user and group is read and the mirror holds them with their groups', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    const before = usersRequests().length;

    const run = await sync(link, auth, connectorId);

    expect(run).toMatchObject({
      status: 'succeeded',
      trigger: 'manual',
      attempts: 1,
      error: null,
      stats: {
        users_seen: USERS,
        users_added: USERS,
        users_updated: 0,
        users_removed: 0,
        groups_seen: 3,
        mode: 'full',
        delta_since: null,
      },
    });
    expect(run.stats.mode_reason).toContain('does not advertise filter support');
    expect(Date.parse(run.finished_at)).toBeGreaterThanOrEqual(Date.parse(run.started_at));
    expect(usersRequests().length - before).toBe(3);

    const page = await call(link, 'get', `${CONNECTORS}/${connectorId}/users?per_page=100`, auth);
    expect(page.status).toBe(200);
    expect(page.body.pagination.total).toBe(USERS);
    const ada = scim.users().find((user) => user.userName === 'user1@contoso.example')!;
    expect(page.body.data.find((user: any) => user.user_name === 'user1@contoso.example')).toEqual({
      id: ada.id,
      external_id: null,
      user_name: 'user1@contoso.example',
      display_name: 'User1 Example',
      email: 'user1@contoso.example',
      active: true,
      groups: ['Engineering'],
      department: null,
      manager: null,
      deleted: false,
      deleted_at: null,
    });
    expect(await link.db.directoryUser.count({ where: { connectorId } })).toBe(USERS);
  });

  test('When the directory changed since the last sync, then the run counts what was added, updated and removed', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    await sync(link, auth, connectorId);
    const added = scim.addUser({ userName: `new-${randomBytes(3).toString('hex')}@contoso.example` });
    const changed = scim.users().find((user) => user.userName === 'user2@contoso.example')!;
    changed.active = false;

    const run = await sync(link, auth, connectorId);
    expect(run.stats).toMatchObject({
      users_seen: USERS + 1,
      users_added: 1,
      users_updated: 1,
      users_removed: 0,
      groups_seen: 3,
      mode: 'full',
    });
    expect((await link.db.directoryUser.findFirstOrThrow({ where: { connectorId, scimId: changed.id } })).active).toBe(
      false,
    );

    // Removed through the directory's own SCIM API.
    const removedId = added.id;
    await request(scim.baseUrl.replace('/scim/v2', ''))
      .delete(`/scim/v2/Users/${removedId}`)
      .set('Authorization', `Bearer ${scim.bearerToken}`)
      .expect(204);
    changed.active = true;

    const third = await sync(link, auth, connectorId);
    expect(third.stats).toMatchObject({
      users_seen: USERS,
      users_added: 0,
      users_updated: 1,
      users_removed: 1,
      groups_seen: 3,
      mode: 'full',
    });
    // Kept in the mirror, marked deleted.
    const removed = await link.db.directoryUser.findFirstOrThrow({ where: { connectorId, scimId: removedId } });
    expect(removed.deletedAt).not.toBeNull();
  });

  test('When a user is listed on two pages and others are gone or changed group, then each counts once and the mirror follows', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    await sync(link, auth, connectorId);
    const listed = scim.users();
    const sales = scim.groups().find((g) => g.displayName === 'Sales')!;
    const engineering = scim.groups().find((g) => g.displayName === 'Engineering')!;
    // One user moves to the other group (its row differs in its groups alone), another leaves.
    const regrouped = listed[30]!;
    const gone = scim.addUser({ userName: `gone-${randomBytes(3).toString('hex')}@contoso.example` });
    await sync(link, auth, connectorId);
    await request(scim.baseUrl.replace('/scim/v2', ''))
      .delete(`/scim/v2/Users/${gone.id}`)
      .set('Authorization', `Bearer ${scim.bearerToken}`)
      .expect(204);
    const moveTo = (to: typeof sales, from: typeof sales) => {
      from.members.splice(
        from.members.findIndex((m) => m.value === regrouped.id),
        1,
      );
      to.members.push({ value: regrouped.id });
    };
    const inSales = sales.members.some((m) => m.value === regrouped.id);
    const [from, to] = inSales ? [sales, engineering] : [engineering, sales];
    moveTo(to, from);
    // A user created while the sync pages through the users, listed first: the second page starts
    // one user earlier, so the first page's last user is listed again.
    let early: { id: string } | undefined;
    scim.beforePage(/\/Users$/, 21, () => {
      early = scim.addFirstUser({ userName: `early-${randomBytes(3).toString('hex')}@contoso.example` });
    });

    const run = await sync(link, auth, connectorId);

    expect(early).toBeDefined();
    expect(run.stats).toMatchObject({
      users_seen: USERS,
      users_added: 0,
      users_updated: 1,
      users_removed: 1,
      groups_seen: 3,
      mode: 'full',
    });
    const row = (id: string) => link.db.directoryUser.findFirst({ where: { connectorId, scimId: id } });
    expect((await row(gone.id))?.deletedAt).not.toBeNull();
    expect(await row(regrouped.id)).toMatchObject({ groups: [to.displayName], deletedAt: null });
    // Not listed by this run (it began after its first page): the next run adds it.
    expect(await row(early!.id)).toBeNull();
    expect((await sync(link, auth, connectorId)).stats).toMatchObject({ users_seen: USERS + 1, users_added: 1 });
    // The directory as the other tests know it.
    await request(scim.baseUrl.replace('/scim/v2', ''))
      .delete(`/scim/v2/Users/${early!.id}`)
      .set('Authorization', `Bearer ${scim.bearerToken}`)
      .expect(204);
    moveTo(from, to);
  });

  test('When the directory fails twice with 503 and then answers, then the run succeeds on its third attempt', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    scim.failNext('GET', /^\/scim\/v2\/Users$/, 503, 2);

    const run = await sync(link, auth, connectorId);

    expect(run).toMatchObject({ status: 'succeeded', attempts: 3, error: null, stats: { users_seen: USERS } });
  });

  test('When the directory answers 429 with Retry-After: 2, then the next attempt waits at least that long and the run succeeds', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    scim.failNext('GET', /^\/scim\/v2\/Users$/, 429, 1, { 'Retry-After': '2' });

    const run = await sync(link, auth, connectorId);

    expect(run).toMatchObject({ status: 'succeeded', attempts: 2, error: null });
    // The backoff of this link is 200 ms; only the directory's Retry-After explains a longer wait.
    expect(Date.parse(run.finished_at) - Date.parse(run.started_at)).toBeGreaterThanOrEqual(2000);
  });

  test('When the directory keeps failing with 5xx, then the run fails after 3 attempts and says so', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    scim.failNext('GET', /^\/scim\/v2\/Users$/, 502, 3);

    const run = await sync(link, auth, connectorId);

    expect(run).toMatchObject({ status: 'failed', attempts: 3 });
    expect(run.error).toContain('all 3 attempts failed');
    expect(run.error).toContain('502');
    expect(await link.db.syncRun.count({ where: { openConnectorId: connectorId } })).toBe(0);
  });

  test('When the directory refuses the token with 401, then the run fails at once, naming the bearer token to fix but not holding it', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth, { bearer_token: `wrong-${scim.bearerToken}` });

    const run = await sync(link, auth, connectorId);

    expect(run).toMatchObject({ status: 'failed', attempts: 1, stats: { users_seen: 0 } });
    expect(run.error).toContain('401');
    expect(run.error).toContain('bearer_token');
    expect(run.error).not.toContain(scim.bearerToken);
  });

  test('When a run finishes, then the connector can be synced again and deleted', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    await sync(link, auth, connectorId);
    const list = await call(link, 'get', `${CONNECTORS}/${connectorId}/syncs`, auth);
    expect(list.body.data).toHaveLength(1);
    expect((await request(link.app).delete(`${CONNECTORS}/${connectorId}`).set('Authorization', auth)).status).toBe(
      204,
    );
    expect(await link.db.directoryUser.count({ where: { connectorId } })).toBe(0);
  });
});

describe('GET /connectors/:id/health', () => {
  test('When runs succeed and fail, then health goes unknown → healthy → degraded → failing → healthy, and disabled when disabled', async () => {
    const auth = caller();
    const connectorId = await connector(link, auth);
    const health = async () => (await call(link, 'get', `${CONNECTORS}/${connectorId}/health`, auth)).body;

    const unknown = await health();
    expect(unknown).toEqual({
      status: 'unknown',
      last_run: null,
      last_success_at: null,
      consecutive_failures: 0,
      checked_at: expect.any(String),
    });

    const ok = await sync(link, auth, connectorId);
    expect(await health()).toMatchObject({
      status: 'healthy',
      last_run: { id: ok.id, status: 'succeeded', finished_at: ok.finished_at },
      last_success_at: ok.finished_at,
      consecutive_failures: 0,
    });

    const statuses: string[] = [];
    for (let i = 0; i < 3; i++) {
      scim.failNext('GET', /^\/scim\/v2\/Users$/, 401, 1);
      const failed = await sync(link, auth, connectorId);
      expect(failed.status).toBe('failed');
      const now = await health();
      expect(now.last_run).toEqual({ id: failed.id, status: 'failed', finished_at: failed.finished_at });
      expect(now.last_success_at).toBe(ok.finished_at);
      expect(now.consecutive_failures).toBe(i + 1);
      statuses.push(now.status);
    }
    expect(statuses).toEqual(['degraded', 'degraded', 'failing']);

    const again = await sync(link, auth, connectorId);
    expect(await health()).toMatchObject({
      status: 'healthy',
      consecutive_failures: 0,
      last_success_at: again.finished_at,
    });

    await call(link, 'patch', `${CONNECTORS}/${connectorId}`, auth, { enabled: false });
    expect((await health()).status).toBe('disabled');
    expect((await call(link, 'get', `${CONNECTORS}/${connectorId}/health`, caller())).status).toBe(404);
  });
});

describe('the schedule, production safety and restarts', () => {
  test(
    'When SYNC_INTERVAL_MINUTES passes, then every enabled connector gets a run with ' +
      'trigger schedule, disabled ones and those of a suspended tenant none',
    async () => {
      const scheduled = await startLink({ settings: { syncIntervalMs: 1500, sync: { pageSize: 50 } } });
      try {
        const auth = caller(scheduled);
        const enabled = await connector(scheduled, auth);
        const disabled = await connector(scheduled, auth);
        await call(scheduled, 'patch', `${CONNECTORS}/${disabled}`, auth, { enabled: false });
        const ofSuspended = await connector(scheduled, auth);
        const suspendedTenant = (await call(scheduled, 'get', `${CONNECTORS}/${ofSuspended}`, auth)).body.tenant_id;
        expect(
          (await call(scheduled, 'patch', `/api/v1/tenants/${suspendedTenant}`, auth, { status: 'suspended' })).status,
        ).toBe(200);

        const deadline = Date.now() + 20_000;
        let runs: any[] = [];
        while (Date.now() < deadline) {
          runs = (await call(scheduled, 'get', `${CONNECTORS}/${enabled}/syncs`, auth)).body.data;
          if (runs.some((run) => run.status === 'succeeded')) break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(runs.find((run) => run.status === 'succeeded')).toMatchObject({
          trigger: 'schedule',
          stats: { users_seen: expect.any(Number) },
        });
        expect((await call(scheduled, 'get', `${CONNECTORS}/${disabled}/syncs`, auth)).body.data).toEqual([]);
        expect((await call(scheduled, 'get', `${CONNECTORS}/${ofSuspended}/syncs`, auth)).body.data).toEqual([]);
      } finally {
        await scheduled.close();
      }
    },
  );

  test(
    'When in production a directory name later resolves to a loopback address (DNS ' +
      'rebinding), then the run fails at once naming OUTBOUND_ALLOWLIST',
    async () => {
      // The name resolves to a public address when the connector is created, to loopback afterwards.
      let lookups = 0;
      const lookup = async () => (lookups++ === 0 ? ['93.184.215.14'] : ['127.0.0.1']);
      const production = await startLink({ outbound: createOutbound({ timeoutMs: 5000, lookup }) });
      try {
        const auth = caller(production);
        const connectorId = await connector(production, auth, {
          base_url: scim.baseUrl.replace('127.0.0.1', 'directory.contoso.example'),
        });
        const before = scim.requests().length;
        const run = await sync(production, auth, connectorId);
        expect(run).toMatchObject({ status: 'failed', attempts: 1 });
        expect(run.error).toContain('resolved to 127.0.0.1, a loopback address');
        expect(run.error).toContain('OUTBOUND_ALLOWLIST');
        expect(scim.requests().length).toBe(before);
      } finally {
        await production.close();
      }
    },
  );

  test('When link stops in the middle of a run and starts again, then the run is retried and finishes, recording both attempts', async () => {
    const database = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR });
    // The same CONNECTOR_ENCRYPTION_KEY across the restart, as a deployment keeps it.
    const encryptionKey = randomBytes(32);
    const first = await startLink({ databaseUrl: database.url, workers: true, logStream, encryptionKey });
    let second: TestLink | undefined;
    try {
      const tenantId = randomUUID();
      const authOf = (app: TestLink) => `Bearer ${app.token({ tenant_id: tenantId, scope: 'admin:tenant' })}`;
      const connectorId = await connector(first, authOf(first));
      const release = scim.hold('GET', /^\/scim\/v2\/Users$/);
      const started = await call(first, 'post', `${CONNECTORS}/${connectorId}/sync`, authOf(first));
      const runId = started.body.id as string;
      const deadline = Date.now() + 15_000;
      while ((await first.db.syncRun.findUniqueOrThrow({ where: { id: runId } })).status !== 'running') {
        if (Date.now() > deadline) throw new Error('the run never started');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      await first.close();
      release();
      second = await startLink({ databaseUrl: database.url, workers: true, logStream, encryptionKey });

      const run = await finished(second, authOf(second), connectorId, runId);
      expect(run).toMatchObject({ status: 'succeeded', stats: { users_seen: expect.any(Number) } });
      expect(run.attempts).toBeGreaterThanOrEqual(2);
      expect(run.error).toBeNull();
    } finally {
      await second?.close();
      await database.drop();
    }
  });
});

describe('an expired job', () => {
  test('When a sync job outlives its expiry, then pg-boss fails it, the run says why and is retried, and it still finishes', async () => {
    const expiring = await startLink({ logStream, settings: { sync: { jobExpireSeconds: 2, retryDelayMs: 100 } } });
    try {
      const auth = caller(expiring);
      const connectorId = await connector(expiring, auth);
      const release = scim.hold('GET', /^\/scim\/v2\/Users$/);
      const started = await call(expiring, 'post', `${CONNECTORS}/${connectorId}/sync`, auth);
      const runId = started.body.id as string;
      const deadline = Date.now() + 20_000;
      let run = await expiring.db.syncRun.findUniqueOrThrow({ where: { id: runId } });
      while (run.attempts < 2) {
        if (Date.now() > deadline) throw new Error(`the expired job was not retried: ${JSON.stringify(run)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        run = await expiring.db.syncRun.findUniqueOrThrow({ where: { id: runId } });
      }
      expect(run.error).toContain('attempt 1 of 3 failed');
      expect(run.error).toContain('expired');
      release();

      const done = await finished(expiring, auth, connectorId, runId);
      expect(done).toMatchObject({ status: 'succeeded', error: null, stats: { users_seen: expect.any(Number) } });
      expect(done.attempts).toBeGreaterThanOrEqual(2);
    } finally {
      await expiring.close();
    }
  });
});

describe('a token link can no longer open', () => {
  test('When the bearer token was sealed under another key, then the sync run fails at once saying to set bearer_token again', async () => {
    const auth = caller();
    const id = await connector(link, auth);
    const otherKey = createSecretBox(randomBytes(32));
    await link.db.connector.update({ where: { id }, data: { bearerTokenEncrypted: otherKey.seal(scim.bearerToken) } });
    expect(await sync(link, auth, id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      error:
        "the connector's bearer token cannot be decrypted (was CONNECTOR_ENCRYPTION_KEY changed?); " +
        'set it again with PATCH config.bearer_token',
    });
  });
});

describe('the bearer token', () => {
  test("When everything above ran, then no response and no log line held the directory's bearer token", () => {
    expect(responses.length).toBeGreaterThan(20);
    expect(logs.length).toBeGreaterThan(0);
    for (const text of [...responses, ...logs]) expect(text).not.toContain(scim.bearerToken);
  });
});
