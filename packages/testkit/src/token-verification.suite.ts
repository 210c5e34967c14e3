import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type http from 'node:http';
import request from 'supertest';
import { forgedTokens, type TestIssuer } from './test-issuer';

/** A service under test whose tokens come from a TestIssuer (desk's stand-in). */
export interface VerifyingService {
  app: http.RequestListener;
  issuer: TestIssuer;
  close(): Promise<void>;
}

export interface TokenVerificationSuiteOptions {
  /** A protected GET route that answers 200 to `admin:tenant`, e.g. `/api/v1/tenants`. */
  route: string;
  /** Starts the service; `jwksRefetchCooldownMs` is passed through to its key source. */
  start(options: { jwksRefetchCooldownMs?: number }): Promise<VerifyingService>;
}

export function expectInvalidToken(response: request.Response, detail?: RegExp) {
  expect(response.status).toBe(401);
  expect(response.headers['www-authenticate']).toMatch(
    /^Bearer realm="msp", error="invalid_token", error_description="[^"]+"$/,
  );
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    type: 'urn:msp:problem:invalid-token',
    title: 'Unauthorized',
    status: 401,
    detail: detail ?? expect.any(String),
    request_id: response.headers['x-request-id'],
  });
}

/**
 * The token verification matrix, run against a real route of a service
 * that verifies desk's tokens through the JWKS: every way a token can be
 * wrong is a 401 with `WWW-Authenticate`, and the key set is cached and
 * refetched once for a new kid.
 */
export function describeTokenVerification(options: TokenVerificationSuiteOptions) {
  const { route } = options;
  let service: VerifyingService;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const call = (token?: string) => {
    const pending = request(service.app).get(route);
    return token === undefined ? pending : pending.set('Authorization', `Bearer ${token}`);
  };
  const token = (claims: Record<string, unknown> = {}, tokenOptions?: Parameters<TestIssuer['token']>[1]) =>
    service.issuer.token({ tenant_id: randomUUID(), scope: 'admin:tenant', ...claims }, tokenOptions);
  const deskClaims = () => {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: service.issuer.issuer,
      aud: service.issuer.audience,
      sub: 'test-client',
      tenant_id: randomUUID(),
      scope: 'admin:tenant',
      iat: now,
      exp: now + 3600,
      jti: randomUUID(),
    };
  };

  describe(`token verification on GET ${route}`, () => {
    beforeAll(async () => {
      // A short refetch cooldown, so a key rotation can be seen without waiting.
      service = await options.start({ jwksRefetchCooldownMs: 100 });
    });
    afterAll(() => service.close());

    test('When a valid admin:tenant token is sent, then it answers 200', async () => {
      expect((await call(token())).status).toBe(200);
    });
    test('When no Authorization header is sent, then 401 invalid_token', async () =>
      expectInvalidToken(await call(), /access token is required/));
    test('When the header is not a Bearer token, then 401 invalid_token', async () =>
      expectInvalidToken(
        await request(service.app).get(route).set('Authorization', 'Basic dXNlcjpwYXNz'),
        /Bearer <access token>/,
      ));
    test('When the bearer token is garbage, then 401 invalid_token', async () =>
      expectInvalidToken(await call('not-a-jwt'), /malformed/));
    test('When the token has expired beyond the clock skew, then 401 invalid_token', async () =>
      expectInvalidToken(await call(token({}, { expiresInSec: -120 })), /expired/));
    test('When the token is not valid yet, then 401 invalid_token', async () =>
      expectInvalidToken(await call(token({ nbf: Math.floor(Date.now() / 1000) + 600 })), /not valid yet/));
    test("When the token is signed by another key under the issuer's kid, then 401 invalid_token", async () => {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      expectInvalidToken(await call(token({}, { key: privateKey })), /invalid signature/);
    });
    test('When the token is unsigned (alg none), then 401 invalid_token', async () =>
      expectInvalidToken(await call(forgedTokens.unsigned(deskClaims())), /algorithm/));
    test("When the token is HS256 keyed with the issuer's public key, then 401 invalid_token", async () =>
      expectInvalidToken(
        await call(forgedTokens.hmacWithPublicKey(deskClaims(), service.issuer.publicKey, service.issuer.kid)),
        /algorithm/,
      ));
    test('When the token comes from another issuer, then 401 invalid_token', async () =>
      expectInvalidToken(await call(token({ iss: 'https://login.example.com/api/v1' })), /issuer/));
    test('When the token is meant for another audience, then 401 invalid_token', async () =>
      expectInvalidToken(await call(token({ aud: 'another-api' })), /audience/));
    test('When the token names a key the JWKS does not have, then 401 invalid_token', async () =>
      expectInvalidToken(await call(token({}, { kid: 'no-such-key' })), /unknown key/));
    test('When the token lacks the tenant_id claim or it is not a UUID, then 401 invalid_token', async () => {
      expectInvalidToken(await call(token({ tenant_id: undefined })), /required claims/);
      expectInvalidToken(await call(token({ tenant_id: 'acme' })), /not a UUID/);
    });

    test('When many requests arrive, then the JWKS is fetched once and served from the cache', async () => {
      await call(token()).expect(200);
      const before = service.issuer.jwksFetches();
      for (let i = 0; i < 5; i += 1) await call(token()).expect(200);
      expect(before).toBeGreaterThanOrEqual(1);
      expect(service.issuer.jwksFetches()).toBe(before);
    });

    test('When desk rotates to a new key, then its tokens are accepted after exactly one JWKS refetch, and old-key tokens still are', async () => {
      await call(token()).expect(200);
      await sleep(150); // past the refetch cooldown
      const before = service.issuer.jwksFetches();
      const rotated = service.issuer.rotate();
      const first = await call(token({}, { key: rotated.privateKey, kid: rotated.kid }));
      const again = await call(token({}, { key: rotated.privateKey, kid: rotated.kid }));
      const old = await call(token());
      expect([first.status, again.status, old.status]).toEqual([200, 200, 200]);
      expect(service.issuer.jwksFetches()).toBe(before + 1);
    });

    test('When tokens name unknown keys in a burst, then the JWKS is not refetched for each of them', async () => {
      const other = await options.start({});
      try {
        await request(other.app)
          .get(route)
          .set('Authorization', `Bearer ${other.issuer.token({ tenant_id: randomUUID() })}`)
          .expect(200);
        const before = other.issuer.jwksFetches();
        for (let i = 0; i < 5; i += 1) {
          const forged = other.issuer.token({ tenant_id: randomUUID() }, { kid: `unknown-${i}` });
          expectInvalidToken(await request(other.app).get(route).set('Authorization', `Bearer ${forged}`));
        }
        expect(other.issuer.jwksFetches()).toBe(before);
      } finally {
        await other.close();
      }
    });
  });
}
