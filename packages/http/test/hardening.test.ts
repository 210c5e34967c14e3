import net from 'node:net';
import request from 'supertest';
import { commonConfigProperties, loadConfig, startServer } from '../src';
import { Type } from '@sinclair/typebox';
import { kitApp } from './support';

const token = { Authorization: 'Bearer c1:read:things' };

describe('security headers', () => {
  test('When any API response is sent, then it carries the headers of a JSON API: nothing may load or frame it, no referrer, no sniffing, HSTS', async () => {
    const { app } = kitApp();
    for (const path of ['/api/v1/things', '/api/v1/nowhere', '/healthz']) {
      const res = await request(app).get(path).set(token);
      expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });

  test('When the reference page is served, then it keeps its own policy, which lets it load its files', async () => {
    const { app } = kitApp();
    const res = await request(app).get('/api/v1/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
  });
});

describe('CORS (API_CORS_ORIGINS)', () => {
  test('When no origins are configured, then no response carries a CORS header (so a browser blocks every cross-origin call)', async () => {
    const { app } = kitApp();
    const preflight = await request(app)
      .options('/api/v1/things')
      .set({ Origin: 'https://portal.example.com', 'Access-Control-Request-Method': 'GET' });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
    const res = await request(app)
      .get('/api/v1/things')
      .set({ ...token, Origin: 'https://portal.example.com' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  test(
    'When an origin is listed, then its preflight is answered without a token and its ' +
      'responses may be read, with the paging and rate-limit headers exposed',
    async () => {
      const { app } = kitApp({ corsOrigins: ['https://portal.example.com'] });
      const preflight = await request(app).options('/api/v1/things').set({
        Origin: 'https://portal.example.com',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://portal.example.com');
      expect(preflight.headers['access-control-allow-methods']).toContain('POST');
      expect(preflight.headers['access-control-allow-headers']).toContain('Authorization');
      expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();

      const res = await request(app)
        .get('/api/v1/things')
        .set({ ...token, Origin: 'https://portal.example.com' });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe('https://portal.example.com');
      expect(res.headers['access-control-expose-headers']).toContain('X-RateLimit-Remaining');
      expect(res.headers['access-control-expose-headers']).toContain('Location');
      expect(res.headers['vary']).toContain('Origin');
    },
  );

  test('When another origin asks, then it gets no CORS header, also while one origin is listed', async () => {
    const { app } = kitApp({ corsOrigins: ['https://portal.example.com'] });
    const preflight = await request(app)
      .options('/api/v1/things')
      .set({ Origin: 'https://evil.example.net', 'Access-Control-Request-Method': 'GET' });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const res = await request(app)
      .get('/api/v1/things')
      .set({ ...token, Origin: 'https://evil.example.net' });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('When API_CORS_ORIGINS holds something that is not an origin, then the configuration is refused naming it', () => {
    const schema = Type.Object({ ...commonConfigProperties, DATABASE_URL: Type.Optional(Type.String()) });
    expect(
      loadConfig(schema, { API_CORS_ORIGINS: 'https://a.example.com, http://localhost:3002' }).API_CORS_ORIGINS,
    ).toBe('https://a.example.com, http://localhost:3002');
    for (const bad of ['*', 'https://a.example.com/docs', 'a.example.com', 'ftp://a.example.com']) {
      expect(() => loadConfig(schema, { API_CORS_ORIGINS: bad })).toThrow(/API_CORS_ORIGINS/);
    }
  });
});

/** Opens a connection, sends `sent`, and resolves with everything the server wrote until it closed. */
function rawExchange(port: number, sent: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(sent));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('server timeouts against slow clients', () => {
  test('When a client never finishes its headers, then the server answers 408 and closes the connection', async () => {
    const { app, logger } = kitApp();
    const running = await startServer({
      app,
      port: 0,
      host: '127.0.0.1',
      logger,
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    });
    try {
      const received = await rawExchange(running.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await running.close();
    }
  });

  test('When a client sends its headers but never the announced body, then the server answers 408 and closes the connection', async () => {
    const { app, logger } = kitApp();
    const running = await startServer({
      app,
      port: 0,
      host: '127.0.0.1',
      logger,
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    });
    try {
      const received = await rawExchange(
        running.port,
        'POST /api/v1/things HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ' +
          'c1:read:things\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":',
      );
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await running.close();
    }
  });

  test('When a client is quick, then the same limits let its request through', async () => {
    const { app, logger } = kitApp();
    const running = await startServer({
      app,
      port: 0,
      host: '127.0.0.1',
      logger,
      headersTimeoutMs: 300,
      requestTimeoutMs: 600,
    });
    try {
      const received = await rawExchange(running.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(received).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      await running.close();
    }
  });
});
