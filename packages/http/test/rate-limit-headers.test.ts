import { PassThrough } from 'node:stream';
import express, { type RequestHandler } from 'express';
import request from 'supertest';
import { Redis } from 'ioredis';
import { createLogger, createRateLimiter } from '../src';

/*
 * What a caller reads of createRateLimiter: express-rate-limit's own headers with
 * `legacyHeaders` and `standardHeaders: 'draft-8'`, and a 429 problem with Retry-After.
 */

const logger = createLogger({ service: 'kit', level: 'error', stream: new PassThrough() });

function appWith(...limiters: RequestHandler[]) {
  const app = express();
  app.use((req, _res, next) => {
    req.principal = {
      clientId: req.get('x-client') ?? 'alice',
      tenantId: 't1',
      scopes: [],
      tokenId: 'x',
      expiresAt: 0,
      serviceClient: false,
    };
    next();
  });
  for (const limiter of limiters) app.use(limiter);
  app.get('/', (_req, res) => {
    res.json({ ok: true });
  });
  app.use(((error, _req, res, _next) => {
    res
      .status(error.status ?? 500)
      .set(error.headers ?? {})
      .json({ code: error.code });
  }) as express.ErrorRequestHandler);
  return app;
}

const ours = (limit: number, name: string) =>
  createRateLimiter({ limit, windowMs: 60_000, prefix: 'rl:kit:', name, logger });

describe('rate-limit headers', () => {
  test('When a caller makes requests, then every response carries the legacy and draft-8 headers, and past the limit a 429 with Retry-After', async () => {
    const app = appWith(ours(3, 'kit-api'));
    for (const client of ['alice', 'bob']) {
      const responses = [];
      for (let i = 0; i < 4; i += 1) responses.push(await request(app).get('/').set('x-client', client));
      expect(
        responses.map((r) => [r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']]),
      ).toEqual([
        [200, '3', '2'],
        [200, '3', '1'],
        [200, '3', '0'],
        [429, '3', '0'],
      ]);
      for (const response of responses) {
        expect(response.headers['ratelimit']).toMatch(/^"kit-api"; r=\d; t=(59|60)$/);
        expect(response.headers['ratelimit-policy']).toMatch(/^"kit-api"; q=3; w=60; pk=:[A-Za-z0-9+/=]+:$/);
        const reset = Number(response.headers['x-ratelimit-reset']) - Date.now() / 1000;
        expect(reset > 58 && reset <= 61).toBe(true);
      }
      const limited = responses[3]!;
      expect([limited.body.code, limited.headers['retry-after']]).toEqual([
        'rate-limited',
        expect.stringMatching(/^(59|60)$/),
      ]);
    }
  });

  test('When two limiters count a request, then RateLimit and RateLimit-Policy name both policies, in order', async () => {
    const mine = await request(appWith(ours(5, 'outer'), ours(2, 'inner'))).get('/');
    expect(mine.headers['ratelimit']).toMatch(/^"outer"; r=4; t=60, "inner"; r=1; t=60$/);
    expect(mine.headers['ratelimit-policy']).toMatch(
      /^"outer"; q=5; w=60; pk=:[A-Za-z0-9+/=]+:, "inner"; q=2; w=60; pk=:[A-Za-z0-9+/=]+:$/,
    );
    expect(mine.headers['x-ratelimit-limit']).toBe('2');
  });

  test(
    'When a limiter lets a request through uncounted (its Redis is down: fail open), then it ' +
      'adds no headers of its own and repeats none of an earlier limiter',
    async () => {
      // Nothing listens on port 1 and the client does not retry: every command of the inner
      // limiter's store fails at once.
      const redis = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, retryStrategy: () => null });
      redis.on('error', () => undefined);
      try {
        const failing = createRateLimiter({
          limit: 2,
          windowMs: 60_000,
          redis,
          prefix: 'rl:kit:',
          name: 'inner',
          logger,
        });
        const response = await request(appWith(ours(5, 'outer'), failing)).get('/');
        expect(response.status).toBe(200);
        expect(response.headers['ratelimit']).toMatch(/^"outer"; r=4; t=60$/);
        expect(response.headers['ratelimit-policy']).toMatch(/^"outer"; q=5; w=60; pk=:[A-Za-z0-9+/=]+:$/);
        expect(response.headers['x-ratelimit-limit']).toBe('5');
      } finally {
        // Refused and not retried, the client has ended; disconnect() would arm a 2 s timer of its own.
        if (redis.status !== 'end') redis.disconnect();
      }
    },
  );
});
