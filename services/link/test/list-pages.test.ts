import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { startLink, type TestLink } from './support/link';
import { startScimDirectory, type ScimDirectory } from './support/scim-directory';

/*
 * Tenants, connectors, sync runs and the mirror: every list's `total` is exact
 * (a counter of list_counts kept by triggers in the writing transaction) after the API's own writes
 * and with each filter, a rejected write leaves every counter as it was, and `after` (keyset
 * paging) walks a list exactly once in its order. Over HTTP, against the real database, with a real
 * job queue and a real SCIM directory for the syncs.
 */

const API = '/api/v1';
let link: TestLink;
let scim: ScimDirectory;

beforeAll(async () => {
  scim = await startScimDirectory();
  scim.setFilterSupported(false);
  const engineering = scim.addGroup('Engineering');
  scim.addGroup('Sales');
  scim.addGroup('Empty');
  for (let i = 0; i < 12; i++)
    engineering.members.push({
      value: scim.addUser({ userName: `user${String(i).padStart(2, '0')}@contoso.example` }).id,
    });
  link = await startLink({ settings: { sync: { pageSize: 5, retryDelayMs: 200 } } });
});
afterAll(async () => {
  await link.close();
  await scim.close();
});

function newCaller() {
  const tenantId = randomUUID();
  return { tenantId, auth: `Bearer ${link.token({ tenant_id: tenantId, scope: 'admin:tenant' })}` };
}

const get = (path: string, auth: string) => request(link.app).get(`${API}${path}`).set('Authorization', auth);
const send = (method: 'post' | 'patch' | 'delete', path: string, auth: string, body?: object) =>
  request(link.app)[method](`${API}${path}`).set('Authorization', auth).send(body);

async function count(sql: string, ...values: unknown[]): Promise<number> {
  const [row] = await link.db.$queryRawUnsafe<{ count: bigint }[]>(sql, ...values);
  return Number(row!.count);
}

/** The list's total as the API answers it (a 200 with a page). */
async function total(path: string, auth: string): Promise<number> {
  const response = await get(`${path}${path.includes('?') ? '&' : '?'}per_page=1`, auth);
  expect({ path, status: response.status }).toEqual({ path, status: 200 });
  return response.body.pagination.total;
}

/** Every counter of `tenantId` (an owner or a connector), to compare before and after a rejected write. */
const counters = (tenantId: string) =>
  link.db.listCount.findMany({
    where: { tenantId },
    orderBy: [{ list: 'asc' }, { dimension: 'asc' }, { value: 'asc' }],
    select: { list: true, dimension: true, value: true, count: true },
  });

const links = (header: string | undefined) =>
  Object.fromEntries([...(header ?? '').matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], m[1]]));

/**
 * Walks `path` by keyset: its first page by number, then `after` its last item, then each Link
 * `next`. Answers every id seen, and checks each keyset page's pagination (no `page`, the exact total).
 */
async function walk(path: string, auth: string, perPage: number): Promise<string[]> {
  const sep = path.includes('?') ? '&' : '?';
  const first = await get(`${path}${sep}per_page=${perPage}`, auth);
  expect(first.status).toBe(200);
  const ids: string[] = first.body.data.map((item: { id: string }) => item.id);
  const expectedTotal = first.body.pagination.total;
  if (ids.length < perPage) return ids;
  let url: string | undefined =
    `${API}${path}${sep}per_page=${perPage}&after=${encodeURIComponent(ids[ids.length - 1]!)}`;
  while (url) {
    const page: request.Response = await request(link.app).get(url).set('Authorization', auth);
    expect({ url, status: page.status }).toEqual({ url, status: 200 });
    expect(page.body.pagination).toEqual({
      per_page: perPage,
      total: expectedTotal,
      total_pages: Math.ceil(expectedTotal / perPage),
    });
    ids.push(...page.body.data.map((item: { id: string }) => item.id));
    const next: string | undefined = links(page.headers['link']).next;
    url = next ? next.replace(/^https?:\/\/[^/]+/, '') : undefined;
  }
  return ids;
}

/** The 400s of `after`: an id of no item of this list, and `after` with `page` above 1. */
async function expectAfterRefused(path: string, auth: string, unknownIds: string[], knownId: string) {
  const sep = path.includes('?') ? '&' : '?';
  for (const query of [
    ...unknownIds.map((id) => `after=${encodeURIComponent(id)}`),
    `page=2&after=${encodeURIComponent(knownId)}`,
  ]) {
    const response = await get(`${path}${sep}${query}`, auth);
    expect({ path, query, status: response.status, type: response.type }).toEqual({
      path,
      query,
      status: 400,
      type: 'application/problem+json',
    });
    expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(['after']);
  }
}

const domain = () => `c${randomBytes(5).toString('hex')}.onmicrosoft.com`;

async function registerTenant(auth: string, body: Record<string, unknown> = {}) {
  const response = await send('post', '/tenants', auth, {
    name: 'Contoso',
    domain: domain(),
    client_id: randomUUID(),
    ...body,
  });
  expect(response.status).toBe(201);
  return response.body as { id: string; domain: string; client_id: string };
}

async function createConnector(auth: string, tenantId: string, enabled = true) {
  const response = await send('post', '/connectors', auth, {
    tenant_id: tenantId,
    type: 'scim',
    name: 'Directory',
    enabled,
    config: { base_url: scim.baseUrl, bearer_token: scim.bearerToken },
  });
  expect(response.status).toBe(201);
  return response.body.id as string;
}

async function syncNow(auth: string, connectorId: string) {
  const started = await send('post', `/connectors/${connectorId}/sync`, auth);
  expect(started.status).toBe(202);
  const deadline = Date.now() + 25_000;
  for (;;) {
    const run = await get(`/connectors/${connectorId}/syncs/${started.body.id}`, auth);
    if (run.body.status === 'succeeded') return run.body;
    if (run.body.status === 'failed' || Date.now() > deadline)
      throw new Error(`sync run ${started.body.id}: ${JSON.stringify(run.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('GET /tenants', () => {
  test('When tenants are registered and suspended through the API, then the total is exact without a filter, by status, by client and by both', async () => {
    const caller = newCaller();
    const clientA = randomUUID();
    const clientB = randomUUID();
    for (let i = 0; i < 5; i++) await registerTenant(caller.auth, { client_id: clientA });
    const suspendedB = await registerTenant(caller.auth, { client_id: clientB, status: 'suspended' });
    const toSuspend = await registerTenant(caller.auth, { client_id: clientB });
    expect((await send('patch', `/tenants/${toSuspend.id}`, caller.auth, { status: 'suspended' })).status).toBe(200);
    expect((await send('patch', `/tenants/${suspendedB.id}`, caller.auth, { name: 'Renamed' })).status).toBe(200);
    await registerTenant(newCaller().auth, { client_id: clientA });

    const stored = (where: string, ...values: unknown[]) =>
      count(
        `SELECT count(*) FROM managed_tenants WHERE owner_tenant_id = $1::uuid ${where}`,
        caller.tenantId,
        ...values,
      );
    const cases: [string, number, number][] = [
      ['/tenants', 7, await stored('')],
      ['/tenants?status=active', 5, await stored(`AND status = 'active'`)],
      ['/tenants?status=suspended', 2, await stored(`AND status = 'suspended'`)],
      [`/tenants?client_id=${clientA}`, 5, await stored('AND client_id = $2::uuid', clientA)],
      [`/tenants?client_id=${clientB}`, 2, await stored('AND client_id = $2::uuid', clientB)],
      [
        `/tenants?client_id=${clientB}&status=suspended`,
        2,
        await stored(`AND client_id = $2::uuid AND status = 'suspended'`, clientB),
      ],
      [`/tenants?client_id=${clientA}&status=suspended`, 0, 0],
    ];
    for (const [path, expected] of cases)
      expect({ path, total: await total(path, caller.auth) }).toEqual({ path, total: expected });
    for (const [path, expected, inDatabase] of cases)
      expect({ path, inDatabase }).toEqual({ path, inDatabase: expected });
  });

  test('When a registration is refused (409 duplicate domain, 400 invalid body), then no counter changes', async () => {
    const caller = newCaller();
    const first = await registerTenant(caller.auth);
    const before = await counters(caller.tenantId);
    expect(before).toContainEqual({ list: 'managed_tenants', dimension: 'all', value: '', count: 1n });

    expect(
      (
        await send('post', '/tenants', caller.auth, {
          name: 'Again',
          domain: first.domain.toUpperCase(),
          client_id: randomUUID(),
        })
      ).status,
    ).toBe(409);
    expect(
      (await send('post', '/tenants', caller.auth, { name: 'Bad', domain: 'nodots', client_id: randomUUID() })).status,
    ).toBe(400);
    expect((await send('patch', `/tenants/${first.id}`, caller.auth, { status: 'archived' })).status).toBe(400);

    expect(await counters(caller.tenantId)).toEqual(before);
    expect(await total('/tenants', caller.auth)).toBe(1);
  });

  test('When a caller follows after from the first page, then every tenant comes exactly once, newest first, with and without a filter', async () => {
    const caller = newCaller();
    const client = randomUUID();
    for (let i = 0; i < 7; i++) await registerTenant(caller.auth, i % 2 ? { client_id: client } : {});
    const newestFirst = async (where: string, ...values: unknown[]) =>
      (
        await link.db.$queryRawUnsafe<{ id: string }[]>(
          `SELECT id::text FROM managed_tenants WHERE owner_tenant_id = $1::uuid ${where} ORDER BY created_at DESC, id DESC`,
          caller.tenantId,
          ...values,
        )
      ).map((r) => r.id);

    expect(await walk('/tenants', caller.auth, 2)).toEqual(await newestFirst(''));
    expect(await walk(`/tenants?client_id=${client}`, caller.auth, 2)).toEqual(
      await newestFirst('AND client_id = $2::uuid', client),
    );
    expect((await newestFirst('')).length).toBe(7);
  });

  test("When after names another owner's tenant or nothing, or comes with page 2, then 400 naming `after`", async () => {
    const caller = newCaller();
    const mine = await registerTenant(caller.auth);
    const theirs = await registerTenant(newCaller().auth);
    await expectAfterRefused('/tenants', caller.auth, [theirs.id, randomUUID()], mine.id);
  });
});

describe('GET /connectors', () => {
  test(
    'When connectors are created, disabled and deleted through the API, then the total is ' +
      'exact by default (enabled), with include_disabled and with tenant_id',
    async () => {
      const caller = newCaller();
      const [a, b] = [await registerTenant(caller.auth), await registerTenant(caller.auth)];
      const a1 = await createConnector(caller.auth, a.id);
      await createConnector(caller.auth, a.id, false);
      const a3 = await createConnector(caller.auth, a.id);
      await createConnector(caller.auth, b.id);
      const b2 = await createConnector(caller.auth, b.id);
      expect((await send('patch', `/connectors/${a1}`, caller.auth, { enabled: false })).status).toBe(200);
      expect((await send('patch', `/connectors/${a3}`, caller.auth, { name: 'Renamed' })).status).toBe(200);
      expect((await send('delete', `/connectors/${b2}`, caller.auth)).status).toBe(204);

      const stored = (where: string, ...values: unknown[]) =>
        count(`SELECT count(*) FROM connectors WHERE owner_tenant_id = $1::uuid ${where}`, caller.tenantId, ...values);
      const cases: [string, number, number][] = [
        ['/connectors', 2, await stored('AND enabled')],
        ['/connectors?include_disabled=true', 4, await stored('')],
        [`/connectors?tenant_id=${a.id}`, 1, await stored('AND enabled AND managed_tenant_id = $2::uuid', a.id)],
        [
          `/connectors?tenant_id=${a.id}&include_disabled=true`,
          3,
          await stored('AND managed_tenant_id = $2::uuid', a.id),
        ],
        [`/connectors?tenant_id=${b.id}`, 1, await stored('AND enabled AND managed_tenant_id = $2::uuid', b.id)],
      ];
      for (const [path, expected] of cases)
        expect({ path, total: await total(path, caller.auth) }).toEqual({ path, total: expected });
      for (const [path, expected, inDatabase] of cases)
        expect({ path, inDatabase }).toEqual({ path, inDatabase: expected });
    },
  );

  test("When a connector is refused (422 not your managed tenant, 400 invalid, 404 another owner's), then no counter changes", async () => {
    const caller = newCaller();
    const tenant = await registerTenant(caller.auth);
    const connectorId = await createConnector(caller.auth, tenant.id);
    const other = newCaller();
    const before = await counters(caller.tenantId);
    expect(before).toContainEqual({ list: 'connectors', dimension: 'enabled', value: 'true', count: 1n });

    const foreignTenant = await registerTenant(other.auth);
    expect(
      (
        await send('post', '/connectors', caller.auth, {
          tenant_id: foreignTenant.id,
          type: 'scim',
          name: 'X',
          config: { base_url: scim.baseUrl, bearer_token: 't' },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await send('post', '/connectors', caller.auth, {
          tenant_id: tenant.id,
          type: 'ldap',
          name: 'X',
          config: { base_url: scim.baseUrl, bearer_token: 't' },
        })
      ).status,
    ).toBe(400);
    expect((await send('patch', `/connectors/${connectorId}`, other.auth, { enabled: false })).status).toBe(404);
    expect((await send('delete', `/connectors/${connectorId}`, other.auth)).status).toBe(404);

    expect(await counters(caller.tenantId)).toEqual(before);
  });

  test('When a caller follows after, then every connector comes exactly once, newest first; unknown after and after with page 2 are 400', async () => {
    const caller = newCaller();
    const tenant = await registerTenant(caller.auth);
    for (let i = 0; i < 5; i++) await createConnector(caller.auth, tenant.id, i !== 2);
    const newestFirst = async (where: string) =>
      (
        await link.db.$queryRawUnsafe<{ id: string }[]>(
          `SELECT id::text FROM connectors WHERE owner_tenant_id = $1::uuid ${where} ORDER BY created_at DESC, id DESC`,
          caller.tenantId,
        )
      ).map((r) => r.id);

    expect(await walk('/connectors', caller.auth, 2)).toEqual(await newestFirst('AND enabled'));
    expect(await walk('/connectors?include_disabled=true', caller.auth, 2)).toEqual(await newestFirst(''));
    const other = newCaller();
    const theirs = await createConnector(other.auth, (await registerTenant(other.auth)).id);
    await expectAfterRefused('/connectors', caller.auth, [theirs, randomUUID()], (await newestFirst(''))[0]!);
  });
});

describe('GET /connectors/{id}/syncs, /users, /groups', () => {
  test(
    "When the API syncs a connector twice, then the runs', users' and groups' totals are " +
      'exact; a refused sync (disabled connector) changes no counter',
    async () => {
      const caller = newCaller();
      const connectorId = await createConnector(caller.auth, (await registerTenant(caller.auth)).id);
      await syncNow(caller.auth, connectorId);
      await syncNow(caller.auth, connectorId);

      const stored = (table: string) =>
        count(`SELECT count(*) FROM ${table} WHERE connector_id = $1::uuid`, connectorId);
      expect(await total(`/connectors/${connectorId}/syncs`, caller.auth)).toBe(2);
      expect(await total(`/connectors/${connectorId}/users`, caller.auth)).toBe(scim.users().length);
      expect(await total(`/connectors/${connectorId}/groups`, caller.auth)).toBe(scim.groups().length);
      expect([await stored('sync_runs'), await stored('directory_users'), await stored('directory_groups')]).toEqual([
        2,
        scim.users().length,
        scim.groups().length,
      ]);

      expect((await send('patch', `/connectors/${connectorId}`, caller.auth, { enabled: false })).status).toBe(200);
      const before = await counters(connectorId);
      expect((await send('post', `/connectors/${connectorId}/sync`, caller.auth)).status).toBe(409);
      expect(await counters(connectorId)).toEqual(before);
      expect(await total(`/connectors/${connectorId}/syncs`, caller.auth)).toBe(2);

      // Deleted with the connector (its runs and mirror by cascade): every counter of it back to 0.
      expect((await send('delete', `/connectors/${connectorId}`, caller.auth)).status).toBe(204);
      expect((await counters(connectorId)).map((row) => [row.list, row.count])).toEqual([
        ['directory_groups', 0n],
        ['directory_users', 0n],
        ['sync_runs', 0n],
      ]);
    },
  );

  test(
    'When a caller follows after through the runs, the users and the groups, then ' +
      'each comes exactly once in its order; an unknown after is 400',
    async () => {
      const caller = newCaller();
      const connectorId = await createConnector(caller.auth, (await registerTenant(caller.auth)).id);
      for (let i = 0; i < 3; i++) await syncNow(caller.auth, connectorId);
      const ordered = async (sql: string) =>
        (await link.db.$queryRawUnsafe<{ id: string }[]>(sql, connectorId)).map((r) => r.id);

      const runs = await ordered(
        `SELECT id::text FROM sync_runs WHERE connector_id = $1::uuid ORDER BY created_at DESC, id DESC`,
      );
      expect(await walk(`/connectors/${connectorId}/syncs`, caller.auth, 2)).toEqual(runs);
      const users = await ordered(
        `SELECT scim_id AS id FROM directory_users WHERE connector_id = $1::uuid ORDER BY user_name, scim_id`,
      );
      expect(users.length).toBe(scim.users().length);
      expect(await walk(`/connectors/${connectorId}/users`, caller.auth, 5)).toEqual(users);
      const groups = await ordered(
        `SELECT scim_id AS id FROM directory_groups WHERE connector_id = $1::uuid ORDER BY display_name, scim_id`,
      );
      expect(await walk(`/connectors/${connectorId}/groups`, caller.auth, 2)).toEqual(groups);

      // Another connector's run, user and group are not items of this connector's lists.
      const other = await createConnector(caller.auth, (await registerTenant(caller.auth)).id);
      const otherRun = await syncNow(caller.auth, other);
      await expectAfterRefused(`/connectors/${connectorId}/syncs`, caller.auth, [otherRun.id, randomUUID()], runs[0]!);
      // The mirror's ids are the directory's SCIM ids: any string, so a non-UUID is a 400 of this list too.
      await expectAfterRefused(
        `/connectors/${connectorId}/users`,
        caller.auth,
        ['no-such-user', randomUUID()],
        users[0]!,
      );
      await expectAfterRefused(`/connectors/${connectorId}/groups`, caller.auth, ['no-such-group'], groups[0]!);
    },
  );
});
