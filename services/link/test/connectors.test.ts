import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestDatabase } from '@msp/db';
import { createOutbound } from '@msp/outbound';
import { MIGRATIONS_DIR } from '../src/db';
import { startLink, type TestLink } from './support/link';

const CONNECTORS = '/api/v1/connectors';
const TOKEN = `scim-secret-${randomBytes(12).toString('hex')}`;
const KEY = randomBytes(32);

let link: TestLink;

// No workers: a sync run stays queued, so the rules about open runs can be seen without timing.
beforeAll(async () => {
  link = await startLink({ workers: false, encryptionKey: KEY });
});
afterAll(() => link.close());

function newCaller(scope = 'admin:tenant') {
  const tenantId = randomUUID();
  return { tenantId, auth: `Bearer ${link.token({ tenant_id: tenantId, scope })}` };
}

async function managedTenant(auth: string) {
  const response = await request(link.app)
    .post('/api/v1/tenants')
    .set('Authorization', auth)
    .send({ name: 'Contoso', domain: `c${randomBytes(5).toString('hex')}.example.com`, client_id: randomUUID() });
  expect(response.status).toBe(201);
  return response.body.id as string;
}

function connectorInput(tenantId: string, overrides: Record<string, unknown> = {}) {
  return {
    tenant_id: tenantId,
    type: 'scim',
    name: 'Contoso Entra ID',
    config: { base_url: 'https://scim.contoso.example/scim/v2', bearer_token: TOKEN },
    ...overrides,
  };
}

async function create(auth: string, tenantId: string, overrides: Record<string, unknown> = {}) {
  const response = await request(link.app)
    .post(CONNECTORS)
    .set('Authorization', auth)
    .send(connectorInput(tenantId, overrides));
  expect(response.status).toBe(201);
  return response.body as { id: string; enabled: boolean };
}

function expectProblem(response: request.Response, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(JSON.stringify(response.body)).not.toContain(TOKEN);
}

describe('POST /connectors', () => {
  test('When a SCIM connector is created, then it answers 201 with Location, bearer_token_set and never the token; the token is stored encrypted', async () => {
    const caller = newCaller();
    const tenantId = await managedTenant(caller.auth);

    const response = await request(link.app)
      .post(CONNECTORS)
      .set('Authorization', caller.auth)
      .send(connectorInput(tenantId));

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${CONNECTORS}/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant_id: tenantId,
      type: 'scim',
      name: 'Contoso Entra ID',
      enabled: true,
      config: { base_url: 'https://scim.contoso.example/scim/v2', bearer_token_set: true },
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(JSON.stringify(response.body)).not.toContain(TOKEN);
    const stored = await link.db.connector.findUniqueOrThrow({ where: { id: response.body.id } });
    expect(stored.ownerTenantId).toBe(caller.tenantId);
    expect(stored.bearerTokenEncrypted).not.toContain(TOKEN);
    expect(stored.bearerTokenEncrypted).toMatch(/^v1\./);
    const rows = await link.db.$queryRaw<
      { row: string }[]
    >`SELECT row_to_json(c)::text AS row FROM connectors c WHERE id = ${response.body.id}::uuid`;
    expect(rows[0]!.row).not.toContain(TOKEN);
  });

  test('When enabled: false is sent, then the connector is created disabled', async () => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth), { enabled: false });
    expect(connector.enabled).toBe(false);
  });

  test('When tenant_id is not a managed tenant of the caller, then it answers 422 naming tenant_id and stores nothing', async () => {
    const owner = newCaller();
    const other = newCaller();
    const foreign = await managedTenant(other.auth);

    for (const tenantId of [foreign, randomUUID()]) {
      const response = await request(link.app)
        .post(CONNECTORS)
        .set('Authorization', owner.auth)
        .send(connectorInput(tenantId));
      expectProblem(response, 422);
      expect(response.body.errors).toEqual([{ field: 'tenant_id', message: expect.any(String) }]);
    }
    expect(await link.db.connector.count({ where: { ownerTenantId: owner.tenantId } })).toBe(0);
  });

  test.each([
    ['an unknown type', { type: 'ldap' }],
    ['a base_url that is not http(s)', { config: { base_url: 'ftp://scim.example.com/v2', bearer_token: TOKEN } }],
    ['a base_url that is no URL', { config: { base_url: 'scim.example.com', bearer_token: TOKEN } }],
    ['no config', { config: undefined }],
    ['no bearer_token', { config: { base_url: 'https://scim.example.com/v2' } }],
    ['an empty bearer_token', { config: { base_url: 'https://scim.example.com/v2', bearer_token: '' } }],
    ['an unknown field', { colour: 'red' }],
    ['no name', { name: undefined }],
  ])('When the body has %s, then it answers 400 and stores nothing', async (_, overrides) => {
    const caller = newCaller();
    const tenantId = await managedTenant(caller.auth);
    const response = await request(link.app)
      .post(CONNECTORS)
      .set('Authorization', caller.auth)
      .send(connectorInput(tenantId, overrides));
    expectProblem(response, 400);
    expect(await link.db.connector.count({ where: { ownerTenantId: caller.tenantId } })).toBe(0);
  });

  test('When the token lacks admin:tenant, then it answers 403 and stores nothing', async () => {
    const admin = newCaller();
    const tenantId = await managedTenant(admin.auth);
    const reader = { auth: `Bearer ${link.token({ tenant_id: admin.tenantId, scope: 'read:tickets' })}` };
    const response = await request(link.app)
      .post(CONNECTORS)
      .set('Authorization', reader.auth)
      .send(connectorInput(tenantId));
    expect(response.status).toBe(403);
    expect(await link.db.connector.count({ where: { ownerTenantId: admin.tenantId } })).toBe(0);
  });
});

describe('GET /connectors', () => {
  test('When listed, then only enabled connectors of the caller come, newest first; include_disabled=true lists all; tenant_id filters', async () => {
    const caller = newCaller();
    const tenantA = await managedTenant(caller.auth);
    const tenantB = await managedTenant(caller.auth);
    const a1 = await create(caller.auth, tenantA);
    const a2 = await create(caller.auth, tenantA, { enabled: false });
    const b1 = await create(caller.auth, tenantB);
    await create(newCaller().auth, await managedTenant(newCaller().auth)).catch(() => undefined);

    const enabled = await request(link.app).get(CONNECTORS).set('Authorization', caller.auth);
    expect(enabled.status).toBe(200);
    expect(enabled.body.data.map((c: any) => c.id)).toEqual([b1.id, a1.id]);
    expect(enabled.body.pagination).toEqual({ page: 1, per_page: 25, total: 2, total_pages: 1 });
    expect(JSON.stringify(enabled.body)).not.toContain(TOKEN);

    const all = await request(link.app).get(`${CONNECTORS}?include_disabled=true`).set('Authorization', caller.auth);
    expect(all.body.data.map((c: any) => c.id)).toEqual([b1.id, a2.id, a1.id]);

    const ofA = await request(link.app)
      .get(`${CONNECTORS}?include_disabled=true&tenant_id=${tenantA}`)
      .set('Authorization', caller.auth);
    expect(ofA.body.data.map((c: any) => c.id)).toEqual([a2.id, a1.id]);
  });

  test.each([['include_disabled=maybe'], ['tenant_id=acme'], ['per_page=101']])(
    'When the query has %s, then it answers 400',
    async (query) => {
      const response = await request(link.app).get(`${CONNECTORS}?${query}`).set('Authorization', newCaller().auth);
      expectProblem(response, 400);
    },
  );
});

describe('GET /connectors/:id and PATCH /connectors/:id', () => {
  test('When the caller reads its connector, then it gets it; another MSP tenant gets 404', async () => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth));
    const mine = await request(link.app).get(`${CONNECTORS}/${connector.id}`).set('Authorization', caller.auth);
    expect(mine.status).toBe(200);
    expect(mine.body.config).toEqual({ base_url: 'https://scim.contoso.example/scim/v2', bearer_token_set: true });
    expectProblem(
      await request(link.app).get(`${CONNECTORS}/${connector.id}`).set('Authorization', newCaller().auth),
      404,
    );
  });

  test('When name, enabled and config change, then the connector answers with them and a new token is stored encrypted', async () => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth));
    const before = await link.db.connector.findUniqueOrThrow({ where: { id: connector.id } });
    const newToken = `rotated-${randomBytes(8).toString('hex')}`;

    const response = await request(link.app)
      .patch(`${CONNECTORS}/${connector.id}`)
      .set('Authorization', caller.auth)
      .send({
        name: 'Renamed',
        enabled: false,
        config: { base_url: 'https://scim2.contoso.example/v2', bearer_token: newToken },
      });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'Renamed',
      enabled: false,
      config: { base_url: 'https://scim2.contoso.example/v2', bearer_token_set: true },
    });
    expect(JSON.stringify(response.body)).not.toContain(newToken);
    const after = await link.db.connector.findUniqueOrThrow({ where: { id: connector.id } });
    expect(after.bearerTokenEncrypted).not.toBe(before.bearerTokenEncrypted);
    expect(after.bearerTokenEncrypted).not.toContain(newToken);

    const onlyUrl = await request(link.app)
      .patch(`${CONNECTORS}/${connector.id}`)
      .set('Authorization', caller.auth)
      .send({ config: { base_url: 'https://scim3.contoso.example/v2' } });
    expect(onlyUrl.status).toBe(200);
    expect((await link.db.connector.findUniqueOrThrow({ where: { id: connector.id } })).bearerTokenEncrypted).toBe(
      after.bearerTokenEncrypted,
    );
  });

  test.each([
    [{}],
    [{ config: { base_url: 'javascript:alert(1)' } }],
    [{ enabled: 'yes' }],
    [{ type: 'scim' }],
    [{ name: '' }],
  ])('When the patch is %j, then it answers 400 and changes nothing', async (body) => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth));
    const before = await link.db.connector.findUniqueOrThrow({ where: { id: connector.id } });
    expectProblem(
      await request(link.app).patch(`${CONNECTORS}/${connector.id}`).set('Authorization', caller.auth).send(body),
      400,
    );
    expect(await link.db.connector.findUniqueOrThrow({ where: { id: connector.id } })).toEqual(before);
  });

  test('When another MSP tenant patches the connector, then it answers 404 and changes nothing', async () => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth));
    expectProblem(
      await request(link.app)
        .patch(`${CONNECTORS}/${connector.id}`)
        .set('Authorization', newCaller().auth)
        .send({ name: 'x' }),
      404,
    );
    expect((await link.db.connector.findUniqueOrThrow({ where: { id: connector.id } })).name).toBe('Contoso Entra ID');
  });
});

describe('DELETE /connectors/:id and POST /connectors/:id/sync', () => {
  test('When a sync is started, then it answers 202 with Location and the queued run; a second start is 409 naming it; DELETE is 409 meanwhile', async () => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth));

    const started = await request(link.app)
      .post(`${CONNECTORS}/${connector.id}/sync`)
      .set('Authorization', caller.auth);
    expect(started.status).toBe(202);
    expect(started.headers.location).toBe(`${CONNECTORS}/${connector.id}/syncs/${started.body.id}`);
    expect(started.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'queued',
      trigger: 'manual',
      attempts: 0,
      started_at: null,
      finished_at: null,
      stats: {
        users_seen: 0,
        users_added: 0,
        users_updated: 0,
        users_removed: 0,
        groups_seen: 0,
        mode: null,
        mode_reason: null,
        delta_since: null,
      },
      error: null,
    });

    const again = await request(link.app).post(`${CONNECTORS}/${connector.id}/sync`).set('Authorization', caller.auth);
    expectProblem(again, 409);
    expect(again.body.detail).toContain(started.body.id);
    expect(again.body.run_id).toBe(started.body.id);
    expect(await link.db.syncRun.count({ where: { connectorId: connector.id } })).toBe(1);

    const deleted = await request(link.app).delete(`${CONNECTORS}/${connector.id}`).set('Authorization', caller.auth);
    expectProblem(deleted, 409);
    expect(deleted.body.detail).toContain(started.body.id);
    expect(await link.db.connector.count({ where: { id: connector.id } })).toBe(1);

    const shown = await request(link.app)
      .get(`${CONNECTORS}/${connector.id}/syncs/${started.body.id}`)
      .set('Authorization', caller.auth);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(started.body);
  });

  test('When the connector is disabled, then a sync is refused with 409 and no run is stored', async () => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth), { enabled: false });
    const response = await request(link.app)
      .post(`${CONNECTORS}/${connector.id}/sync`)
      .set('Authorization', caller.auth);
    expectProblem(response, 409);
    expect(response.body.detail).toContain('disabled');
    expect(await link.db.syncRun.count({ where: { connectorId: connector.id } })).toBe(0);
  });

  test('When the managed tenant is suspended, then a sync is refused with 409 naming it and no run is stored', async () => {
    const caller = newCaller();
    const tenantId = await managedTenant(caller.auth);
    const connector = await create(caller.auth, tenantId);
    expect(
      (
        await request(link.app)
          .patch(`/api/v1/tenants/${tenantId}`)
          .set('Authorization', caller.auth)
          .send({ status: 'suspended' })
      ).status,
    ).toBe(200);
    const response = await request(link.app)
      .post(`${CONNECTORS}/${connector.id}/sync`)
      .set('Authorization', caller.auth);
    expectProblem(response, 409);
    expect(response.body.detail).toContain(`${tenantId} is suspended`);
    expect(await link.db.syncRun.count({ where: { connectorId: connector.id } })).toBe(0);
  });

  test('When no run is open, then DELETE answers 204 and the connector and its runs are gone; another MSP tenant gets 404', async () => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth));
    await link.db.syncRun.create({
      data: { connectorId: connector.id, trigger: 'manual', status: 'succeeded', finishedAt: new Date() },
    });

    expectProblem(
      await request(link.app).delete(`${CONNECTORS}/${connector.id}`).set('Authorization', newCaller().auth),
      404,
    );
    const response = await request(link.app).delete(`${CONNECTORS}/${connector.id}`).set('Authorization', caller.auth);
    expect(response.status).toBe(204);
    expect(await link.db.connector.count({ where: { id: connector.id } })).toBe(0);
    expect(await link.db.syncRun.count({ where: { connectorId: connector.id } })).toBe(0);
    expectProblem(await request(link.app).get(`${CONNECTORS}/${connector.id}`).set('Authorization', caller.auth), 404);
  });

  test('When the runs of a connector are listed, then they come newest first, paged; an unknown run is 404', async () => {
    const caller = newCaller();
    const connector = await create(caller.auth, await managedTenant(caller.auth));
    const old = await link.db.syncRun.create({
      data: {
        connectorId: connector.id,
        trigger: 'schedule',
        status: 'failed',
        error: 'x',
        createdAt: new Date(Date.now() - 60_000),
        finishedAt: new Date(),
      },
    });
    const started = await request(link.app)
      .post(`${CONNECTORS}/${connector.id}/sync`)
      .set('Authorization', caller.auth);

    const page1 = await request(link.app)
      .get(`${CONNECTORS}/${connector.id}/syncs?per_page=1`)
      .set('Authorization', caller.auth);
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((r: any) => r.id)).toEqual([started.body.id]);
    expect(page1.body.pagination).toEqual({ page: 1, per_page: 1, total: 2, total_pages: 2 });
    expect(page1.headers.link).toContain('rel="next"');
    const page2 = await request(link.app)
      .get(`${CONNECTORS}/${connector.id}/syncs?per_page=1&page=2`)
      .set('Authorization', caller.auth);
    expect(page2.body.data.map((r: any) => [r.id, r.trigger, r.status])).toEqual([[old.id, 'schedule', 'failed']]);

    expectProblem(
      await request(link.app)
        .get(`${CONNECTORS}/${connector.id}/syncs/${randomUUID()}`)
        .set('Authorization', caller.auth),
      404,
    );
    expectProblem(
      await request(link.app).get(`${CONNECTORS}/${connector.id}/syncs`).set('Authorization', newCaller().auth),
      404,
    );
  });
});

describe('in production', () => {
  test(
    'When base_url is a metadata, loopback or private address not allowed, then POST and PATCH ' +
      'answer 422 naming config.base_url; the allow-list lets it through',
    async () => {
      const production = await startLink({ workers: false, outbound: createOutbound({ allowlist: ['10.1.2.3'] }) });
      try {
        const auth = `Bearer ${production.token({ tenant_id: randomUUID(), scope: 'admin:tenant' })}`;
        const tenant = await request(production.app)
          .post('/api/v1/tenants')
          .set('Authorization', auth)
          .send({ name: 'C', domain: 'c.example.com', client_id: randomUUID() });
        for (const baseUrl of [
          'http://169.254.169.254/latest',
          'http://127.0.0.1:8080/scim',
          'https://[::1]/scim',
          'http://192.168.1.5/scim',
        ]) {
          const response = await request(production.app)
            .post(CONNECTORS)
            .set('Authorization', auth)
            .send(connectorInput(tenant.body.id, { config: { base_url: baseUrl, bearer_token: TOKEN } }));
          expectProblem(response, 422);
          expect(response.body.errors).toEqual([
            { field: 'config.base_url', message: expect.stringContaining('OUTBOUND_ALLOWLIST') },
          ]);
        }
        expect(await production.db.connector.count()).toBe(0);

        const allowed = await request(production.app)
          .post(CONNECTORS)
          .set('Authorization', auth)
          .send(connectorInput(tenant.body.id, { config: { base_url: 'http://10.1.2.3/scim', bearer_token: TOKEN } }));
        expect(allowed.status).toBe(201);
        const patched = await request(production.app)
          .patch(`${CONNECTORS}/${allowed.body.id}`)
          .set('Authorization', auth)
          .send({ config: { base_url: 'http://169.254.169.254/' } });
        expectProblem(patched, 422);
        expect((await production.db.connector.findUniqueOrThrow({ where: { id: allowed.body.id } })).baseUrl).toBe(
          'http://10.1.2.3/scim',
        );
      } finally {
        await production.close();
      }
    },
  );
});

describe('a job queue that is down', () => {
  test('When the run cannot be queued, then POST sync answers 503, the run is recorded failed and the connector is not blocked', async () => {
    const database = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR });
    // A database given and no workers asked for: this link's queue never started.
    const noQueue = await startLink({ databaseUrl: database.url });
    try {
      const auth = `Bearer ${noQueue.token({ tenant_id: randomUUID(), scope: 'admin:tenant' })}`;
      const tenant = await request(noQueue.app)
        .post('/api/v1/tenants')
        .set('Authorization', auth)
        .send({ name: 'C', domain: 'c.example.com', client_id: randomUUID() });
      const created = await request(noQueue.app)
        .post(CONNECTORS)
        .set('Authorization', auth)
        .send(connectorInput(tenant.body.id));

      const response = await request(noQueue.app)
        .post(`${CONNECTORS}/${created.body.id}/sync`)
        .set('Authorization', auth);

      expectProblem(response, 503);
      expect(response.headers['retry-after']).toBe('30');
      const runs = await noQueue.db.syncRun.findMany({ where: { connectorId: created.body.id } });
      expect(runs).toMatchObject([
        { status: 'failed', openConnectorId: null, error: expect.stringContaining('could not be queued') },
      ]);
      expect(
        (await request(noQueue.app).delete(`${CONNECTORS}/${created.body.id}`).set('Authorization', auth)).status,
      ).toBe(204);
    } finally {
      await noQueue.close();
      await database.drop();
    }
  });
});

describe('PATCH /tenants/:id', () => {
  test('When name and status change, then the tenant answers with them and stores them; another MSP tenant gets 404; bad input 400', async () => {
    const caller = newCaller();
    const tenantId = await managedTenant(caller.auth);

    const response = await request(link.app)
      .patch(`/api/v1/tenants/${tenantId}`)
      .set('Authorization', caller.auth)
      .send({ name: 'Contoso (M365)', status: 'suspended' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: tenantId, name: 'Contoso (M365)', status: 'suspended' });
    expect(await link.db.managedTenant.findUniqueOrThrow({ where: { id: tenantId } })).toMatchObject({
      name: 'Contoso (M365)',
      status: 'suspended',
    });

    expectProblem(
      await request(link.app)
        .patch(`/api/v1/tenants/${tenantId}`)
        .set('Authorization', newCaller().auth)
        .send({ name: 'x' }),
      404,
    );
    for (const body of [{}, { status: 'gone' }, { domain: 'other.example.com' }, { name: '' }]) {
      expectProblem(
        await request(link.app).patch(`/api/v1/tenants/${tenantId}`).set('Authorization', caller.auth).send(body),
        400,
      );
    }
    expect(await link.db.managedTenant.findUniqueOrThrow({ where: { id: tenantId } })).toMatchObject({
      name: 'Contoso (M365)',
      status: 'suspended',
    });
  });
});
