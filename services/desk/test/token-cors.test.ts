import request from 'supertest';
import { ConfigError } from '@msp/http';
import { loadDeskConfig } from '../src/config';
import { startDesk, type TestClient, type TestDesk } from './support/desk';

const TOKEN = '/api/v1/auth/token';
const DOCS_ORIGIN = 'http://localhost:3003';

let desk: TestDesk;
let client: TestClient;

beforeAll(async () => {
  desk = await startDesk({ corsOrigins: [DOCS_ORIGIN] });
  client = await desk.createClient();
});
afterAll(() => desk.close());

describe('CORS_ORIGINS', () => {
  const BASE = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/desk' };

  test("When it is unset, then development allows the three services' own origins and production none", () => {
    expect(loadDeskConfig(BASE).corsOrigins).toEqual([
      'http://localhost:3001',
      'http://127.0.0.1:3001',
      'http://localhost:3002',
      'http://127.0.0.1:3002',
      'http://localhost:3003',
      'http://127.0.0.1:3003',
    ]);
    expect(
      loadDeskConfig({
        ...BASE,
        NODE_ENV: 'production',
        JWT_PRIVATE_KEY_FILE: '/run/secrets/key.pem',
        WEBHOOK_ENCRYPTION_KEY: 'd2ViaG9vay1rZXktZm9yLXRlc3RzLW5vdC1zZWNyZXQ=',
      }).corsOrigins,
    ).toEqual([]);
  });

  test('When PORT, LINK_PORT and HR_PORT move the services (pnpm start with DESK_PORT, LINK_PORT, HR_PORT), then the development origins follow them', () => {
    expect(loadDeskConfig({ ...BASE, PORT: '4101', LINK_PORT: '4102', HR_PORT: '4103' }).corsOrigins).toEqual([
      'http://localhost:4101',
      'http://127.0.0.1:4101',
      'http://localhost:4102',
      'http://127.0.0.1:4102',
      'http://localhost:4103',
      'http://127.0.0.1:4103',
    ]);
    expect(() => loadDeskConfig({ ...BASE, LINK_PORT: 'seventy' })).toThrow(ConfigError);
  });

  test('When it lists origins, then exactly those are allowed, also in production', () => {
    expect(
      loadDeskConfig({
        ...BASE,
        NODE_ENV: 'production',
        JWT_PRIVATE_KEY_FILE: '/k.pem',
        WEBHOOK_ENCRYPTION_KEY: 'd2ViaG9vay1rZXktZm9yLXRlc3RzLW5vdC1zZWNyZXQ=',
        CORS_ORIGINS: 'https://hr.example.com, https://link.example.com:8443/',
      }).corsOrigins,
    ).toEqual(['https://hr.example.com', 'https://link.example.com:8443']);
  });

  test('When an entry is not an origin (a path, a wildcard, no scheme), then the start is refused naming it', () => {
    for (const bad of ['https://hr.example.com/api', '*', 'hr.example.com', 'ftp://hr.example.com']) {
      expect(() => loadDeskConfig({ ...BASE, CORS_ORIGINS: bad })).toThrow(ConfigError);
      try {
        loadDeskConfig({ ...BASE, CORS_ORIGINS: bad });
      } catch (error) {
        expect((error as ConfigError).problems).toEqual([
          expect.stringContaining(`CORS_ORIGINS: "${bad}" is not an origin`),
        ]);
      }
    }
  });
});

describe('CORS on the token endpoint', () => {
  test("When the services listen on moved ports and CORS_ORIGINS is unset, then hr's reference page on its moved port gets its token from desk", async () => {
    const { corsOrigins } = loadDeskConfig({
      DATABASE_URL: desk.databaseUrl,
      PORT: '4101',
      LINK_PORT: '4102',
      HR_PORT: '4103',
    });
    const moved = await desk.replica({ corsOrigins });
    const preflight = await request(moved)
      .options(TOKEN)
      .set('Origin', 'http://localhost:4103')
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:4103');
    const token = await request(moved)
      .post(TOKEN)
      .set('Origin', 'http://127.0.0.1:4102')
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret })
      .expect(200);
    expect(token.headers['access-control-allow-origin']).toBe('http://127.0.0.1:4102');
    const old = await request(moved)
      .options(TOKEN)
      .set('Origin', 'http://localhost:3003')
      .set('Access-Control-Request-Method', 'POST');
    expect(old.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('When a listed origin sends the preflight of a token request, then desk allows POST with Authorization and Content-Type', async () => {
    const response = await request(desk.app)
      .options(TOKEN)
      .set('Origin', DOCS_ORIGIN)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization,content-type,x-requested-with');

    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(DOCS_ORIGIN);
    expect(response.headers['access-control-allow-methods']).toBe('POST');
    expect(response.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, X-Request-Id, X-Requested-With',
    );
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    expect(response.headers.vary).toMatch(/Origin/);
  });

  test('When a listed origin requests a token, then the answer is readable by that origin', async () => {
    const response = await request(desk.app)
      .post(TOKEN)
      .set('Origin', DOCS_ORIGIN)
      .type('form')
      .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret });

    expect(response.status).toBe(200);
    expect(response.body.token_type).toBe('Bearer');
    expect(response.headers['access-control-allow-origin']).toBe(DOCS_ORIGIN);
  });

  test('When an origin that is not listed asks, then it gets no CORS header and its preflight is not allowed', async () => {
    const preflight = await request(desk.app)
      .options(TOKEN)
      .set('Origin', 'https://evil.example')
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.status).not.toBe(204);

    const token = await request(desk.app)
      .post(TOKEN)
      .set('Origin', 'https://evil.example')
      .send({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret });
    expect(token.status).toBe(200);
    expect(token.headers['access-control-allow-origin']).toBeUndefined();
  });

  test("When a listed origin calls the rest of the API, then it gets no CORS header (the API's CORS stays off)", async () => {
    const list = await request(desk.app)
      .get('/api/v1/tickets')
      .set('Origin', DOCS_ORIGIN)
      .set('Authorization', `Bearer ${await desk.token(client)}`);
    expect(list.status).toBe(200);
    expect(list.headers['access-control-allow-origin']).toBeUndefined();

    const preflight = await request(desk.app)
      .options('/api/v1/tickets')
      .set('Origin', DOCS_ORIGIN)
      .set('Access-Control-Request-Method', 'GET');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});
