import request from 'supertest';
import { startHr, type TestHr } from './support/hr';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

describe('Operations endpoints', () => {
  test('When /healthz is asked without a token, then it answers 200', async () => {
    const response = await request(hr.app).get('/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  test('When the database and Redis are reachable, then /readyz answers 200 naming both checks', async () => {
    const response = await request(hr.app).get('/readyz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
  });

  test('When the database cannot be reached, then /readyz answers 503 and /healthz still 200', async () => {
    const broken = await startHr({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/nowhere' });
    try {
      const ready = await request(broken.app).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'not_ready', checks: { database: 'failing', redis: 'ok' } });
      expect((await request(broken.app).get('/healthz')).status).toBe(200);
    } finally {
      await broken.close();
    }
  });

  test('When /metrics is asked after API traffic, then it answers Prometheus text with http_requests_total by route', async () => {
    await request(hr.app).get('/api/v1/employees').set('Authorization', `Bearer ${hr.token()}`).expect(200);

    const response = await request(hr.app).get('/metrics');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(response.text).toContain('# TYPE http_requests_total counter');
    expect(response.text).toMatch(/http_requests_total\{[^}]*route="\/api\/v1\/employees"[^}]*status="200"[^}]*\} \d+/);
    expect(response.text).toContain('service="hr"');
  });
});

describe('API description', () => {
  test('When /api/v1/openapi.json is asked without a token, then it is OpenAPI 3.1 listing every route with its scope', async () => {
    const response = await request(hr.app).get('/api/v1/openapi.json');

    expect(response.status).toBe(200);
    const doc = response.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('HR API (hr)');
    expect(doc.info.description).toContain('read:hr');
    expect(doc.servers).toEqual([{ url: '/api/v1' }]);
    const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /me getCaller',
        'GET /employees listEmployees',
        'GET /employees/{id} getEmployee',
        'POST /employees createEmployee',
        'PATCH /employees/{id} updateEmployee',
      ].sort(),
    );
    expect(doc.paths['/employees'].get.security).toEqual([{ oauth2: ['read:hr'] }]);
    expect(doc.paths['/employees'].post.security).toEqual([{ oauth2: ['write:hr'] }]);
    expect(doc.paths['/employees/{id}'].patch.security).toEqual([{ oauth2: ['write:hr'] }]);
    expect(doc.paths['/employees'].post.responses).toHaveProperty('409');
    expect(doc.paths['/employees/{id}'].patch.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/UpdateEmployeeRequest' });
    expect(doc.components.schemas.CreateEmployeeRequest.properties.personnel_number.pattern).toBe('^[0-9]{1,20}$');
    expect(doc.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(`${hr.issuer.issuer}/auth/token`);
  });

  test('When /api/v1/docs is asked without a token, then it is an HTML reference of the routes', async () => {
    const response = await request(hr.app).get('/api/v1/docs');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.text).toContain('HR API (hr)');
    expect(response.text).toContain('id="updateEmployee"');
  });
});

describe('Cross-cutting behaviour', () => {
  test('When a caller sends X-Request-Id, then it is echoed; otherwise one is generated', async () => {
    const echoed = await request(hr.app).get('/healthz').set('X-Request-Id', 'trace-42');
    const generated = await request(hr.app).get('/healthz');

    expect(echoed.headers['x-request-id']).toBe('trace-42');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('When a route does not exist, then it answers a 404 problem document', async () => {
    const response = await request(hr.app).get('/api/v1/nothing-here');

    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({ status: 404, type: 'urn:msp:problem:route-not-found' });
  });

  test('When API responses are sent, errors included, then they carry the rate-limit headers', async () => {
    const ok = await request(hr.app).get('/api/v1/employees').set('Authorization', `Bearer ${hr.token()}`);
    const unauthorized = await request(hr.app).get('/api/v1/employees');

    for (const response of [ok, unauthorized]) {
      expect(response.headers['x-ratelimit-limit']).toBe('600');
      expect(Number(response.headers['x-ratelimit-remaining'])).toBeLessThan(600);
      expect(response.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
      expect(response.headers['ratelimit-policy']).toMatch(/^"hr-api"; q=600; w=60/);
      expect(response.headers.ratelimit).toMatch(/^"hr-api"; r=\d+; t=\d+/);
    }
  });

  test('When a token exceeds its limit, then it gets 429 with Retry-After while another token is still served', async () => {
    const limited = await startHr({ databaseUrl: hr.databaseUrl, settings: { rateLimitPerMinute: 2 } });
    try {
      const token = limited.token();
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await request(limited.app).get('/api/v1/employees').set('Authorization', `Bearer ${token}`)).status);
      const over = await request(limited.app).get('/api/v1/employees').set('Authorization', `Bearer ${token}`);
      const other = await request(limited.app).get('/api/v1/employees').set('Authorization', `Bearer ${limited.token()}`);

      expect(statuses).toEqual([200, 200, 429]);
      expect(over.status).toBe(429);
      expect(over.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(over.body).toMatchObject({ status: 429, type: 'urn:msp:problem:rate-limited' });
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect(over.headers['x-ratelimit-remaining']).toBe('0');
      expect(other.status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
