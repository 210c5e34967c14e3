import { generateKeyPairSync, randomInt, randomUUID } from 'node:crypto';
import request from 'supertest';
import { forgedTokens } from '@msp/testkit';
import { startHr, type TestHr } from './support/hr';

const EMPLOYEES = '/api/v1/employees';
const ME = '/api/v1/me';

let hr: TestHr;

beforeAll(async () => {
  // A short refetch cooldown, so a key rotation can be seen without waiting 30 s.
  hr = await startHr({ settings: { jwksRefetchCooldownMs: 100 } });
});
afterAll(() => hr.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const bearer = (token: string) => `Bearer ${token}`;

/** Claims as desk would put them in a token, for hand-made (forged) tokens. */
function deskClaims(overrides: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: hr.issuer.issuer,
    aud: hr.issuer.audience,
    sub: 'test-client',
    tenant_id: randomUUID(),
    scope: 'admin:tenant',
    iat: now,
    exp: now + 3600,
    jti: randomUUID(),
    ...overrides,
  };
}

function expectInvalidToken(response: request.Response, detail?: RegExp) {
  expect(response.status).toBe(401);
  expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="msp", error="invalid_token", error_description="[^"]+"$/);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    type: 'urn:msp:problem:invalid-token',
    title: 'Unauthorized',
    status: 401,
    detail: detail ?? expect.any(String),
    request_id: response.headers['x-request-id'],
  });
}

describe('When a request to GET /employees carries no valid token', () => {
  test('When no Authorization header is sent, then it gets 401 invalid_token', async () => {
    expectInvalidToken(await request(hr.app).get(EMPLOYEES), /access token is required/);
  });

  test('When the header is not a Bearer token, then it gets 401 invalid_token', async () => {
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', 'Basic dXNlcjpwYXNz'), /Bearer <access token>/);
  });

  test('When the bearer token is garbage, then it gets 401 invalid_token', async () => {
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer('not-a-jwt')), /malformed/);
  });

  test('When the token has expired beyond the clock skew, then it gets 401 invalid_token', async () => {
    const expired = hr.token({}, { expiresInSec: -120 });
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(expired)), /expired/);
  });

  test('When the token is not valid yet, then it gets 401 invalid_token', async () => {
    const early = hr.token({ nbf: Math.floor(Date.now() / 1000) + 600 });
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(early)), /not valid yet/);
  });

  test('When the token is signed by another key under the issuer\'s kid, then it gets 401 invalid_token', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = hr.token({}, { key: privateKey });
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(forged)), /invalid signature/);
  });

  test('When the token is unsigned (alg none), then it gets 401 invalid_token', async () => {
    const forged = forgedTokens.unsigned(deskClaims());
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(forged)), /algorithm/);
  });

  test('When the token is HS256 keyed with the issuer\'s public key, then it gets 401 invalid_token', async () => {
    const forged = forgedTokens.hmacWithPublicKey(deskClaims(), hr.issuer.publicKey, hr.issuer.kid);
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(forged)), /algorithm/);
  });

  test('When the token comes from another issuer, then it gets 401 invalid_token', async () => {
    const foreign = hr.token({ iss: 'https://login.example.com/api/v1' });
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(foreign)), /issuer/);
  });

  test('When the token is meant for another audience, then it gets 401 invalid_token', async () => {
    const foreign = hr.token({ aud: 'another-api' });
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(foreign)), /audience/);
  });

  test('When the token names a key the JWKS does not have, then it gets 401 invalid_token', async () => {
    const unknown = hr.token({}, { kid: 'no-such-key' });
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(unknown)), /unknown key/);
  });

  test('When the token lacks the tenant_id claim, then it gets 401 invalid_token', async () => {
    const partial = hr.token({ tenant_id: undefined });
    expectInvalidToken(await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(partial)), /required claims/);
  });
});

describe('When a valid token is presented', () => {
  const employee = () => ({ user_id: randomUUID(), personnel_number: String(randomInt(1, 1e9)), name: 'Erika Mustermann' });

  test.each(['read:hr', 'admin:tenant', 'read:tickets read:hr'])('When it has "%s", then GET /employees answers 200', async (scope) => {
    const response = await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(hr.token({ scope })));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } });
  });

  test.each(['write:hr', 'admin:tenant'])('When it has "%s", then POST /employees answers 201', async (scope) => {
    const response = await request(hr.app).post(EMPLOYEES).set('Authorization', bearer(hr.token({ scope }))).send(employee());
    expect(response.status).toBe(201);
  });

  test.each([
    ['GET', 'read:hr', 'write:hr read:payroll read:tickets write:tickets read:users'],
    ['GET', 'read:hr', ''],
    ['POST', 'write:hr', 'read:hr read:payroll'],
  ])('When %s /employees lacks %s (scope "%s"), then it gets 403 insufficient_scope naming it and stores nothing', async (method, needed, scope) => {
    const tenantId = randomUUID();
    const token = bearer(hr.token({ scope, tenant_id: tenantId }));
    const response =
      method === 'GET'
        ? await request(hr.app).get(EMPLOYEES).set('Authorization', token)
        : await request(hr.app).post(EMPLOYEES).set('Authorization', token).send(employee());

    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBe(`Bearer realm="msp", error="insufficient_scope", scope="${needed}"`);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ type: 'urn:msp:problem:insufficient-scope', status: 403, required_scope: needed });
    expect(await hr.db.employee.count({ where: { tenantId } })).toBe(0);
  });

  test('When any valid token asks GET /me, then it describes the caller', async () => {
    const tenantId = randomUUID();
    const token = hr.token({ sub: 'crm-sync', tenant_id: tenantId, scope: 'read:tickets' }, { expiresInSec: 600 });
    const response = await request(hr.app).get(ME).set('Authorization', bearer(token));

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ client_id: 'crm-sync', tenant_id: tenantId, scopes: ['read:tickets'], expires_at: expect.any(String) });
    const secondsLeft = (Date.parse(response.body.expires_at) - Date.now()) / 1000;
    expect(secondsLeft).toBeGreaterThan(590);
    expect(secondsLeft).toBeLessThanOrEqual(600);
  });

  test('When GET /me is asked without a token, then it gets 401 invalid_token', async () => {
    expectInvalidToken(await request(hr.app).get(ME));
  });
});

describe('When desk\'s keys are fetched', () => {
  test('When many requests arrive, then the JWKS is fetched once and served from the cache', async () => {
    await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(hr.token())).expect(200);
    const before = hr.issuer.jwksFetches();

    for (let i = 0; i < 5; i += 1) {
      await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(hr.token())).expect(200);
    }

    expect(before).toBeGreaterThanOrEqual(1);
    expect(hr.issuer.jwksFetches()).toBe(before);
  });

  test('When desk rotates to a new key, then its tokens are accepted after exactly one JWKS refetch, and old-key tokens still are', async () => {
    await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(hr.token())).expect(200);
    await sleep(150); // past the refetch cooldown
    const before = hr.issuer.jwksFetches();

    const rotated = hr.issuer.rotate();
    const first = await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(hr.token({}, { key: rotated.privateKey, kid: rotated.kid })));
    const again = await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(hr.token({}, { key: rotated.privateKey, kid: rotated.kid })));
    const old = await request(hr.app).get(EMPLOYEES).set('Authorization', bearer(hr.token()));

    expect([first.status, again.status, old.status]).toEqual([200, 200, 200]);
    expect(hr.issuer.jwksFetches()).toBe(before + 1);
  });

  test('When tokens name unknown keys in a burst, then the JWKS is not refetched for each of them', async () => {
    // Default cooldown (30 s): forged kids cannot make hr hammer desk.
    const other = await startHr({ databaseUrl: hr.databaseUrl });
    try {
      await request(other.app).get(EMPLOYEES).set('Authorization', bearer(other.token())).expect(200);
      const before = other.issuer.jwksFetches();

      for (let i = 0; i < 5; i += 1) {
        expectInvalidToken(await request(other.app).get(EMPLOYEES).set('Authorization', bearer(other.token({}, { kid: `unknown-${i}` }))));
      }

      expect(other.issuer.jwksFetches()).toBe(before);
    } finally {
      await other.close();
    }
  });
});
