import express, { type Request, type RequestHandler, type Response } from 'express';
import request from 'supertest';
import { bareServiceApp } from './support';

/** What each body looks like through res.json: ASCII, multi-byte UTF-8 (its length is bytes), nested, empty, a long page, and no JSON at all. */
const BODIES: Record<string, unknown> = {
  ascii: { id: '1', name: 'first', tags: ['a', 'b'], n: 42, ok: true, none: null },
  utf8: { name: 'Müller – Straße 😀', note: '\u2028 line separator' },
  empty: {},
  list: [1, 'two', { three: 3 }],
  page: { data: Array.from({ length: 200 }, (_, i) => ({ i, name: `Müller – Straße 😀 ${i}` })) },
  text: 'just a string',
  nothing: undefined,
};

/** The same answers from a service app (its res.json) and from a bare Express 5 app with strong ETags (Express's own). */
function appsAnswering(typed: boolean) {
  const handler = (key: string) => (_req: Request, res: Response) => {
    if (typed) res.type('application/problem+json');
    res.json(BODIES[key]);
  };
  const bare = express();
  bare.set('etag', 'strong');
  for (const key of Object.keys(BODIES)) bare.get(`/api/v1/answers/${key}`, handler(key));
  const { app } = bareServiceApp('json', (api) => {
    for (const key of Object.keys(BODIES)) {
      api.route({ method: 'get', path: `/answers/${key}`, operationId: `answer-${key}`, summary: key, tags: ['Answers'], scope: null, responses: { 200: { description: key } }, handler: handler(key) });
    }
  });
  return { bare, app };
}

const HEADERS = ['content-type', 'content-length', 'etag'];
const headersOf = (res: request.Response) => Object.fromEntries(HEADERS.map((name) => [name, res.headers[name]]));

describe('res.json of a service app', () => {
  test.each([false, true])('When a route answers each kind of body (type set first: %p), then status, type, length, ETag and bytes are what Express answers, for GET and HEAD', async (typed) => {
    const { bare, app } = appsAnswering(typed);
    for (const key of Object.keys(BODIES)) {
      for (const method of ['get', 'head'] as const) {
        const ours = await request(app)[method](`/api/v1/answers/${key}`).buffer(true).parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
        const theirs = await request(bare)[method](`/api/v1/answers/${key}`).buffer(true).parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
        expect([key, method, ours.status, headersOf(ours), (ours.body as Buffer).toString('utf8')]).toEqual([key, method, theirs.status, headersOf(theirs), (theirs.body as Buffer).toString('utf8')]);
      }
    }
  });

  test('When the caller holds the current ETag, then both answer 304 without a body', async () => {
    const { bare, app } = appsAnswering(false);
    for (const target of [app, bare]) {
      const first = await request(target).get('/api/v1/answers/utf8');
      const again = await request(target).get('/api/v1/answers/utf8').set('If-None-Match', first.headers['etag']!);
      expect([again.status, again.text, again.headers['content-length']]).toEqual([304, '', undefined]);
    }
  });
});

describe('the middleware every API request passes before its route', () => {
  test('When verifying the caller fails with an error of its own (a rejected promise), then the request gets a 500 problem document and the service goes on', async () => {
    const failing: RequestHandler = async (req) => {
      if (req.get('authorization')) throw new Error('the token store is gone');
    };
    const { app } = bareServiceApp(
      'chain',
      (api) => api.route({ method: 'get', path: '/open', operationId: 'open', summary: 'open', tags: ['Open'], scope: null, responses: { 200: { description: 'ok' } }, handler: (_req, res) => res.json({ ok: true }) }),
      { rateLimit: { limit: 1_000 }, authenticate: (req, res, next) => (req.get('authorization') ? failing(req, res, next) : next()) },
    );
    const failed = await request(app).get('/api/v1/open').set('Authorization', 'Bearer x');
    expect(failed.status).toBe(500);
    expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(failed.body.detail).not.toMatch(/token store/);
    const fine = await request(app).get('/api/v1/open');
    expect([fine.status, fine.body, fine.headers['x-ratelimit-limit']]).toEqual([200, { ok: true }, '1000']);
  });
});
