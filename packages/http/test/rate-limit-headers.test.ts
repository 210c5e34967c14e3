import { PassThrough } from 'node:stream';
import express, { type RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import request from 'supertest';
import { Redis } from 'ioredis';
import { createLogger, createRateLimiter } from '../src';

/*
 * createRateLimiter writes the rate-limit headers itself (the partition key remembered per caller:
 * issue 12). What a caller reads must stay exactly what express-rate-limit 8 writes with
 * `legacyHeaders` and `standardHeaders: 'draft-8'`: both limiters below count in memory, for the
 * same caller, and their headers are compared value by value.
 */

const logger = createLogger({ service: 'kit', level: 'error', stream: new PassThrough() });
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy'];

function appWith(...limiters: RequestHandler[]) {
  const app = express();
  app.use((req, _res, next) => {
    req.principal = { clientId: req.get('x-client') ?? 'alice', tenantId: 't1', scopes: [], tokenId: 'x', expiresAt: 0, serviceClient: false };
    next();
  });
  for (const limiter of limiters) app.use(limiter);
  app.get('/', (_req, res) => {
    res.json({ ok: true });
  });
  app.use(((error, _req, res, _next) => {
    res.status(error.status ?? 500).set(error.headers ?? {}).json({ code: error.code });
  }) as express.ErrorRequestHandler);
  return app;
}

const library = (limit: number, name: string) =>
  rateLimit({ limit, windowMs: 60_000, standardHeaders: 'draft-8', legacyHeaders: true, identifier: name, keyGenerator: (req) => `client:t1:${req.principal!.clientId}`, validate: false });
const ours = (limit: number, name: string) => createRateLimiter({ limit, windowMs: 60_000, prefix: 'rl:kit:', name, logger });

const headersOf = (response: request.Response) => Object.fromEntries(RATE_HEADERS.map((name) => [name, response.headers[name]]));

describe('rate-limit headers', () => {
  test('When a caller makes requests, then every response carries the headers express-rate-limit writes (draft-8 and legacy), value for value', async () => {
    const theirs = appWith(library(3, 'kit-api'));
    const mine = appWith(ours(3, 'kit-api'));
    for (const client of ['alice', 'bob']) {
      for (let i = 0; i < 4; i += 1) {
        const [expected, actual] = await Promise.all([request(theirs).get('/').set('x-client', client), request(mine).get('/').set('x-client', client)]);
        expect(actual.status).toBe(expected.status);
        // X-RateLimit-Reset and t= count seconds from each limiter's own first request: allow one apart.
        const seconds = (response: request.Response) => Number(/t=(\d+)/.exec(String(response.headers['ratelimit']))?.[1]);
        expect(Math.abs(seconds(actual) - seconds(expected))).toBeLessThanOrEqual(1);
        expect(Math.abs(Number(actual.headers['x-ratelimit-reset']) - Number(expected.headers['x-ratelimit-reset']))).toBeLessThanOrEqual(1);
        const comparable = (response: request.Response) => ({
          ...headersOf(response),
          'x-ratelimit-reset': undefined,
          ratelimit: String(response.headers['ratelimit']).replace(/t=\d+/, 't=?'),
        });
        expect(comparable(actual)).toEqual(comparable(expected));
        expect(actual.headers['ratelimit-policy']).toMatch(/^"kit-api"; q=3; w=60; pk=:[A-Za-z0-9+/=]+:$/);
        if (i === 3) expect(actual.headers['retry-after']).toBe(expected.headers['retry-after']);
      }
    }
  });

  test('When two limiters count a request, then RateLimit and RateLimit-Policy name both policies, in order, as the library appends them', async () => {
    const theirs = await request(appWith(library(5, 'outer'), library(2, 'inner'))).get('/');
    const mine = await request(appWith(ours(5, 'outer'), ours(2, 'inner'))).get('/');
    expect(mine.headers['ratelimit-policy']).toBe(theirs.headers['ratelimit-policy']);
    expect(mine.headers['ratelimit']).toBe(theirs.headers['ratelimit']);
    expect(mine.headers['ratelimit']).toMatch(/^"outer"; r=4; t=60, "inner"; r=1; t=60$/);
    expect(mine.headers['x-ratelimit-limit']).toBe('2');
  });

  test('When a limiter lets a request through uncounted (its Redis is down: fail open), then it adds no headers of its own and repeats none of an earlier limiter', async () => {
    // Nothing listens on port 1 and the client does not retry: every command of the inner
    // limiter's store fails at once.
    const redis = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, retryStrategy: () => null });
    redis.on('error', () => undefined);
    try {
      const failing = createRateLimiter({ limit: 2, windowMs: 60_000, redis, prefix: 'rl:kit:', name: 'inner', logger });
      const response = await request(appWith(ours(5, 'outer'), failing)).get('/');
      expect(response.status).toBe(200);
      expect(response.headers['ratelimit']).toMatch(/^"outer"; r=4; t=60$/);
      expect(response.headers['ratelimit-policy']).toMatch(/^"outer"; q=5; w=60; pk=:[A-Za-z0-9+/=]+:$/);
      expect(response.headers['x-ratelimit-limit']).toBe('5');
    } finally {
      // Refused and not retried, the client has ended; disconnect() would arm a 2 s timer of its own.
      if (redis.status !== 'end') redis.disconnect();
    }
  });
});
