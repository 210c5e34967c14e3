import request from 'supertest';
import { bareServiceApp, kitApp } from './support';

const AUTH = { Authorization: 'Bearer alice:read:things' };

describe('problem documents', () => {
  const { app } = kitApp({ bodyLimit: '1kb' });

  function expectProblem(response: request.Response, status: number) {
    expect(response.status).toBe(status);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      status,
      title: expect.any(String),
      detail: expect.any(String),
      type: expect.any(String),
    });
    expect(response.body.request_id).toBe(response.headers['x-request-id']);
  }

  test('When the JSON is malformed, then it is a 400 problem document', async () => {
    const response = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .set('Content-Type', 'application/json')
      .send('{"name":');
    expectProblem(response, 400);
    expect(response.body.type).toBe('urn:msp:problem:malformed-body');
  });

  test('When any text of the body or the query holds the NUL character, then 400 names each field (PostgreSQL could not store it)', async () => {
    const body = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .send({ name: 'a\u0000b', parts: [{ start: '\u0000' }] });
    expectProblem(body, 400);
    expect(body.body.errors).toEqual([
      { field: 'name', message: 'must not contain the NUL character (U+0000)' },
      { field: 'parts[0].start', message: 'must not contain the NUL character (U+0000)' },
    ]);
    const query = await request(app).get('/api/v1/things').query({ page: '1\u0000' }).set(AUTH);
    expectProblem(query, 400);
    expect(query.body.errors).toEqual([{ field: 'page', message: 'must not contain the NUL character (U+0000)' }]);
  });

  test('When any text of the body holds a lone UTF-16 surrogate, then 400 names each field (json cannot store it)', async () => {
    const lone = 'must be well-formed Unicode (it holds a lone surrogate, such as \\ud800)';
    const response = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .set('Content-Type', 'application/json')
      .send('{"name":"a\\ud800b","parts":[{"start":"\\udfff"}]}');
    expectProblem(response, 400);
    expect(response.body.errors).toEqual([
      { field: 'name', message: lone },
      { field: 'parts[0].start', message: lone },
    ]);
    // A pair is one character and passes on to the schema's own checks.
    const paired = await request(app).post('/api/v1/things').set(AUTH).send({ name: 'ok \ud83d\ude00' });
    expect(paired.status).not.toBe(400);
  });

  test('When fields are wrong, missing or unknown, then the 400 lists each one by its path', async () => {
    const response = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .send({ size: 'big', extra: 1, parts: [{ start: '25:00' }] });
    expectProblem(response, 400);
    expect(response.body.type).toBe('urn:msp:problem:validation-error');
    expect(response.body.errors).toEqual(
      expect.arrayContaining([
        { field: 'name', message: 'is required' },
        { field: 'size', message: 'must be an integer' },
        { field: 'extra', message: 'is not a known field' },
        { field: 'parts[0].start', message: 'must be a valid time of day (HH:MM)' },
      ]),
    );
  });

  test('When a query parameter is out of range, then it is a 400 naming it', async () => {
    const response = await request(app).get('/api/v1/things?page=0').set(AUTH);
    expectProblem(response, 400);
    expect(response.body.errors).toEqual([{ field: 'page', message: 'must be >= 1' }]);
  });

  test('When the body is missing, then it is a 400', async () => {
    const response = await request(app).post('/api/v1/things').set(AUTH);
    expectProblem(response, 400);
  });

  test('When the route does not exist, inside or outside the API, then it is a 404 problem document', async () => {
    expectProblem(await request(app).get('/api/v1/nothing-here').set(AUTH), 404);
    expectProblem(await request(app).get('/nothing-here'), 404);
  });

  test('When a known path is asked with a method it does not have, then it is a 405 naming the allowed ones', async () => {
    const response = await request(app).put('/api/v1/things').set(AUTH).send({ name: 'x' });
    expectProblem(response, 405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
    expect(response.body.type).toBe('urn:msp:problem:method-not-allowed');
  });

  test('When a caller without a token sends a body, then it is refused with 401 before the body is read', async () => {
    const response = await request(app)
      .post('/api/v1/things')
      .send({ name: 'x'.repeat(5000) });
    expectProblem(response, 401);
  });

  test('When the body exceeds the limit, then it is a 413', async () => {
    const response = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .send({ name: 'x'.repeat(2000) });
    expectProblem(response, 413);
  });

  test('When the body is not JSON, then it is a 415 naming the accepted type', async () => {
    const response = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .set('Content-Type', 'text/plain')
      .send('name=x');
    expectProblem(response, 415);
    expect(response.body.detail).toContain('application/json');
  });

  test('When a handler fails like a bug, then the 500 tells the caller to contact support and leaks nothing', async () => {
    const response = await request(app).get('/api/v1/boom');
    expectProblem(response, 500);
    expect(response.body.detail).toContain('contact support');
    expect(response.body.detail).toContain(response.headers['x-request-id']);
    expect(JSON.stringify(response.body)).not.toMatch(/relation|stack|at /);
  });
});

/** Log lines are written at the end of the event loop's turn they were logged in. */
const loggedLinesWritten = () => new Promise((resolve) => setImmediate(resolve));

describe('request ids and logs', () => {
  test('When the caller sends X-Request-Id, then it is echoed and appears in the log lines of that request', async () => {
    const { app, logs } = kitApp();
    const response = await request(app).get('/api/v1/boom').set('X-Request-Id', 'abc-123');
    expect(response.headers['x-request-id']).toBe('abc-123');
    await loggedLinesWritten();
    const lines = logs.filter((line) => line.request_id === 'abc-123');
    expect(lines.map((line) => line.message)).toEqual(expect.arrayContaining(['unhandled error', 'request']));
    expect(lines.every((line) => line.service === 'kit')).toBe(true);
  });

  test('When the caller sends no usable X-Request-Id, then a UUID is assigned', async () => {
    const { app } = kitApp();
    const response = await request(app).get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('When a request carries a token or a secret, then no log line contains it', async () => {
    const { app, logger, logs } = kitApp();
    await request(app).get('/api/v1/things').set('Authorization', 'Bearer alice:read:things');
    logger.info('oops', { client_secret: 'hunter2', nested: { authorization: 'Bearer abc' } });
    await loggedLinesWritten();
    expect(logs.length).toBeGreaterThan(1);
    const text = JSON.stringify(logs);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('Bearer abc');
    expect(text).not.toContain('alice:read:things');
  });
});

describe('operational endpoints', () => {
  test('When /healthz, /readyz, /metrics, the OpenAPI document and the docs page are read, then they answer without a token', async () => {
    const { app } = kitApp();
    await request(app).get('/api/v1/things').set(AUTH);
    expect((await request(app).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await request(app).get('/readyz')).status).toBe(200);
    const metrics = await request(app).get('/metrics');
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.text).toMatch(/http_requests_total\{.*route="\/api\/v1\/things".*status="200"/);
    expect(metrics.text).toContain('http_request_duration_seconds_bucket');
    const openapi = await request(app).get('/api/v1/openapi.json');
    expect(openapi.body.openapi).toBe('3.1.0');
    expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(['/things', '/boom', '/slow']));
    const docs = await request(app).get('/api/v1/docs');
    expect(docs.headers['content-type']).toMatch(/^text\/html/);
    expect(docs.text).toContain('docs/swagger-ui-bundle.js');
  });
});

describe('deeply nested bodies', () => {
  const { app } = kitApp();
  const nested = (levels: number) => `{"name":"x","size":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;

  test('When a JSON body nests 200,000 levels deep, well under the body limit, then 400 naming the limit, not a stack overflow', async () => {
    const response = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .set('Content-Type', 'application/json')
      .send(nested(200_000));
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.errors).toEqual([
      { field: '(body)', message: 'must not nest arrays and objects more than 64 levels deep' },
    ]);
  });

  test('When a body nests 64 levels, then it is validated as usual; at 65 it is refused for its depth', async () => {
    const at64 = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .set('Content-Type', 'application/json')
      .send(nested(64));
    expect(at64.status).toBe(400);
    expect(at64.body.errors).toEqual([{ field: 'size', message: 'must be an integer' }]);
    const at65 = await request(app)
      .post('/api/v1/things')
      .set(AUTH)
      .set('Content-Type', 'application/json')
      .send(nested(65));
    expect(at65.status).toBe(400);
    expect(at65.body.errors).toEqual([
      { field: '(body)', message: 'must not nest arrays and objects more than 64 levels deep' },
    ]);
  });
});

describe('a transaction PostgreSQL rolled back for colliding with a concurrent one', () => {
  test.each([
    ['a deadlock (pg)', Object.assign(new Error('deadlock detected'), { code: '40P01' })],
    [
      'a serialization failure (pg)',
      Object.assign(new Error('could not serialize access due to concurrent update'), { code: '40001' }),
    ],
    [
      'a deadlock in a Prisma raw query',
      Object.assign(
        new Error(
          'Invalid `prisma.$queryRaw()` invocation: Raw query failed. Code: `40P01`. Message: `deadlock detected`',
        ),
        { code: 'P2010' },
      ),
    ],
  ])(
    'When a handler fails with %s, then the caller gets 503 concurrent-change with Retry-After, not a 500',
    async (_name, failure) => {
      const { app } = bareServiceApp('kit', (api) => {
        api.route({
          method: 'get',
          path: '/collide',
          operationId: 'collide',
          summary: 'Collide',
          tags: ['Things'],
          scope: 'read:things',
          responses: { 200: { description: 'OK' } },
          handler: async () => {
            throw failure;
          },
        });
      });
      const response = await request(app).get('/api/v1/collide').set('Authorization', 'Bearer alice:read:things');
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.body.type).toBe('urn:msp:problem:concurrent-change');
    },
  );
});
