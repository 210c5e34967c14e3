import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createTestDatabase } from '@msp/db';
import { createLogger } from '@msp/http';
import { testWebhookSecrets, uniquePrefix } from '@msp/testkit';
// desk itself, as built (its dist/): the real token endpoint, users and tickets, on its own database.
import { createDeskApp } from '@msp/desk/dist/app';
import { createApiClientsRepository } from '@msp/desk/dist/auth/api-clients.repository';
import { ensureApiClient, ensureServiceClients } from '@msp/desk/dist/auth/bootstrap';
import { generateSigningKey } from '@msp/desk/dist/auth/signing-key';
import { createDb, MIGRATIONS_DIR } from '@msp/desk/dist/db';

export interface RealDesk {
  /** desk's API base, what link gets as DESK_API_URL. */
  apiUrl: string;
  /** link's service credential, configured on desk as SERVICE_CLIENTS would. */
  service: { clientId: string; clientSecret: string };
  db: ReturnType<typeof createDb>;
  /** A new desk tenant with a client holding every scope; its id is what link's callers carry as tenant_id. */
  newTenant(): Promise<DeskTenant>;
  /** desk goes away (its port refuses connections) until `resume()`. */
  suspend(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

export interface DeskTenant {
  tenantId: string;
  token: string;
  /** A call to desk's API as this tenant's own (every-scope) client. */
  call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: any }>;
  createUser(overrides?: Record<string, unknown>): Promise<{ id: string; name: string; email: string }>;
  createClient(): Promise<{ id: string; name: string }>;
  createTicket(body: Record<string, unknown>): Promise<{ id: string; number: number; status: string; assignee_id: string | null }>;
}

const hex = (n: number) => randomBytes(n).toString('hex');

export async function startRealDesk(): Promise<RealDesk> {
  const database = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR });
  const db = createDb(database.url);
  const logger = createLogger({ service: 'desk', level: 'error' });
  let server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const apiUrl = `http://127.0.0.1:${port}/api/v1`;
  const { app } = createDeskApp({
    webhookSecrets: testWebhookSecrets(),
    db,
    logger,
    signingKey: generateSigningKey(),
    settings: { issuer: apiUrl, audience: 'msp-api', rateLimitPerMinute: 100_000, tokenRateLimitPerMinute: 100_000, refreshTokenTtlDays: 30, rateLimitPrefix: uniquePrefix('desk') },
  });
  server.on('request', app);
  const clients = createApiClientsRepository(db);
  const service = { clientId: `link-${hex(4)}`, clientSecret: randomBytes(24).toString('base64url') };
  await ensureServiceClients([{ client_id: service.clientId, client_secret: service.clientSecret, scopes: ['read:users', 'read:tickets', 'write:tickets'] }], clients, logger);

  async function raw(method: string, path: string, token: string | undefined, body?: unknown) {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  async function suspend() {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  return {
    apiUrl,
    service,
    db,
    async newTenant() {
      const clientId = `c-${hex(6)}`;
      const secret = randomBytes(18).toString('base64url');
      const { tenantId } = await ensureApiClient(clients, { tenant: `t-${hex(4)}`, clientId, secret, name: 'test' });
      const issued = await raw('POST', '/auth/token', undefined, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret });
      const token = issued.body.access_token as string;
      const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => raw(method, path, token, body);
      const created = async (path: string, body: unknown) => {
        const response = await call('POST', path, body);
        if (response.status !== 201) throw new Error(`desk ${path}: ${response.status} ${JSON.stringify(response.body)}`);
        return response.body;
      };
      return {
        tenantId,
        token,
        call,
        createUser: (overrides = {}) => created('/users', { name: `Tech ${hex(3)}`, email: `tech.${hex(4)}@msp.example`, ...overrides }),
        createClient: () => created('/clients', { name: `Client ${hex(4)}` }),
        createTicket: (body) => created('/tickets', { title: `Ticket ${hex(3)}`, ...body }),
      };
    },
    suspend,
    async resume() {
      server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    async close() {
      if (server.listening) await suspend();
      await db.$disconnect();
      await database.drop();
    },
  };
}
