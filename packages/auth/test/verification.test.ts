import { generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createLogger, createServiceApp } from '@msp/http';
import { forgedTokens, startTestIssuer, type TestIssuer } from '@msp/testkit';
import { createAuth, createTokenVerifier, InvalidTokenError, registerWhoAmI, remoteJwks } from '../src';

let issuer: TestIssuer;
let app: ReturnType<typeof createServiceApp>['app'];

beforeAll(async () => {
  issuer = await startTestIssuer();
  const auth = createAuth({ issuer: issuer.issuer, audience: issuer.audience, jwksUrl: issuer.jwksUrl });
  app = createServiceApp({
    service: 'auth-test',
    logger: createLogger({ service: 'auth-test', level: 'error' }),
    openapi: { title: 't', version: '1', description: 't', tokenUrl: 'http://x/token', scopes: {} },
    readinessChecks: {},
    rateLimit: { limit: 10_000 },
    authenticate: auth.authenticate,
    requireScope: auth.requireScope,
    routes: (api) => {
      registerWhoAmI(api);
      api.route({
        method: 'get',
        path: '/tickets',
        operationId: 'listTickets',
        summary: 'A scoped route',
        tags: ['t'],
        scope: 'read:tickets',
        responses: { 200: { description: 'ok' } },
        handler: (req, res) => {
          res.json({ tenant: req.principal!.tenantId });
        },
      });
    },
  }).app;
});
afterAll(() => issuer.close());

const call = (token?: string) => {
  const r = request(app).get('/api/v1/tickets');
  return token === undefined ? r : r.set('Authorization', `Bearer ${token}`);
};

function expectInvalidToken(response: request.Response) {
  expect(response.status).toBe(401);
  expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="msp", error="invalid_token"/);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status: 401, type: 'urn:msp:problem:invalid-token' });
}

const now = () => Math.floor(Date.now() / 1000);

describe('token verification', () => {
  test("When a valid token with the scope is sent, then the route answers with the caller's tenant", async () => {
    const tenant = randomUUID();
    const response = await call(issuer.token({ scope: 'read:tickets', tenant_id: tenant }));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ tenant });
  });

  test('When no token is sent, then 401 invalid_token', async () => expectInvalidToken(await call()));
  test('When the Authorization header is not Bearer, then 401', async () =>
    expectInvalidToken(await request(app).get('/api/v1/tickets').set('Authorization', 'Basic abc')));
  test('When the token is garbage, then 401', async () => expectInvalidToken(await call('not.a.jwt')));
  test(
    'When the scheme is written in another case and followed by several spaces, then the ' +
      'token is still accepted (RFC 7235: the scheme is case-insensitive)',
    async () => {
      const tenant = randomUUID();
      const token = issuer.token({ scope: 'read:tickets', tenant_id: tenant });
      const response = await request(app).get('/api/v1/tickets').set('Authorization', `bearer   ${token}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ tenant });
    },
  );
  test("When the header carries a character outside b64token after a valid token, then 401 naming the header's form", async () => {
    const token = issuer.token({ scope: 'read:tickets' });
    const response = await request(app).get('/api/v1/tickets').set('Authorization', `bearer ${token}!`);
    expectInvalidToken(response);
    expect(response.body.detail).toMatch(/Bearer <access token>/);
  });
  test('When the token has expired beyond the clock skew, then 401', async () =>
    expectInvalidToken(await call(issuer.token({ scope: 'read:tickets', iat: now() - 7200, exp: now() - 120 }))));
  test('When the token expired within the clock skew, then it is still accepted', async () =>
    expect((await call(issuer.token({ scope: 'read:tickets', iat: now() - 3600, exp: now() - 5 }))).status).toBe(200));
  test('When the token is not valid yet (nbf), then 401', async () =>
    expectInvalidToken(await call(issuer.token({ scope: 'read:tickets', nbf: now() + 600 }))));

  test('When the token is signed by another key under the same kid, then 401', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expectInvalidToken(await call(issuer.token({ scope: 'read:tickets' }, { key: privateKey })));
  });

  test('When the token is unsigned (alg none), then 401', async () => {
    const claims = {
      iss: issuer.issuer,
      aud: issuer.audience,
      sub: 'x',
      tenant_id: randomUUID(),
      scope: 'read:tickets',
      exp: now() + 60,
      jti: 'j',
    };
    expectInvalidToken(await call(forgedTokens.unsigned(claims)));
  });

  test('When the token is HS256-signed with the public key, then 401', async () => {
    const claims = {
      iss: issuer.issuer,
      aud: issuer.audience,
      sub: 'x',
      tenant_id: randomUUID(),
      scope: 'read:tickets',
      exp: now() + 60,
      jti: 'j',
    };
    expectInvalidToken(await call(forgedTokens.hmacWithPublicKey(claims, issuer.publicKey, issuer.kid)));
  });

  test('When the issuer or the audience is wrong, then 401', async () => {
    expectInvalidToken(await call(issuer.token({ scope: 'read:tickets', iss: 'https://evil.example' })));
    expectInvalidToken(await call(issuer.token({ scope: 'read:tickets', aud: 'another-api' })));
  });

  test('When required claims are missing, then 401', async () => {
    expectInvalidToken(await call(issuer.token({ scope: 'read:tickets', tenant_id: undefined })));
    expectInvalidToken(await call(issuer.token({ scope: 'read:tickets', jti: undefined })));
  });

  test('When the tenant_id is not a UUID, then 401 (never a database error later)', async () => {
    expectInvalidToken(await call(issuer.token({ scope: 'read:tickets', tenant_id: 'tenant-a' })));
  });

  test('When the token lacks the scope, then 403 insufficient_scope naming it', async () => {
    const response = await call(issuer.token({ scope: 'read:users write:tickets' }));
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="msp", error="insufficient_scope", scope="read:tickets"',
    );
    expect(response.body).toMatchObject({ status: 403, required_scope: 'read:tickets' });
  });

  test('When the token has admin:tenant, then it satisfies every scope', async () => {
    expect((await call(issuer.token({ scope: 'admin:tenant' }))).status).toBe(200);
  });

  test('When GET /me is called with any valid token, then it describes the caller', async () => {
    const tenant = randomUUID();
    const response = await request(app)
      .get('/api/v1/me')
      .set('Authorization', `Bearer ${issuer.token({ sub: 'client-1', tenant_id: tenant, scope: 'read:hr' })}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ client_id: 'client-1', tenant_id: tenant, scopes: ['read:hr'] });
  });
});

describe('JWKS caching and rotation', () => {
  const claims = () => ({
    iss: issuer.issuer,
    aud: issuer.audience,
    sub: 's',
    tenant_id: randomUUID(),
    scope: 'read:tickets',
    jti: 'j',
  });

  test('When many requests arrive, then the JWKS is fetched once and cached', async () => {
    const token = issuer.token({ scope: 'read:tickets' });
    await call(token);
    const before = issuer.jwksFetches();
    for (let i = 0; i < 5; i += 1) expect((await call(token)).status).toBe(200);
    expect(issuer.jwksFetches()).toBe(before);
  });

  test('When desk rotates its key, then a token with the new kid is accepted after exactly one refetch', async () => {
    const verify = createTokenVerifier({
      keys: remoteJwks({ url: issuer.jwksUrl, refetchCooldownMs: 0 }),
      issuer: issuer.issuer,
      audience: issuer.audience,
    });
    await verify(issuer.token());
    const start = issuer.jwksFetches();
    const rotated = issuer.rotate();
    const fresh = jwt.sign(claims(), rotated.privateKey, { algorithm: 'ES256', keyid: rotated.kid, expiresIn: 60 });
    await expect(verify(fresh)).resolves.toMatchObject({ scopes: ['read:tickets'] });
    expect(issuer.jwksFetches()).toBe(start + 1);
    await verify(fresh);
    expect(issuer.jwksFetches()).toBe(start + 1);
  });

  test(
    'When the JWKS is fresh, then a token verified before is known at once; when its ' +
      'keys are stale, known defers to the verifier, which refetches',
    async () => {
      const keys = remoteJwks({ url: issuer.jwksUrl, refetchCooldownMs: 0, cacheMs: 200 });
      const verify = createTokenVerifier({ keys, issuer: issuer.issuer, audience: issuer.audience });
      const token = issuer.token();
      expect(verify.known!(token)).toBeUndefined();
      const principal = await verify(token);
      expect(verify.known!(token)).toBe(principal);
      const start = issuer.jwksFetches();
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(verify.known!(token)).toBeUndefined();
      expect(issuer.jwksFetches()).toBe(start);
      // The refetched JWKS holds new key objects: the token is verified again against them.
      const again = await verify(token);
      expect(again).toEqual(principal);
      expect(issuer.jwksFetches()).toBe(start + 1);
      expect(verify.known!(token)).toBe(again);
    },
  );

  test('When tokens name unknown kids in a burst, then the JWKS is refetched at most once per cooldown', async () => {
    const verify = createTokenVerifier({
      keys: remoteJwks({ url: issuer.jwksUrl, refetchCooldownMs: 60_000 }),
      issuer: issuer.issuer,
      audience: issuer.audience,
    });
    await verify(issuer.token());
    const start = issuer.jwksFetches();
    for (let i = 0; i < 5; i += 1) {
      const forged = jwt.sign(claims(), issuer.privateKey, {
        algorithm: 'ES256',
        keyid: `unknown-${i}`,
        expiresIn: 60,
      });
      await expect(verify(forged)).rejects.toThrow(InvalidTokenError);
    }
    expect(issuer.jwksFetches()).toBe(start);
  });

  test('When the JWKS cannot be reached, then tokens are refused with 401, not a 500', async () => {
    const verify = createTokenVerifier({
      keys: remoteJwks({ url: 'http://127.0.0.1:1/jwks.json' }),
      issuer: issuer.issuer,
      audience: issuer.audience,
    });
    await expect(verify(issuer.token())).rejects.toThrow(InvalidTokenError);
  });
});
