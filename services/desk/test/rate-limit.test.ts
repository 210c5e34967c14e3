import request from 'supertest';
import { startDesk, type TestDesk } from './support/desk';

const RATE_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
];

function expectRateHeaders(response: request.Response, limit: number) {
  for (const header of RATE_HEADERS) expect(response.headers[header]).toBeDefined();
  expect(response.headers['x-ratelimit-limit']).toBe(String(limit));
}

async function burst(app: Parameters<typeof request>[0], token: string, count: number) {
  const statuses: number[] = [];
  // Sequential in small parallel batches: fast, and the count stays exact.
  for (let i = 0; i < count; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, () =>
        request(app).get('/api/v1/me').set('Authorization', `Bearer ${token}`),
      ),
    );
    statuses.push(...batch.map((r) => r.status));
  }
  return statuses;
}

describe('rate limit, shared in Redis', () => {
  let desk: TestDesk;
  beforeAll(async () => {
    desk = await startDesk();
  });
  afterAll(() => desk.close());

  test('When a token makes 600 requests in a minute, then all pass with a falling X-RateLimit-Remaining and the 601st is a 429', async () => {
    const client = await desk.createClient();
    const token = await desk.token(client);
    const first = await request(desk.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(first.status).toBe(200);
    expectRateHeaders(first, 600);
    expect(first.headers['x-ratelimit-remaining']).toBe('599');
    expect(first.headers['ratelimit']).toMatch(/^"desk-api"; r=599; t=\d+$/);
    expect(first.headers['ratelimit-policy']).toMatch(/^"desk-api"; q=600; w=60/);

    const statuses = await burst(desk.app, token, 599);
    expect(statuses.every((s) => s === 200)).toBe(true);

    const over = await request(desk.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(over.status).toBe(429);
    expect(over.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(over.body).toMatchObject({ status: 429, type: 'urn:msp:problem:rate-limited' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expectRateHeaders(over, 600);
    expect(over.headers['x-ratelimit-remaining']).toBe('0');

    // Another client of the same tenant has its own budget.
    const other = await desk.token(await desk.createClient());
    expect((await request(desk.app).get('/api/v1/me').set('Authorization', `Bearer ${other}`)).status).toBe(200);
  });

  test('When two instances share Redis, then together they allow exactly the limit', async () => {
    const replica = await desk.replica();
    const token = await desk.token(await desk.createClient());
    const statuses = (await Promise.all([burst(desk.app, token, 350), burst(replica, token, 350)])).flat();
    expect(statuses.filter((s) => s === 200)).toHaveLength(600);
    expect(statuses.filter((s) => s === 429)).toHaveLength(100);
  });

  test('When a response is a 401 or a 404, then it still carries every rate-limit header', async () => {
    const unauthorized = await request(desk.app).get('/api/v1/me');
    expect(unauthorized.status).toBe(401);
    expectRateHeaders(unauthorized, 600);

    const token = await desk.token(await desk.createClient());
    const missing = await request(desk.app).get('/api/v1/no-such-route').set('Authorization', `Bearer ${token}`);
    expect(missing.status).toBe(404);
    expectRateHeaders(missing, 600);
    expect(missing.headers['x-ratelimit-remaining']).toBe('599');
  });
});

describe('rate limit of the token endpoint', () => {
  let desk: TestDesk;
  beforeAll(async () => {
    desk = await startDesk({ tokenRateLimitPerMinute: 3 });
  });
  afterAll(() => desk.close());

  test('When one address guesses secrets for one client id, then the fourth attempt in a minute is a 429', async () => {
    const client = await desk.createClient();
    const attempt = () =>
      request(desk.app)
        .post('/api/v1/auth/token')
        .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: 'guess' });
    for (let i = 0; i < 3; i += 1) {
      const response = await attempt();
      expect(response.status).toBe(401);
      expect(response.headers['x-ratelimit-limit']).toBe('3');
    }
    const blocked = await attempt();
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
    // Even the right secret waits: the limit does not depend on success.
    const right = await request(desk.app)
      .post('/api/v1/auth/token')
      .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret });
    expect(right.status).toBe(429);
  });
});

describe('rate limit without Redis (zero-setup mode)', () => {
  test('When no Redis is configured, then the limit holds in memory', async () => {
    const desk = await startDesk({ withRedis: false, rateLimitPerMinute: 600 });
    try {
      const token = await desk.token(await desk.createClient());
      const statuses = await burst(desk.app, token, 601);
      expect(statuses.filter((s) => s === 200)).toHaveLength(600);
      expect(statuses[600]).toBe(429);
    } finally {
      await desk.close();
    }
  });
});
