import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createTestDatabase, type DatabaseOptions } from '@msp/db';
import { createLogger } from '@msp/http';
import { connectedRedis, freshModule, testOutbound, testWebhookSecrets, uniquePrefix } from '@msp/testkit';
import { createDeskApp, type DeskSettings } from '../../src/app';
import { createApiClientsRepository } from '../../src/auth/api-clients.repository';
import { ensureApiClient } from '../../src/auth/bootstrap';
import type { SecretVerifier } from '../../src/auth/secrets';
import { generateSigningKey, type SigningKey } from '../../src/auth/signing-key';
import { createDb, MIGRATIONS_DIR, type DeskDatabase } from '../../src/db';
import { createOracle, type Oracle } from './oracle';
import { api } from './api';
import type * as DeskApp from '../../src/app';

export interface TestClient {
  clientId: string;
  secret: string;
  tenantId: string;
  tenant: string;
}

export interface TestDesk {
  app: http.RequestListener;
  /** The key desk signs with (to forge near-miss tokens in tests). */
  signingKey: SigningKey;
  /** The OpenAPI document desk serves at /api/v1/openapi.json (as plain JSON). */
  openapi: Record<string, any>;
  /** Base URL of the listening server (its issuer is `${url}/api/v1`). */
  url: string;
  issuer: string;
  /** What is stored, read through Prisma Client (test/support/oracle.ts), not through desk's own queries. */
  db: Oracle;
  /** desk's own database (createDb), as the app uses it. */
  database: DeskDatabase;
  databaseUrl: string;
  createClient(options?: { scopes?: string[]; tenant?: string }): Promise<TestClient>;
  /**
   * A second desk instance on the same database, key and Redis prefix (another replica), with its
   * own Prisma client and its own copy of every module: nothing in memory is shared, as between
   * two processes. `settings` change some of its settings (a shorter export idle timeout).
   */
  replica(settings?: Partial<DeskSettings>, options?: { pool?: DatabaseOptions }): Promise<http.RequestListener>;
  /** An access token obtained through the real token endpoint. */
  token(client: TestClient, scope?: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * desk as it runs in production, in-process: its own fresh database, real
 * Redis for the rate limiter (under a prefix of its own), a real signing key,
 * listening on a free port so the issuer URL is a real one.
 */
export async function startDesk(
  // readUrl: DATABASE_READ_URL (test/read-replica.test.ts).
  overrides: Partial<DeskSettings> & { withRedis?: boolean; verifySecret?: SecretVerifier; readUrl?: string } = {},
): Promise<TestDesk> {
  const database = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR });
  const deskDatabase = createDb(database.url, { readUrl: overrides.readUrl });
  const db = createOracle(database.url);
  const logger = createLogger({ service: 'desk', level: 'error' });
  const redis = overrides.withRedis === false ? undefined : await connectedRedis(logger);
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${url}/api/v1`;
  const signingKey = generateSigningKey();
  const settings: DeskSettings = {
    issuer,
    audience: 'msp-api',
    rateLimitPerMinute: 600,
    tokenRateLimitPerMinute: 1000,
    refreshTokenTtlDays: 30,
    rateLimitPrefix: uniquePrefix('desk'),
    ...overrides,
  };
  const { verifySecret } = overrides;
  const {
    app,
    openapi,
    close: closeApp,
  } = createDeskApp({
    database: deskDatabase,
    redis,
    logger,
    signingKey,
    settings,
    verifySecret,
    outbound: testOutbound(),
    webhookSecrets: testWebhookSecrets(),
  });
  const replicas: Redis[] = [];
  const closeReplicas: (() => Promise<void>)[] = [];
  const replicaDbs: DeskDatabase[] = [];
  server.on('request', app);
  const clients = createApiClientsRepository(deskDatabase.db);

  const desk: TestDesk = {
    app,
    signingKey,
    openapi: JSON.parse(JSON.stringify(openapi)),
    url,
    issuer,
    db,
    database: deskDatabase,
    databaseUrl: database.url,
    async createClient(options = {}) {
      const tenant = options.tenant ?? `t-${randomBytes(4).toString('hex')}`;
      const clientId = `c-${randomBytes(6).toString('hex')}`;
      const secret = randomBytes(18).toString('base64url');
      const { tenantId } = await ensureApiClient(clients, {
        tenant,
        clientId,
        secret,
        name: 'test',
        scopes: options.scopes,
      });
      return { clientId, secret, tenantId, tenant };
    },
    async replica(changed = {}, replicaOptions = {}) {
      const replicaRedis = redis ? await connectedRedis(logger) : undefined;
      if (replicaRedis) replicas.push(replicaRedis);
      const isolated = freshModule<typeof DeskApp>(path.resolve(__dirname, '../../src/app'));
      // The replica has a database of its own (its own pool), from the shared module.
      const replicaDb = createDb(database.url, replicaOptions.pool);
      replicaDbs.push(replicaDb);
      const replica = isolated.createDeskApp({
        database: replicaDb,
        redis: replicaRedis,
        logger,
        signingKey,
        settings: { ...settings, ...changed },
        verifySecret,
        outbound: testOutbound(),
        webhookSecrets: testWebhookSecrets(),
      });
      closeReplicas.push(replica.close);
      return replica.app;
    },
    async token(client, scope) {
      const response = await api(desk)
        .post('/api/v1/auth/token')
        .send({
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: client.secret,
          ...(scope ? { scope } : {}),
        });
      if (response.status !== 200)
        throw new Error(`token request failed: ${response.status} ${JSON.stringify(response.body)}`);
      return response.body.access_token as string;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all([closeApp(), ...closeReplicas.map((close) => close())]);
      await Promise.all([deskDatabase.close(), db.$disconnect()]);
      await redis?.quit();
      await Promise.all(replicas.map((r) => r.quit()));
      await Promise.all(replicaDbs.map((d) => d.close()));
      await database.drop();
    },
  };
  return desk;
}
