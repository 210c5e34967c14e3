import type http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createTestDatabase, type TestDatabase } from '@msp/db';
import { createLogger } from '@msp/http';
import { startTestIssuer, TEST_REDIS_URL, uniquePrefix, type TestIssuer } from '@msp/testkit';
import { createHrApp, type HrSettings } from '../../src/app';
import { createDb, MIGRATIONS_DIR, type Db } from '../../src/db';

export interface TestHr {
  app: http.RequestListener;
  db: Db;
  databaseUrl: string;
  /** desk's stand-in: signs tokens and serves the JWKS hr verifies them with. */
  issuer: TestIssuer;
  /** A token of a fresh tenant (unless `tenant_id` is given) with `read:hr write:hr`, or the claims given. */
  token(claims?: Record<string, unknown>, options?: Parameters<TestIssuer['token']>[1]): string;
  close(): Promise<void>;
}

export interface StartHrOptions {
  settings?: Partial<HrSettings>;
  /** Point the app at this database instead of a fresh migrated one (e.g. one that does not exist). */
  databaseUrl?: string;
}

/**
 * hr as it runs in production, in-process: its own fresh database, real Redis for the rate
 * limiter (under a prefix of its own), and real ES256 tokens verified through a JWKS over HTTP.
 */
export async function startHr(options: StartHrOptions = {}): Promise<TestHr> {
  // A given database belongs to the caller: it is neither migrated nor dropped here.
  const database: TestDatabase | undefined = options.databaseUrl ? undefined : await createTestDatabase({ migrationsDir: MIGRATIONS_DIR });
  const databaseUrl = options.databaseUrl ?? database!.url;
  const db = createDb(databaseUrl);
  const redis = new Redis(TEST_REDIS_URL);
  const issuer = await startTestIssuer();
  const { app } = createHrApp({
    db,
    redis,
    logger: createLogger({ service: 'hr', level: 'error' }),
    settings: {
      issuer: issuer.issuer,
      audience: issuer.audience,
      jwksUrl: issuer.jwksUrl,
      rateLimitPerMinute: 600,
      rateLimitPrefix: uniquePrefix('hr'),
      ...options.settings,
    },
  });

  return {
    app,
    db,
    databaseUrl,
    issuer,
    token: (claims = {}, tokenOptions) => issuer.token({ tenant_id: randomUUID(), scope: 'read:hr write:hr', ...claims }, tokenOptions),
    async close() {
      await db.$disconnect();
      await redis.quit();
      await issuer.close();
      await database?.drop();
    },
  };
}
