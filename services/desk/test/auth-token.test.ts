import { createHash } from 'node:crypto';
import type request from 'supertest';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import { api } from './support/api';
import { startDesk, type TestClient, type TestDesk } from './support/desk';

const TOKEN = '/api/v1/auth/token';

let desk: TestDesk;
let client: TestClient;

beforeAll(async () => {
  desk = await startDesk();
  client = await desk.createClient();
});
afterAll(() => desk.close());

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function expectOAuthError(response: request.Response, status: number, error: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    status,
    error,
    type: expect.stringMatching(/^urn:msp:problem:oauth-/),
    request_id: response.headers['x-request-id'],
  });
  expect(typeof response.body.error_description).toBe('string');
  expect(response.headers['cache-control']).toBe('no-store');
}

describe('POST /auth/token with client_credentials', () => {
  test('When a client sends JSON credentials, then it gets a Bearer JWT for one hour that verifies against the JWKS', async () => {
    const response = await api(desk)
      .post(TOKEN)
      .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret });

    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^rt_/),
      scope: 'read:tickets write:tickets read:users read:hr write:hr read:payroll admin:tenant',
    });
    const jwks = (await api(desk).get('/api/v1/.well-known/jwks.json')).body;
    const { payload, protectedHeader } = await jose.jwtVerify(
      response.body.access_token,
      jose.createLocalJWKSet(jwks),
      {
        issuer: desk.issuer,
        audience: 'msp-api',
      },
    );
    expect(protectedHeader.alg).toBe('ES256');
    expect(protectedHeader.kid).toBe(jwks.keys[0].kid);
    expect(payload).toMatchObject({ sub: client.clientId, tenant_id: client.tenantId, scope: response.body.scope });
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('When a client authenticates with HTTP Basic and a form body, then it gets a token', async () => {
    const response = await api(desk)
      .post(TOKEN)
      .set('Authorization', basic(client.clientId, client.secret))
      .type('form')
      .send('grant_type=client_credentials');

    expect(response.status).toBe(200);
    expect(response.body.token_type).toBe('Bearer');
  });

  test('When a client asks for a subset of its scopes, then the token carries exactly that subset', async () => {
    const response = await api(desk).post(TOKEN).type('form').send({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.secret,
      scope: 'read:tickets read:users',
    });

    expect(response.status).toBe(200);
    expect(response.body.scope).toBe('read:tickets read:users');
    expect(jose.decodeJwt(response.body.access_token).scope).toBe('read:tickets read:users');
  });

  test('When a client asks for a scope it does not hold, then it gets 400 invalid_scope and no token is stored', async () => {
    const narrow = await desk.createClient({ scopes: ['read:tickets'] });
    const response = await api(desk).post(TOKEN).send({
      grant_type: 'client_credentials',
      client_id: narrow.clientId,
      client_secret: narrow.secret,
      scope: 'read:tickets admin:tenant',
    });

    expectOAuthError(response, 400, 'invalid_scope');
    expect(await desk.db.refreshToken.count({ where: { tenantId: narrow.tenantId } })).toBe(0);
  });

  test('When the secret is wrong, then it gets 401 invalid_client', async () => {
    const response = await api(desk)
      .post(TOKEN)
      .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: 'wrong-secret' });
    expectOAuthError(response, 401, 'invalid_client');
  });

  test('When the secret is wrong in HTTP Basic, then the 401 challenges Basic', async () => {
    const response = await api(desk)
      .post(TOKEN)
      .set('Authorization', basic(client.clientId, 'nope'))
      .type('form')
      .send('grant_type=client_credentials');
    expectOAuthError(response, 401, 'invalid_client');
    expect(response.headers['www-authenticate']).toMatch(/^Basic realm="msp"/);
  });

  test('When the client is unknown, then it gets the same 401 invalid_client', async () => {
    const response = await api(desk)
      .post(TOKEN)
      .send({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'whatever' });
    expectOAuthError(response, 401, 'invalid_client');
  });

  test('When no credentials are sent, then it gets 401 invalid_client', async () => {
    const response = await api(desk).post(TOKEN).send({ grant_type: 'client_credentials' });
    expectOAuthError(response, 401, 'invalid_client');
  });

  test('When both HTTP Basic and a body secret are sent, then it gets 400 invalid_request', async () => {
    const response = await api(desk)
      .post(TOKEN)
      .set('Authorization', basic(client.clientId, client.secret))
      .send({ grant_type: 'client_credentials', client_secret: client.secret });
    expectOAuthError(response, 400, 'invalid_request');
  });

  test('When grant_type is missing or not a string, then it gets 400 invalid_request', async () => {
    expectOAuthError(
      await api(desk).post(TOKEN).send({ client_id: client.clientId, client_secret: client.secret }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await api(desk).post(TOKEN).send({ grant_type: 7, client_id: client.clientId, client_secret: client.secret }),
      400,
      'invalid_request',
    );
  });

  test('When grant_type is unknown, then it gets 400 unsupported_grant_type', async () => {
    const response = await api(desk)
      .post(TOKEN)
      .send({ grant_type: 'password', client_id: client.clientId, client_secret: client.secret });
    expectOAuthError(response, 400, 'unsupported_grant_type');
  });

  test('When the body is malformed JSON or plain text, then it gets 400 and 415 problem documents', async () => {
    const malformed = await api(desk).post(TOKEN).set('Content-Type', 'application/json').send('{"grant_type":');
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(malformed.body).toMatchObject({ error: 'invalid_request', error_description: '(body) is not valid JSON' });

    const text = await api(desk).post(TOKEN).set('Content-Type', 'text/plain').send('grant_type=client_credentials');
    expect(text.status).toBe(415);
    expect(text.body).toMatchObject({ status: 415, type: 'urn:msp:problem:unsupported-media-type' });
  });

  test('When a client is created, then its secret is stored only as a salted slow hash', async () => {
    const stored = await desk.db.apiClient.findUniqueOrThrow({ where: { clientId: client.clientId } });
    expect(stored.secretHash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(stored.secretHash).not.toContain(client.secret);
  });
});

describe('POST /auth/token with refresh_token', () => {
  async function pair(c: TestClient = client) {
    const response = await api(desk)
      .post(TOKEN)
      .send({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.secret });
    return response.body as { access_token: string; refresh_token: string };
  }
  const refresh = (token: string, c: TestClient = client, extra: object = {}) =>
    api(desk)
      .post(TOKEN)
      .send({
        grant_type: 'refresh_token',
        refresh_token: token,
        client_id: c.clientId,
        client_secret: c.secret,
        ...extra,
      });

  test('When a refresh token is exchanged, then a new pair is issued, the old one is spent, and only a hash is stored', async () => {
    const first = await pair();
    const response = await refresh(first.refresh_token);

    expect(response.status).toBe(200);
    expect(response.body.refresh_token).not.toBe(first.refresh_token);
    expect(response.body.access_token).not.toBe(first.access_token);
    expect(response.headers['cache-control']).toBe('no-store');
    const rows = await desk.db.refreshToken.findMany({ where: { apiClient: { clientId: client.clientId } } });
    expect(rows.every((row) => row.tokenHash !== first.refresh_token && row.tokenHash.length === 64)).toBe(true);
  });

  test('When a spent refresh token is presented again, then it is refused and every token of its family is revoked', async () => {
    const first = await pair();
    const second = (await refresh(first.refresh_token)).body;

    const reuse = await refresh(first.refresh_token);
    expectOAuthError(reuse, 400, 'invalid_grant');

    // The legitimate-looking newest token died with its family.
    expectOAuthError(await refresh(second.refresh_token), 400, 'invalid_grant');
    const spent = await desk.db.refreshToken.findUniqueOrThrow({
      where: { tokenHash: createHash('sha256').update(first.refresh_token).digest('hex') },
    });
    const family = await desk.db.refreshToken.findMany({ where: { familyId: spent.familyId } });
    expect(family).toHaveLength(2);
    expect(family.every((row) => row.revokedAt !== null)).toBe(true);
  });

  test('When two requests race with the same refresh token, then exactly one succeeds', async () => {
    const first = await pair();
    const results = await Promise.all([
      refresh(first.refresh_token),
      refresh(first.refresh_token),
      refresh(first.refresh_token),
    ]);
    expect(results.filter((r) => r.status === 200).length).toBe(1);
    expect(results.filter((r) => r.status === 400).every((r) => r.body.error === 'invalid_grant')).toBe(true);
  });

  test('When another client presents the refresh token, then it is refused', async () => {
    const first = await pair();
    const other = await desk.createClient();
    expectOAuthError(await refresh(first.refresh_token, other), 400, 'invalid_grant');
    // And the rightful owner can still use it.
    expect((await refresh(first.refresh_token)).status).toBe(200);
  });

  test('When the refresh narrows the scope, then the new token has the narrower scope; widening is invalid_scope', async () => {
    const first = (
      await api(desk).post(TOKEN).send({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.secret,
        scope: 'read:tickets write:tickets',
      })
    ).body;
    expectOAuthError(await refresh(first.refresh_token, client, { scope: 'admin:tenant' }), 400, 'invalid_scope');
    const narrowed = await refresh(first.refresh_token, client, { scope: 'read:tickets' });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('read:tickets');
  });

  test('When refresh_token is missing or unknown, then it gets invalid_request or invalid_grant', async () => {
    expectOAuthError(
      await api(desk)
        .post(TOKEN)
        .send({ grant_type: 'refresh_token', client_id: client.clientId, client_secret: client.secret }),
      400,
      'invalid_request',
    );
    expectOAuthError(await refresh('rt_unknown'), 400, 'invalid_grant');
  });

  test('When an expired refresh token is presented, then it gets invalid_grant', async () => {
    const first = await pair();
    await desk.db.refreshToken.updateMany({
      where: { usedAt: null, revokedAt: null, apiClient: { clientId: client.clientId } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expectOAuthError(await refresh(first.refresh_token), 400, 'invalid_grant');
  });
});

describe('POST /auth/revoke', () => {
  test('When a refresh token is revoked, then it answers 200 and the token no longer refreshes', async () => {
    const first = (
      await api(desk)
        .post(TOKEN)
        .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret })
    ).body;
    const revoked = await api(desk)
      .post('/api/v1/auth/revoke')
      .set('Authorization', basic(client.clientId, client.secret))
      .type('form')
      .send({ token: first.refresh_token });
    expect(revoked.status).toBe(200);

    const again = await api(desk).post(TOKEN).send({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: client.clientId,
      client_secret: client.secret,
    });
    expectOAuthError(again, 400, 'invalid_grant');
  });

  test('When an unknown token is revoked, then it still answers 200; a bad client gets 401', async () => {
    const unknown = await api(desk)
      .post('/api/v1/auth/revoke')
      .send({ token: 'rt_nothing', client_id: client.clientId, client_secret: client.secret });
    expect(unknown.status).toBe(200);
    const bad = await api(desk)
      .post('/api/v1/auth/revoke')
      .send({ token: 'rt_nothing', client_id: client.clientId, client_secret: 'wrong' });
    expectOAuthError(bad, 401, 'invalid_client');
  });
});

describe('Discovery', () => {
  test('When an OAuth client library discovers desk through RFC 8414 metadata, then it obtains a token that desk accepts', async () => {
    const issuer = new URL(desk.issuer);
    const discovery = await oauth.discoveryRequest(issuer, {
      algorithm: 'oauth2',
      [oauth.allowInsecureRequests]: true,
    });
    const as = await oauth.processDiscoveryResponse(issuer, discovery);
    expect(as.token_endpoint).toBe(`${desk.issuer}/auth/token`);
    expect(as.jwks_uri).toBe(`${desk.issuer}/.well-known/jwks.json`);

    const oauthClient: oauth.Client = { client_id: client.clientId };
    const response = await oauth.clientCredentialsGrantRequest(
      as,
      oauthClient,
      oauth.ClientSecretBasic(client.secret),
      new URLSearchParams({ scope: 'read:tickets' }),
      {
        [oauth.allowInsecureRequests]: true,
      },
    );
    const result = await oauth.processClientCredentialsResponse(as, oauthClient, response);
    expect(result.token_type).toBe('bearer');
    expect(result.expires_in).toBe(3600);

    const me = await api(desk).get('/api/v1/me').set('Authorization', `Bearer ${result.access_token}`);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ client_id: client.clientId, tenant_id: client.tenantId, scopes: ['read:tickets'] });

    const remote = jose.createRemoteJWKSet(new URL(as.jwks_uri!));
    await expect(
      jose.jwtVerify(result.access_token, remote, { issuer: desk.issuer, audience: 'msp-api' }),
    ).resolves.toBeDefined();
  });

  test('When the metadata is read under /api/v1/.well-known, then it equals the RFC 8414 location', async () => {
    const inside = await api(desk).get('/api/v1/.well-known/oauth-authorization-server');
    const rfc = await api(desk).get('/.well-known/oauth-authorization-server/api/v1');
    expect(inside.status).toBe(200);
    expect(inside.body).toEqual(rfc.body);
    expect(inside.body).toMatchObject({
      issuer: desk.issuer,
      grant_types_supported: ['client_credentials', 'refresh_token'],
    });
  });
});
