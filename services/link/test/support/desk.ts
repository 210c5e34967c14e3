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
  /** link's service credential, configured on desk as SERVICE_CLIENTS would (the scopes `pnpm start` grants link). */
  service: { clientId: string; clientSecret: string };
  /** Another service client, holding only these scopes (a desk configured before link needed more). */
  serviceClient(scopes: string[]): Promise<{ clientId: string; clientSecret: string }>;
  db: ReturnType<typeof createDb>;
  /** A new desk tenant with a client holding every scope; its id is what link's callers carry as tenant_id. */
  newTenant(): Promise<DeskTenant>;
  /**
   * The next request matching `method` and `path` is handled (and committed) as usual, but desk
   * holds its answer back for `ms` before sending it: a caller with a shorter timeout gives up on
   * work that was done.
   */
  answerLate(method: string, path: RegExp, ms: number): void;
  /**
   * Before desk handles the next request matching `method` and `path`, `work` runs to its end (a
   * technician's change landing between a caller's read and its write).
   */
  beforeNext(method: string, path: RegExp, work: () => Promise<unknown>): void;
  /** desk goes away (its port refuses connections) until `resume()`. */
  suspend(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

export interface DeskTenant {
  tenantId: string;
  token: string;
  /** A call to desk's API as this tenant's own (every-scope) client. */
  call(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any }>;
  createUser(overrides?: Record<string, unknown>): Promise<{ id: string; name: string; email: string }>;
  createClient(): Promise<{ id: string; name: string }>;
  createTicket(
    body: Record<string, unknown>,
  ): Promise<{ id: string; number: number; status: string; assignee_id: string | null }>;
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
    database: db,
    logger,
    signingKey: generateSigningKey(),
    settings: {
      issuer: apiUrl,
      audience: 'msp-api',
      rateLimitPerMinute: 100_000,
      tokenRateLimitPerMinute: 100_000,
      refreshTokenTtlDays: 30,
      rateLimitPrefix: uniquePrefix('desk'),
    },
  });
  const late: { method: string; path: RegExp; ms: number }[] = [];
  const before: { method: string; path: RegExp; work: () => Promise<unknown> }[] = [];
  const listener: http.RequestListener = async (req, res) => {
    const first = before.findIndex(
      (hook) => hook.method === req.method && hook.path.test((req.url ?? '').split('?')[0]!),
    );
    if (first >= 0) await before.splice(first, 1)[0]!.work();
    const index = late.findIndex(
      (hold) => hold.method === req.method && hold.path.test((req.url ?? '').split('?')[0]!),
    );
    if (index >= 0) {
      const [hold] = late.splice(index, 1);
      const end = res.end.bind(res) as (...args: unknown[]) => void;
      res.end = ((...args: unknown[]) => {
        setTimeout(() => end(...args), hold!.ms);
        return res;
      }) as typeof res.end;
    }
    app(req, res);
  };
  server.on('request', listener);
  const clients = createApiClientsRepository(db.db);
  async function serviceClient(scopes: string[]) {
    const made = { clientId: `link-${hex(4)}`, clientSecret: randomBytes(24).toString('base64url') };
    await ensureServiceClients(
      [{ client_id: made.clientId, client_secret: made.clientSecret, scopes }],
      clients,
      logger,
    );
    return made;
  }
  // link deactivates leavers' desk users (DELETE /users/:id), which takes admin:tenant.
  const service = await serviceClient(['read:users', 'read:tickets', 'write:tickets', 'admin:tenant']);

  async function raw(method: string, path: string, token: string | undefined, body?: unknown) {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
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
    serviceClient,
    db,
    async newTenant() {
      const clientId = `c-${hex(6)}`;
      const secret = randomBytes(18).toString('base64url');
      const { tenantId } = await ensureApiClient(clients, { tenant: `t-${hex(4)}`, clientId, secret, name: 'test' });
      const issued = await raw('POST', '/auth/token', undefined, {
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
      });
      const token = issued.body.access_token as string;
      const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) =>
        raw(method, path, token, body);
      const created = async (path: string, body: unknown) => {
        const response = await call('POST', path, body);
        if (response.status !== 201)
          throw new Error(`desk ${path}: ${response.status} ${JSON.stringify(response.body)}`);
        return response.body;
      };
      return {
        tenantId,
        token,
        call,
        createUser: (overrides = {}) =>
          created('/users', { name: `Tech ${hex(3)}`, email: `tech.${hex(4)}@msp.example`, ...overrides }),
        createClient: () => created('/clients', { name: `Client ${hex(4)}` }),
        createTicket: (body) => created('/tickets', { title: `Ticket ${hex(3)}`, ...body }),
      };
    },
    answerLate(method, path, ms) {
      late.push({ method, path, ms });
    },
    beforeNext(method, path, work) {
      before.push({ method, path, work });
    },
    suspend,
    async resume() {
      server = http.createServer(listener);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    async close() {
      if (server.listening) await suspend();
      await db.close();
      await database.drop();
    },
  };
}
