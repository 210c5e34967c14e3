import { PassThrough } from 'node:stream';
import request from 'supertest';
import { createLogger } from '@msp/http';
import { testWebhookSecrets } from '@msp/testkit';
import { createDeskApp } from '../src/app';
import { verifySecret } from '../src/auth/secrets';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, newTenant, startHelpdesk, unique } from './support/helpdesk';

let desk: TestDesk;
let http: Api;
let token: string;
let tenantId: string;

beforeAll(async () => ({ desk, http, token, tenantId } = await startHelpdesk()));
afterAll(() => desk.close());

async function createApiClient(body: Record<string, unknown> = {}, caller = token) {
  const response = await http
    .post(`${BASE}/api-clients`)
    .set(bearer(caller))
    .send({ name: unique('Reporting'), scopes: ['read:tickets'], ...body })
    .expect(201);
  return response.body as { id: string; client_id: string; client_secret: string; scopes: string[] };
}

const tokenRequest = (clientId: string, secret: string, extra: Record<string, string> = {}) =>
  http
    .post(`${BASE}/auth/token`)
    .send({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, ...extra });

describe('POST /api-clients', () => {
  test(
    'When an admin creates a client, then the secret is answered once, stored only as a ' +
      'salted hash, and gets a token with exactly the granted scopes',
    async () => {
      const response = await http
        .post(`${BASE}/api-clients`)
        .set(bearer(token))
        .send({ name: 'Reporting tool', scopes: ['read:tickets', 'read:users'] })
        .expect(201);
      expect(response.headers.location).toBe(`${BASE}/api-clients/${response.body.id}`);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).toEqual({
        id: expect.any(String),
        client_id: expect.stringMatching(/^cli_[0-9a-f]{32}$/),
        client_secret: expect.any(String),
        name: 'Reporting tool',
        scopes: ['read:tickets', 'read:users'],
        previous_secret_expires_at: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const stored = await desk.db.apiClient.findUniqueOrThrow({ where: { id: response.body.id } });
      expect(stored).toMatchObject({
        tenantId,
        clientId: response.body.client_id,
        scopes: ['read:tickets', 'read:users'],
        revokedAt: null,
      });
      expect(stored.secretHash).not.toContain(response.body.client_secret);
      expect(stored.secretHash).toMatch(/^scrypt\$/);
      expect(await verifySecret(response.body.client_secret, stored.secretHash)).toBe(true);

      const granted = await tokenRequest(response.body.client_id, response.body.client_secret).expect(200);
      expect(granted.body.scope).toBe('read:tickets read:users');
      // The new client reads tickets of its tenant but cannot manage clients.
      await http.get(`${BASE}/tickets`).set(bearer(granted.body.access_token)).expect(200);
      await http.get(`${BASE}/api-clients`).set(bearer(granted.body.access_token)).expect(403);

      // Never again: neither the read nor the list shows the secret.
      const read = await http.get(`${BASE}/api-clients/${response.body.id}`).set(bearer(token)).expect(200);
      expect(read.body).not.toHaveProperty('client_secret');
      expect(JSON.stringify(read.body)).not.toContain(response.body.client_secret);
    },
  );

  test('When the new client asks for a narrower scope, then its token carries only that scope; a wider one is invalid_scope', async () => {
    const client = await createApiClient({ scopes: ['read:tickets', 'write:tickets'] });
    expect(
      (await tokenRequest(client.client_id, client.client_secret, { scope: 'read:tickets' }).expect(200)).body.scope,
    ).toBe('read:tickets');
    expect(
      (await tokenRequest(client.client_id, client.client_secret, { scope: 'admin:tenant' }).expect(400)).body.error,
    ).toBe('invalid_scope');
  });

  test('When the caller grants a scope its own token does not hold, then it answers 422 scope-not-held and stores nothing', async () => {
    const admin = await desk.createClient({ scopes: ['admin:tenant', 'read:tickets'] });
    const adminToken = await desk.token(admin);
    const full = await desk.createClient();
    const narrowToken = await desk.token(full, 'admin:tenant read:users');
    const before = await desk.db.apiClient.count();
    for (const scopes of [['write:tickets'], ['read:tickets', 'read:payroll']]) {
      const response = await http
        .post(`${BASE}/api-clients`)
        .set(bearer(adminToken))
        .send({ name: unique('Too much'), scopes })
        .expect(422);
      expect(response.body).toMatchObject({ status: 422, type: 'urn:msp:problem:scope-not-held' });
    }
    // The same holds for a token narrowed at the token endpoint.
    await http
      .post(`${BASE}/api-clients`)
      .set(bearer(narrowToken))
      .send({ name: unique('Too much'), scopes: ['read:tickets'] })
      .expect(422);
    expect(await desk.db.apiClient.count()).toBe(before);
    // Within its own scopes it may grant.
    await http
      .post(`${BASE}/api-clients`)
      .set(bearer(adminToken))
      .send({ name: unique('Ok'), scopes: ['read:tickets'] })
      .expect(201);
  });

  test('When the body is invalid, then it answers 400 and stores nothing', async () => {
    const before = await desk.db.apiClient.count();
    for (const body of [
      {},
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['root'] },
      { name: '', scopes: ['read:tickets'] },
      { name: 'x', scopes: ['read:tickets'], client_secret: 'mine' },
    ]) {
      await http.post(`${BASE}/api-clients`).set(bearer(token)).send(body).expect(400);
    }
    expect(await desk.db.apiClient.count()).toBe(before);
  });

  test('When the caller lacks admin:tenant, then every route answers 403', async () => {
    const reader = await desk.createClient({ scopes: ['read:tickets', 'write:tickets', 'read:users'] });
    const readerToken = await desk.token(reader);
    const client = await createApiClient();
    await http.get(`${BASE}/api-clients`).set(bearer(readerToken)).expect(403);
    await http
      .post(`${BASE}/api-clients`)
      .set(bearer(readerToken))
      .send({ name: 'x', scopes: ['read:tickets'] })
      .expect(403);
    await http.get(`${BASE}/api-clients/${client.id}`).set(bearer(readerToken)).expect(403);
    await http.delete(`${BASE}/api-clients/${client.id}`).set(bearer(readerToken)).expect(403);
    await http.post(`${BASE}/api-clients/${client.id}/secret`).set(bearer(readerToken)).send({}).expect(403);
  });
});

describe('GET /api-clients', () => {
  test(
    "When listed, then the page shows the tenant's live clients, newest first, " +
      "without secrets; no other tenant's, no service or deleted client",
    async () => {
      const other = await newTenant(desk);
      const theirs = await createApiClient({}, other.token);
      const mine = await createApiClient();
      const gone = await createApiClient();
      await http.delete(`${BASE}/api-clients/${gone.id}`).set(bearer(token)).expect(204);
      await desk.db.apiClient.create({
        data: {
          tenantId: null,
          clientId: unique('svc').replace(' ', '-'),
          secretHash: 'x',
          name: 'service',
          scopes: ['read:users'],
        },
      });

      const response = await http.get(`${BASE}/api-clients?per_page=100`).set(bearer(token)).expect(200);
      const ids = response.body.data.map((c: { id: string }) => c.id);
      expect(ids).toContain(mine.id);
      expect(ids).not.toContain(theirs.id);
      expect(ids).not.toContain(gone.id);
      const expected = await desk.db.apiClient.findMany({
        where: { tenantId, revokedAt: null },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      });
      expect(ids).toEqual(expected.map((c) => c.id));
      expect(response.body.pagination).toMatchObject({ page: 1, per_page: 100, total: expected.length });
      expect(JSON.stringify(response.body)).not.toContain(mine.client_secret);
    },
  );

  test('When paged, then per_page and page apply', async () => {
    await createApiClient();
    await createApiClient();
    const response = await http.get(`${BASE}/api-clients?per_page=1&page=2`).set(bearer(token)).expect(200);
    expect(response.body.data).toHaveLength(1);
    expect(response.body.pagination).toMatchObject({ page: 2, per_page: 1 });
  });
});

describe('GET /api-clients/:id', () => {
  test("When the id is another tenant's client, a service client, unknown or not a UUID, then it answers 404 and changes nothing", async () => {
    const other = await newTenant(desk);
    const theirs = await createApiClient({}, other.token);
    await http.get(`${BASE}/api-clients/${theirs.id}`).set(bearer(token)).expect(404);
    await http.get(`${BASE}/api-clients/00000000-0000-4000-8000-000000000000`).set(bearer(token)).expect(404);
    // desk answers an id that is not a UUID like any unknown id.
    await http.get(`${BASE}/api-clients/nope`).set(bearer(token)).expect(404);
    const service = await desk.db.apiClient.create({
      data: {
        tenantId: null,
        clientId: unique('svc').replace(' ', '-'),
        secretHash: 'x',
        name: 'service',
        scopes: ['read:users'],
      },
    });
    await http.get(`${BASE}/api-clients/${service.id}`).set(bearer(token)).expect(404);
    await http.delete(`${BASE}/api-clients/${service.id}`).set(bearer(token)).expect(404);
    await http.post(`${BASE}/api-clients/${service.id}/secret`).set(bearer(token)).send({}).expect(404);
    expect(await desk.db.apiClient.findUniqueOrThrow({ where: { id: service.id } })).toMatchObject({
      revokedAt: null,
      secretHash: 'x',
    });
  });
});

describe('DELETE /api-clients/:id', () => {
  test('When a client is deleted, then the token endpoint refuses it, its refresh tokens are refused, and a second delete is 404', async () => {
    const client = await createApiClient();
    const granted = await tokenRequest(client.client_id, client.client_secret).expect(200);
    await http.delete(`${BASE}/api-clients/${client.id}`).set(bearer(token)).expect(204);

    expect((await tokenRequest(client.client_id, client.client_secret).expect(401)).body.error).toBe('invalid_client');
    const refresh = await http
      .post(`${BASE}/auth/token`)
      .send({
        grant_type: 'refresh_token',
        refresh_token: granted.body.refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret,
      })
      .expect(401);
    expect(refresh.body.error).toBe('invalid_client');
    const tokens = await desk.db.refreshToken.findMany({ where: { apiClientId: client.id } });
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.every((t) => t.revokedAt !== null)).toBe(true);
    expect((await desk.db.apiClient.findUniqueOrThrow({ where: { id: client.id } })).revokedAt).not.toBeNull();

    await http.get(`${BASE}/api-clients/${client.id}`).set(bearer(token)).expect(404);
    await http.delete(`${BASE}/api-clients/${client.id}`).set(bearer(token)).expect(404);
  });

  test('When another tenant deletes my client, then it is 404 and my client keeps working', async () => {
    const other = await newTenant(desk);
    const client = await createApiClient();
    await http.delete(`${BASE}/api-clients/${client.id}`).set(bearer(other.token)).expect(404);
    await http
      .post(`${BASE}/api-clients/${client.id}/secret`)
      .set(bearer(other.token))
      .send({ grace_period_seconds: 0 })
      .expect(404);
    await tokenRequest(client.client_id, client.client_secret).expect(200);
  });
});

describe('POST /api-clients/:id/secret', () => {
  test('When rotated without grace, then the new secret works at once and the old one no more', async () => {
    const client = await createApiClient();
    const response = await http
      .post(`${BASE}/api-clients/${client.id}/secret`)
      .set(bearer(token))
      .send({ grace_period_seconds: 0 })
      .expect(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toMatchObject({
      id: client.id,
      client_id: client.client_id,
      previous_secret_expires_at: null,
      client_secret: expect.any(String),
    });
    expect(response.body.client_secret).not.toBe(client.client_secret);
    await tokenRequest(client.client_id, response.body.client_secret).expect(200);
    await tokenRequest(client.client_id, client.client_secret).expect(401);
    const stored = await desk.db.apiClient.findUniqueOrThrow({ where: { id: client.id } });
    expect(stored.previousSecretHash).toBeNull();
    expect(stored.secretHash).not.toContain(response.body.client_secret);
  });

  test('When the body is empty, then the grace period is 0', async () => {
    const client = await createApiClient();
    const response = await http.post(`${BASE}/api-clients/${client.id}/secret`).set(bearer(token)).send({}).expect(200);
    await tokenRequest(client.client_id, client.client_secret).expect(401);
    await tokenRequest(client.client_id, response.body.client_secret).expect(200);
  });

  test('When rotated with a grace period, then both secrets work until it ends, and only the new one after', async () => {
    const client = await createApiClient();
    const before = Date.now();
    const response = await http
      .post(`${BASE}/api-clients/${client.id}/secret`)
      .set(bearer(token))
      .send({ grace_period_seconds: 3600 })
      .expect(200);
    const until = Date.parse(response.body.previous_secret_expires_at);
    expect(until).toBeGreaterThanOrEqual(before + 3600_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3600_000);
    await tokenRequest(client.client_id, client.client_secret).expect(200);
    await tokenRequest(client.client_id, response.body.client_secret).expect(200);
    expect(
      (await http.get(`${BASE}/api-clients/${client.id}`).set(bearer(token)).expect(200)).body
        .previous_secret_expires_at,
    ).toBe(response.body.previous_secret_expires_at);

    // The grace period ends: shift it into the past in the database instead of waiting an hour.
    await desk.db.apiClient.update({
      where: { id: client.id },
      data: { previousSecretExpiresAt: new Date(Date.now() - 1000) },
    });
    await tokenRequest(client.client_id, client.client_secret).expect(401);
    await tokenRequest(client.client_id, response.body.client_secret).expect(200);
    expect(
      (await http.get(`${BASE}/api-clients/${client.id}`).set(bearer(token)).expect(200)).body
        .previous_secret_expires_at,
    ).toBeNull();
  });

  test('When the grace period is out of 0..604800 or not an integer, then it answers 400 and the secret is unchanged', async () => {
    const client = await createApiClient();
    const before = await desk.db.apiClient.findUniqueOrThrow({ where: { id: client.id } });
    for (const grace of [-1, 604_801, 1.5, '60']) {
      await http
        .post(`${BASE}/api-clients/${client.id}/secret`)
        .set(bearer(token))
        .send({ grace_period_seconds: grace })
        .expect(400);
    }
    await http.post(`${BASE}/api-clients/${client.id}/secret`).set(bearer(token)).send({ grace_days: 1 }).expect(400);
    expect(await desk.db.apiClient.findUniqueOrThrow({ where: { id: client.id } })).toEqual(before);
    // 7 days exactly is allowed.
    await http
      .post(`${BASE}/api-clients/${client.id}/secret`)
      .set(bearer(token))
      .send({ grace_period_seconds: 604_800 })
      .expect(200);
  });
});

describe('secrets never reach the logs', () => {
  test('When clients are created, rotated and used through a desk that logs everything, then no log line contains a secret', async () => {
    const lines: string[] = [];
    const stream = new PassThrough();
    stream.on('data', (chunk) => lines.push(String(chunk)));
    const logger = createLogger({ service: 'desk', level: 'debug', stream });
    const { app } = createDeskApp({
      webhookSecrets: testWebhookSecrets(),
      database: desk.database,
      logger,
      signingKey: desk.signingKey,
      settings: {
        issuer: desk.issuer,
        audience: 'msp-api',
        rateLimitPerMinute: 600,
        tokenRateLimitPerMinute: 1000,
        refreshTokenTtlDays: 30,
      },
    });
    const created = await request(app)
      .post(`${BASE}/api-clients`)
      .set(bearer(token))
      .send({ name: unique('Logged'), scopes: ['read:tickets'] })
      .expect(201);
    const rotated = await request(app)
      .post(`${BASE}/api-clients/${created.body.id}/secret`)
      .set(bearer(token))
      .send({ grace_period_seconds: 60 })
      .expect(200);
    const form = (secret: string) =>
      `grant_type=client_credentials&client_id=${created.body.client_id}&client_secret=${encodeURIComponent(secret)}`;
    await request(app).post(`${BASE}/auth/token`).type('form').send(form(created.body.client_secret)).expect(200);
    await request(app).post(`${BASE}/auth/token`).type('form').send(form(rotated.body.client_secret)).expect(200);
    await request(app)
      .post(`${BASE}/api-clients`)
      .set(bearer(token))
      .send({ name: unique('Bad'), scopes: ['read:tickets'], client_secret: created.body.client_secret })
      .expect(400);
    await new Promise((resolve) => setImmediate(resolve));

    expect(lines.length).toBeGreaterThan(0); // the desk did log these requests
    const all = lines.join('');
    expect(all).not.toContain(created.body.client_secret);
    expect(all).not.toContain(rotated.body.client_secret);
  });
});
