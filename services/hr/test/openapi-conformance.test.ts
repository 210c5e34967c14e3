import type http from 'node:http';
import request from 'supertest';
import { createConformanceChecker, recordConformance } from '@msp/testkit';
import { startHr, type TestHr } from './support/hr';
import { employeeWith } from './support/employees';

// Every answer hr gives its tests is compared with the OpenAPI document it serves (startHr's
// `conformance: true` and test/support/conformance-setup.ts). These tests show that comparison at
// work, and that the formats a route answers in are in its document.

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

describe('Every format a route answers is in its document', () => {
  test(
    'When the working-time record is asked as CSV, then its content type is one the ' +
      'served document declares for that 200, and the body matches it',
    async () => {
      const e = await employeeWith(hr, null, []);
      const response = await request(hr.app)
        .get(`/api/v1/employees/${e.id}/working-time?from=2026-11-02&to=2026-11-08&format=csv`)
        .set('Authorization', e.auth);
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');

      const document = (await request(hr.app).get('/api/v1/openapi.json').expect(200)).body;
      const content = document.paths['/employees/{id}/working-time'].get.responses['200'].content;
      expect(Object.keys(content).sort()).toEqual(['application/json', 'text/csv']);
      const checker = createConformanceChecker(document);
      expect(() => checker.check('get', `/api/v1/employees/${e.id}/working-time?format=csv`, response)).not.toThrow();
    },
  );

  test('When the working-time record is asked as JSON, then the body matches the JSON schema of the same 200', async () => {
    const e = await employeeWith(hr, null, []);
    const response = await request(hr.app)
      .get(`/api/v1/employees/${e.id}/working-time?from=2026-11-02&to=2026-11-08`)
      .set('Authorization', e.auth);
    expect(response.status).toBe(200);
    const document = (await request(hr.app).get('/api/v1/openapi.json').expect(200)).body;
    const checker = createConformanceChecker(document);
    expect(() => checker.check('get', `/api/v1/employees/${e.id}/working-time`, response)).not.toThrow();
    expect(() =>
      checker.check('get', `/api/v1/employees/${e.id}/working-time`, {
        ...response,
        body: { ...response.body, days: 'none' },
      }),
    ).toThrow(/does not match the schema/);
  });
});

describe('The recorder that checks every answer a suite receives', () => {
  // A service of one route, whose document says it answers JSON with a `Retry-After` in seconds.
  const document = {
    openapi: '3.1.0',
    info: { title: 'probe', version: '1' },
    paths: {
      '/things/{id}': {
        get: {
          responses: {
            200: {
              description: 'A thing.',
              headers: { 'Retry-After': { schema: { type: 'integer', minimum: 1 } } },
              content: {
                'application/json': {
                  schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
                },
              },
            },
          },
        },
      },
    },
    components: {
      responses: {
        Error404: {
          description: 'Not found.',
          content: { 'application/problem+json': { schema: { type: 'object' } } },
        },
      },
    },
  };
  const service =
    (answer: (res: http.ServerResponse) => void): http.RequestListener =>
    (_req, res) =>
      answer(res);

  test('When an answer is a content type its document does not declare, then the recorder names the test, the request and the type', async () => {
    const recorder = await recordConformance(
      service((res) => res.writeHead(200, { 'Content-Type': 'text/csv; charset=utf-8' }).end('id\r\n1\r\n')),
      document,
    );
    try {
      await request(recorder.app).get('/api/v1/things/1').expect(200);
      const [violation, ...more] = recorder.takeViolations();
      expect(more).toEqual([]);
      expect(violation).toContain(expect.getState().currentTestName);
      expect(violation).toMatch(
        /GET \/api\/v1\/things\/1 answered 200: content type "text\/csv" is not one of application\/json/,
      );
    } finally {
      recorder.dispose();
    }
  });

  test('When a documented header is not of its schema (Retry-After: undefined), or the body breaks the schema, then the recorder reports each', async () => {
    let answer: (res: http.ServerResponse) => void = (res) =>
      res.writeHead(200, { 'Content-Type': 'application/json', 'Retry-After': 'undefined' }).end('{"id":"1"}');
    const recorder = await recordConformance((_req, res) => answer(res), document);
    try {
      await request(recorder.app).get('/api/v1/things/1').expect(200);
      expect(recorder.takeViolations()).toEqual([
        expect.stringMatching(/header Retry-After: "undefined" does not match its schema/),
      ]);

      answer = (res) =>
        res.writeHead(200, { 'Content-Type': 'application/json', 'Retry-After': '5' }).end('{"name":"x"}');
      await request(recorder.app).get('/api/v1/things/1').expect(200);
      expect(recorder.takeViolations()).toEqual([
        expect.stringMatching(/the body does not match the schema: data must have required property 'id'/),
      ]);

      answer = (res) =>
        res.writeHead(200, { 'Content-Type': 'application/json', 'Retry-After': '5' }).end('{"id":"1"}');
      await request(recorder.app).get('/api/v1/things/1').expect(200);
      expect(recorder.takeViolations()).toEqual([]);
    } finally {
      recorder.dispose();
    }
  });

  test('When a status is not documented for the operation, then the recorder reports it', async () => {
    const recorder = await recordConformance(
      service((res) => res.writeHead(409, { 'Content-Type': 'application/json' }).end('{"id":"1"}')),
      document,
    );
    try {
      await request(recorder.app).get('/api/v1/things/1').expect(409);
      expect(recorder.takeViolations()).toEqual([
        expect.stringMatching(/status 409 is not documented for GET \/things\/\{id\}/),
      ]);
    } finally {
      recorder.dispose();
    }
  });
});
