import type { RequestListener } from 'node:http';
import request from 'supertest';
import { verifySecret, type SecretVerifier } from '../src/auth/secrets';
import { api, type Api } from './support/api';
import { startDesk, type TestClient, type TestDesk } from './support/desk';

const TOKEN = '/api/v1/auth/token';
// As configured by default (TOKEN_CLIENT_FAILURE_LIMIT).
const FAILURE_LIMIT = 20;

/** Every secret check desk makes, as the cost named by the hash it checks against (`scrypt$N$r$p`). */
const checks: string[] = [];
const observedVerify: SecretVerifier = (secret, stored) => {
  checks.push(stored.split('$').slice(0, 4).join('$'));
  return verifySecret(secret, stored);
};

let desk: TestDesk;
let http: Api;
let replica: RequestListener;

beforeAll(async () => {
  desk = await startDesk({ verifySecret: observedVerify });
  http = api(desk);
  replica = await desk.replica();
});
afterAll(() => desk.close());

/** The default TRUST_PROXY believes X-Forwarded-For from loopback, where these requests come from. */
const tokenRequest = (client: { clientId: string }, secret: string, from: string, app?: RequestListener) =>
  (app ? request(app).post(TOKEN) : http.post(TOKEN))
    .set('X-Forwarded-For', from)
    .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: secret });

let nextNet = 1;
/** Addresses no other test uses. */
const addresses = (count: number) => {
  const net = nextNet++;
  return Array.from({ length: count }, (_, i) => `10.${net}.${Math.floor(i / 250)}.${(i % 250) + 1}`);
};

/** One wrong secret from each address, one after the other, half of them through a second desk instance sharing Redis. */
async function guessFrom(client: TestClient, from: string[]) {
  const statuses: number[] = [];
  for (const [i, address] of from.entries()) {
    const response = await tokenRequest(client, `guess-${i}`, address, i % 2 ? replica : undefined);
    if (response.status === 429) {
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ status: 429, type: 'urn:msp:problem:rate-limited' });
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(900);
    }
    statuses.push(response.status);
  }
  return statuses;
}

describe('guessing a client secret from many addresses', () => {
  test(
    'When 60 wrong secrets for one client_id come from 60 addresses (through two ' +
      'instances), then the first 20 are 401 and the other 40 are 429',
    async () => {
      const client = await desk.createClient();

      const statuses = await guessFrom(client, addresses(60));

      expect(statuses).toEqual([...Array(FAILURE_LIMIT).fill(401), ...Array(60 - FAILURE_LIMIT).fill(429)]);
      // Refused without checking the secret: even the right one waits, from an address never seen.
      expect((await tokenRequest(client, client.secret, addresses(1)[0]!)).status).toBe(429);
    },
  );

  test('When a client is under attack, then the address it got tokens from before still gets tokens, and other clients are not affected', async () => {
    const client = await desk.createClient();
    const [home, elsewhere] = addresses(2);
    expect((await tokenRequest(client, client.secret, home!)).status).toBe(200);

    const statuses = await guessFrom(client, addresses(40));
    expect(statuses.slice(FAILURE_LIMIT)).toEqual(Array(40 - FAILURE_LIMIT).fill(429));

    for (const app of [undefined, replica]) {
      const response = await tokenRequest(client, client.secret, home!, app);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
    }
    // Its own address still gets a wrong secret answered 401, not a pass.
    expect((await tokenRequest(client, 'wrong', home!)).status).toBe(401);
    expect((await tokenRequest(client, client.secret, elsewhere!)).status).toBe(429);

    const bystander = await desk.createClient();
    expect((await tokenRequest(bystander, bystander.secret, elsewhere!)).status).toBe(200);
  });

  test('When a client succeeds from new addresses, then its successes do not count towards the limit', async () => {
    const client = await desk.createClient();

    const statuses: number[] = [];
    for (const address of addresses(FAILURE_LIMIT + 5))
      statuses.push((await tokenRequest(client, client.secret, address)).status);

    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(await guessFrom(client, addresses(FAILURE_LIMIT + 1))).toEqual([...Array(FAILURE_LIMIT).fill(401), 429]);
  });

  test('When unknown and revoked client ids are guessed, then they are counted and refused alike', async () => {
    const unknown = { clientId: `nobody-${Date.now()}` };
    const revoked = await desk.createClient();
    await desk.db.apiClient.update({ where: { clientId: revoked.clientId }, data: { revokedAt: new Date() } });

    for (const client of [unknown, revoked]) {
      const statuses: number[] = [];
      for (const [i, address] of addresses(FAILURE_LIMIT + 1).entries())
        statuses.push((await tokenRequest(client, `guess-${i}`, address)).status);
      expect(statuses).toEqual([...Array(FAILURE_LIMIT).fill(401), 429]);
    }
  });
});

describe('no timing oracle', () => {
  /** The secret checks made while answering one token request. */
  async function checksOf(client: { clientId: string }, secret: string) {
    checks.length = 0;
    const response = await tokenRequest(client, secret, addresses(1)[0]!);
    return { status: response.status, checks: [...checks] };
  }

  test("When the client_id is unknown or revoked, then the 401 comes after the same scrypt work as a known client's wrong secret", async () => {
    const known = await desk.createClient();
    const revoked = await desk.createClient();
    await desk.db.apiClient.update({ where: { clientId: revoked.clientId }, data: { revokedAt: new Date() } });

    const wrongSecret = await checksOf(known, 'wrong');
    expect(wrongSecret).toEqual({ status: 401, checks: ['scrypt$16384$8$1'] });
    expect(await checksOf({ clientId: `nobody-${Date.now()}` }, 'wrong')).toEqual(wrongSecret);
    expect(await checksOf(revoked, revoked.secret)).toEqual(wrongSecret);
    expect(await checksOf(known, known.secret)).toEqual({ status: 200, checks: ['scrypt$16384$8$1'] });
  });
});

describe('guessing without Redis (zero-setup mode)', () => {
  test('When no Redis is configured, then the failures per client_id are limited in memory the same way', async () => {
    const memoryDesk = await startDesk({ withRedis: false, tokenClientFailureLimit: 3 });
    try {
      const client = await memoryDesk.createClient();
      const home = '192.0.2.1';
      const attempt = (secret: string, from: string) =>
        request(memoryDesk.app)
          .post(TOKEN)
          .set('X-Forwarded-For', from)
          .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: secret });
      expect((await attempt(client.secret, home)).status).toBe(200);
      const statuses = [];
      for (const address of ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4'])
        statuses.push((await attempt('guess', address)).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect((await attempt(client.secret, home)).status).toBe(200);
      expect((await attempt(client.secret, '198.51.100.5')).status).toBe(429);
    } finally {
      await memoryDesk.close();
    }
  });
});
