import { generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { forgedTokens } from '@msp/testkit';
import { api, type Api } from './support/api';
import { startDesk, type TestClient, type TestDesk } from './support/desk';

// Token verification on desk's own routes: desk verifies the tokens it issues with the same rules
// link and hr apply (packages/auth), against its own key instead of its JWKS.
let desk: TestDesk;
let http: Api;
let client: TestClient;

beforeAll(async () => {
  desk = await startDesk();
  http = api(desk);
  client = await desk.createClient();
});
afterAll(() => desk.close());

const now = () => Math.floor(Date.now() / 1000);
function claims(overrides: Record<string, unknown> = {}) {
  return {
    iss: desk.issuer,
    aud: 'msp-api',
    sub: client.clientId,
    tenant_id: client.tenantId,
    scope: 'read:tickets',
    iat: now(),
    exp: now() + 3600,
    jti: randomUUID(),
    ...overrides,
  };
}
const sign = (payload: object, key = desk.signingKey.privateKey, kid = desk.signingKey.kid) =>
  jwt.sign(payload, key, { algorithm: 'ES256', keyid: kid });
const list = (token?: string) =>
  token ? http.get('/api/v1/tickets').set('Authorization', `Bearer ${token}`) : http.get('/api/v1/tickets');

async function expectInvalidToken(token: string | undefined) {
  const response = await list(token);
  expect(response.status).toBe(401);
  expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="msp", error="invalid_token"/);
  expect(response.body).toMatchObject({ status: 401, type: 'urn:msp:problem:invalid-token' });
}

describe('token verification on GET /tickets', () => {
  test("When desk's own token with read:tickets is sent, then it answers 200", async () => {
    expect((await list(await desk.token(client, 'read:tickets'))).status).toBe(200);
    expect((await list(sign(claims()))).status).toBe(200);
  });

  test('When no token is sent, then 401', () => expectInvalidToken(undefined));
  test('When the token is garbage, then 401', () => expectInvalidToken('garbage'));
  test('When the token has expired, then 401', () =>
    expectInvalidToken(sign(claims({ iat: now() - 7200, exp: now() - 3600 }))));
  test("When the token is signed by another key under desk's kid, then 401", () =>
    expectInvalidToken(sign(claims(), generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)));
  test('When the token is unsigned (alg none), then 401', () => expectInvalidToken(forgedTokens.unsigned(claims())));
  test("When the token is HS256 keyed with desk's public key, then 401", () =>
    expectInvalidToken(forgedTokens.hmacWithPublicKey(claims(), desk.signingKey.publicKey, desk.signingKey.kid)));
  test('When the issuer is wrong, then 401', () =>
    expectInvalidToken(sign(claims({ iss: 'https://evil.example/api/v1' }))));
  test('When the audience is wrong, then 401', () => expectInvalidToken(sign(claims({ aud: 'another-api' }))));

  test('When the token lacks read:tickets, then 403 naming it', async () => {
    const response = await list(await desk.token(client, 'read:users'));
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="msp", error="insufficient_scope", scope="read:tickets"',
    );
  });

  test('When the token has admin:tenant, then it satisfies read:tickets', async () => {
    expect((await list(await desk.token(client, 'admin:tenant'))).status).toBe(200);
  });
});
