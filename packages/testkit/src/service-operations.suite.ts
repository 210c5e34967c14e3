import type http from 'node:http';
import request from 'supertest';

export interface OperatedService {
  app: http.RequestListener;
  databaseUrl: string;
  /** A valid token with admin:tenant for a fresh tenant. */
  token(): string;
  close(): Promise<void>;
}

export interface ServiceOperationsSuiteOptions {
  /** The service name as it appears in metrics labels and rate-limit policy names. */
  service: string;
  /** A protected GET route that answers 200 to `admin:tenant`. */
  route: string;
  start(options: { databaseUrl?: string; rateLimitPerMinute?: number }): Promise<OperatedService>;
}

/**
 * What every service answers the same way: health,
 * readiness, metrics, request ids, unknown routes, rate-limit headers and 429.
 */
export function describeServiceOperations(options: ServiceOperationsSuiteOptions) {
  const { service: name, route } = options;
  let service: OperatedService;
  const authorized = (svc: OperatedService, token = svc.token()) =>
    request(svc.app).get(route).set('Authorization', `Bearer ${token}`);

  describe(`${name}: operations endpoints and cross-cutting behaviour`, () => {
    beforeAll(async () => {
      service = await options.start({});
    });
    afterAll(() => service.close());

    test('When /healthz is asked without a token, then it answers 200', async () => {
      const response = await request(service.app).get('/healthz');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ok' });
    });

    test('When the database and Redis are reachable, then /readyz answers 200 naming both checks', async () => {
      const response = await request(service.app).get('/readyz');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
    });

    test('When the database cannot be reached, then /readyz answers 503 and /healthz still 200', async () => {
      const broken = await options.start({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/nowhere' });
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
      await authorized(service).expect(200);
      const response = await request(service.app).get('/metrics');
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(response.text).toContain('# TYPE http_requests_total counter');
      const escaped = route.replace(/\//g, '\\/');
      expect(response.text).toMatch(
        new RegExp(`http_requests_total\\{[^}]*route="${escaped}"[^}]*status="200"[^}]*\\} \\d+`),
      );
      expect(response.text).toContain(`service="${name}"`);
    });

    test('When a caller sends X-Request-Id, then it is echoed; otherwise one is generated', async () => {
      const echoed = await request(service.app).get('/healthz').set('X-Request-Id', 'trace-42');
      const generated = await request(service.app).get('/healthz');
      expect(echoed.headers['x-request-id']).toBe('trace-42');
      expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    test('When API responses are sent, errors included, then they carry the security headers of a JSON API and no CORS header unless configured', async () => {
      for (const response of [
        await authorized(service),
        await request(service.app).get(route),
        await request(service.app).get('/api/v1/nothing-here'),
      ]) {
        expect(response.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
        expect(response.headers['x-frame-options']).toBe('DENY');
        expect(response.headers['x-content-type-options']).toBe('nosniff');
        expect(response.headers['referrer-policy']).toBe('no-referrer');
        expect(response.headers['x-powered-by']).toBeUndefined();
      }
      const other = await authorized(service).set('Origin', 'https://elsewhere.example.com');
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    });

    test('When a route does not exist, then it answers a 404 problem document', async () => {
      const response = await request(service.app).get('/api/v1/nothing-here');
      expect(response.status).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ status: 404, type: 'urn:msp:problem:route-not-found' });
    });

    test('When API responses are sent, errors included, then they carry the rate-limit headers', async () => {
      const ok = await authorized(service);
      const unauthorized = await request(service.app).get(route);
      for (const response of [ok, unauthorized]) {
        expect(response.headers['x-ratelimit-limit']).toBe('600');
        expect(Number(response.headers['x-ratelimit-remaining'])).toBeLessThan(600);
        expect(response.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
        expect(response.headers['ratelimit-policy']).toMatch(new RegExp(`^"${name}-api"; q=600; w=60`));
        expect(response.headers.ratelimit).toMatch(new RegExp(`^"${name}-api"; r=\\d+; t=\\d+`));
      }
    });

    test('When a token exceeds its limit, then it gets 429 with Retry-After while another token is still served', async () => {
      const limited = await options.start({ databaseUrl: service.databaseUrl, rateLimitPerMinute: 2 });
      try {
        const token = limited.token();
        const statuses = [];
        for (let i = 0; i < 3; i += 1) statuses.push((await authorized(limited, token)).status);
        const over = await authorized(limited, token);
        const other = await authorized(limited);
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
}
