import { randomBytes, randomUUID } from 'node:crypto';
import * as jose from 'jose';
import { ConfigError, createLogger } from '@msp/http';
import { createApiClientsRepository } from '../src/auth/api-clients.repository';
import { ensureServiceClients } from '../src/auth/bootstrap';
import { loadDeskConfig } from '../src/config';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createClient, createUser, newTenant, snapshot, startHelpdesk, unique } from './support/helpdesk';

const TOKEN = '/api/v1/auth/token';
const logger = createLogger({ service: 'desk', level: 'error' });

let desk: TestDesk;
let http: Api;
let tenant: { tenantId: string; token: string; clientId: string; secret: string };
const service = {
  client_id: `link-${randomBytes(4).toString('hex')}`,
  client_secret: randomBytes(24).toString('base64url'),
};

beforeAll(async () => {
  const started = await startHelpdesk();
  desk = started.desk;
  http = started.http;
  tenant = { tenantId: started.tenantId, token: started.token, clientId: started.clientId, secret: started.secret };
  // As desk's start does with SERVICE_CLIENTS (through the same parser).
  const config = loadDeskConfig({
    DATABASE_URL: desk.databaseUrl,
    SERVICE_CLIENTS: JSON.stringify([{ ...service, scopes: 'read:users write:tickets' }]),
  });
  await ensureServiceClients(config.serviceClients, createApiClientsRepository(desk.database.db), logger);
});
afterAll(() => desk.close());

const serviceToken = (body: Record<string, unknown>) =>
  http.post(TOKEN).send({ grant_type: 'client_credentials', ...service, ...body });

function expectInvalidRequest(
  response: { status: number; body: Record<string, unknown>; headers: Record<string, string> },
  description: RegExp,
) {
  expect(response.status).toBe(400);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    status: 400,
    error: 'invalid_request',
    error_description: expect.stringMatching(description),
  });
}

describe('SERVICE_CLIENTS configuration', () => {
  const problemsOf = (value: string) => {
    try {
      loadDeskConfig({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/desk', SERVICE_CLIENTS: value });
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    return [];
  };

  test('When SERVICE_CLIENTS is not JSON, not an array, or an entry is incomplete, then the start is refused naming the variable', () => {
    expect(problemsOf('[{"client_id":')).toEqual([
      'SERVICE_CLIENTS is not valid JSON (expected an array of {client_id, client_secret, scopes})',
    ]);
    expect(problemsOf('{"client_id":"link"}')).toEqual([
      'SERVICE_CLIENTS must be a JSON array of {client_id, client_secret, scopes}',
    ]);
    expect(problemsOf('[{"client_id":"link","client_secret":"short","scopes":"read:users"}]')).toEqual([
      'SERVICE_CLIENTS[0].client_secret must be a string of at least 16 characters',
    ]);
    expect(
      problemsOf('[{"client_id":"link","client_secret":"0123456789abcdef","scopes":"read:users fly:away"}]').join(),
    ).toMatch(/^SERVICE_CLIENTS\[0\]\.scopes must name known scopes .*; unknown: fly:away$/);
  });

  test('When SERVICE_CLIENTS is valid, then each entry is parsed with its scopes', () => {
    const config = loadDeskConfig({
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/desk',
      SERVICE_CLIENTS: '[{"client_id":"link","client_secret":"0123456789abcdef","scopes":"read:users write:tickets"}]',
    });
    expect(config.serviceClients).toEqual([
      { client_id: 'link', client_secret: '0123456789abcdef', scopes: ['read:users', 'write:tickets'] },
    ]);
  });

  test('When the service clients are ensured, then they belong to no tenant, keep only a hash of the secret, and a second start changes nothing', async () => {
    const rows = await desk.db.apiClient.findMany({ where: { clientId: service.client_id } });
    await ensureServiceClients(
      [{ ...service, scopes: ['read:users', 'write:tickets'] }],
      createApiClientsRepository(desk.database.db),
      logger,
    );
    const again = await desk.db.apiClient.findMany({ where: { clientId: service.client_id } });
    expect(rows).toHaveLength(1);
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({
      id: rows[0]!.id,
      tenantId: null,
      scopes: ['read:users', 'write:tickets'],
      revokedAt: null,
    });
    expect(again[0]!.secretHash).toMatch(/^scrypt\$/);
    expect(again[0]!.secretHash).not.toContain(service.client_secret);
  });
});

describe('POST /auth/token for a service client', () => {
  test(
    'When a service client names a tenant (JSON), then it gets a token for that tenant with ' +
      'its own scopes, and it works on GET /users and POST /tickets there',
    async () => {
      const technician = await createUser(http, tenant.token);
      const client = await createClient(http, tenant.token);

      const response = await serviceToken({ tenant_id: tenant.tenantId });
      expect(response.status).toBe(200);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: expect.stringMatching(/^rt_/),
        scope: 'read:users write:tickets',
      });
      const claims = jose.decodeJwt(response.body.access_token);
      expect(claims).toMatchObject({
        sub: service.client_id,
        tenant_id: tenant.tenantId,
        scope: 'read:users write:tickets',
      });

      const users = await http.get(`${BASE}/users?per_page=100`).set(bearer(response.body.access_token));
      expect(users.status).toBe(200);
      expect(users.body.data.map((u: { id: string }) => u.id)).toContain(technician.id);

      const title = unique('New laptop');
      const ticket = await http
        .post(`${BASE}/tickets`)
        .set(bearer(response.body.access_token))
        .send({ title, client_id: client.id, category: 'hardware' });
      expect(ticket.status).toBe(201);
      expect(ticket.body).toMatchObject({ title, client_id: client.id, category: 'hardware', status: 'open' });
      const stored = await desk.db.ticket.findUniqueOrThrow({ where: { id: ticket.body.id } });
      expect(stored.tenantId).toBe(tenant.tenantId);
    },
  );

  test(
    'When a service client acts for another client (X-On-Behalf-Of), then its token says it is ' +
      'a service client and the audit log records the other as its claim',
    async () => {
      const response = await serviceToken({ tenant_id: tenant.tenantId });
      expect(jose.decodeJwt(response.body.access_token)).toMatchObject({
        sub: service.client_id,
        client_kind: 'service',
      });
      expect(jose.decodeJwt(tenant.token)).toMatchObject({ sub: tenant.clientId, client_kind: 'tenant' });
      const client = await createClient(http, tenant.token);

      const ticket = await http
        .post(`${BASE}/tickets`)
        .set(bearer(response.body.access_token))
        .set('X-On-Behalf-Of', 'portal-user-7')
        .send({ title: unique('Onboarding'), client_id: client.id });

      expect(ticket.status).toBe(201);
      const audit = await http.get(`${BASE}/audit-events?resource_id=${ticket.body.id}`).set(bearer(tenant.token));
      expect(audit.status).toBe(200);
      expect(audit.body.data).toEqual([
        expect.objectContaining({
          action: 'ticket.created',
          actor: { client_id: service.client_id, on_behalf_of: 'portal-user-7' },
          request_id: ticket.headers['x-request-id'],
        }),
      ]);
    },
  );

  test('When a service client asks with a form body and HTTP Basic for a narrower scope, then the token carries only that scope', async () => {
    const basic = `Basic ${Buffer.from(`${service.client_id}:${service.client_secret}`).toString('base64')}`;
    const response = await http
      .post(TOKEN)
      .set('Authorization', basic)
      .type('form')
      .send(`grant_type=client_credentials&tenant_id=${tenant.tenantId}&scope=read%3Ausers`);
    expect(response.status).toBe(200);
    expect(response.body.scope).toBe('read:users');
    const narrow = response.body.access_token as string;
    expect(jose.decodeJwt(narrow)).toMatchObject({ tenant_id: tenant.tenantId, scope: 'read:users' });
    // read:users alone does not write tickets.
    const client = await createClient(http, tenant.token);
    const refused = await http
      .post(`${BASE}/tickets`)
      .set(bearer(narrow))
      .send({ title: unique('Nope'), client_id: client.id });
    expect(refused.status).toBe(403);
  });

  test('When the service client asks for a scope it was not granted, then it gets 400 invalid_scope', async () => {
    const response = await serviceToken({ tenant_id: tenant.tenantId, scope: 'read:users admin:tenant' });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_scope');
  });

  test('When the tenants differ, then each token sees only its own tenant', async () => {
    const other = await newTenant(desk);
    const theirs = await createUser(http, other.token);
    const token = (await serviceToken({ tenant_id: tenant.tenantId })).body.access_token as string;
    const response = await http.get(`${BASE}/users/${theirs.id}`).set(bearer(token));
    expect(response.status).toBe(404);
  });

  test(
    'When a service client omits tenant_id, sends a non-UUID, or names an unknown ' +
      'tenant, then it gets 400 invalid_request and nothing is stored',
    async () => {
      const before = await snapshot(desk);
      const refreshTokens = await desk.db.refreshToken.count();
      expectInvalidRequest(await serviceToken({}), /tenant_id is required/);
      expectInvalidRequest(await serviceToken({ tenant_id: 'acme' }), /tenant_id must be a UUID/);
      expectInvalidRequest(await serviceToken({ tenant_id: randomUUID() }), /no tenant known to desk/);
      expectInvalidRequest(await serviceToken({ tenant_id: 42 }), /tenant_id/);
      expect(await snapshot(desk)).toEqual(before);
      expect(await desk.db.refreshToken.count()).toBe(refreshTokens);
    },
  );

  test('When a tenant client sends tenant_id, even its own, then it gets 400 invalid_request', async () => {
    const own = await http.post(TOKEN).send({
      grant_type: 'client_credentials',
      client_id: tenant.clientId,
      client_secret: tenant.secret,
      tenant_id: tenant.tenantId,
    });
    expectInvalidRequest(own, /only from service clients/);
    const other = await newTenant(desk);
    const foreign = await http.post(TOKEN).type('form').send({
      grant_type: 'client_credentials',
      client_id: tenant.clientId,
      client_secret: tenant.secret,
      tenant_id: other.tenantId,
    });
    expectInvalidRequest(foreign, /only from service clients/);
  });

  test('When the service secret is wrong, then it gets 401 invalid_client', async () => {
    const response = await http.post(TOKEN).send({
      grant_type: 'client_credentials',
      client_id: service.client_id,
      client_secret: 'wrong-secret-0000',
      tenant_id: tenant.tenantId,
    });
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('invalid_client');
  });

  test('When a service token is refreshed, then the new token is for the same tenant; naming a tenant on refresh is refused', async () => {
    const first = (await serviceToken({ tenant_id: tenant.tenantId })).body as { refresh_token: string };
    const other = await newTenant(desk);
    const switched = await http
      .post(TOKEN)
      .send({ grant_type: 'refresh_token', refresh_token: first.refresh_token, ...service, tenant_id: other.tenantId });
    expectInvalidRequest(switched, /stays with the tenant/);

    const refreshed = await http
      .post(TOKEN)
      .send({ grant_type: 'refresh_token', refresh_token: first.refresh_token, ...service });
    expect(refreshed.status).toBe(200);
    expect(jose.decodeJwt(refreshed.body.access_token)).toMatchObject({
      sub: service.client_id,
      tenant_id: tenant.tenantId,
      scope: 'read:users write:tickets',
    });
    const stored = await desk.db.refreshToken.findMany({
      where: { apiClient: { clientId: service.client_id }, usedAt: null, revokedAt: null, tenantId: other.tenantId },
    });
    expect(stored).toHaveLength(0);
  });
});
