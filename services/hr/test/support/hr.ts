import path from 'node:path';
import type { Logger } from '@msp/http';
import {
  freshModule,
  startServiceUnderTest,
  testOutbound,
  testWebhookSecrets,
  type ServiceUnderTest,
} from '@msp/testkit';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Redis } from 'ioredis';
import { createHrApp, type HrDeps, type HrSettings } from '../../src/app';
import { createDb, MIGRATIONS_DIR, type HrDatabase } from '../../src/db';
import { EXPORT_DEFAULTS } from '../../src/exports/payroll-export.repository';
import { PrismaClient } from '../generated/prisma/client';
import type * as HrApp from '../../src/app';

/**
 * What a test reads the stored state with: Prisma Client, an oracle independent of the service's
 * own queries; `service` is the database the app under test runs on.
 */
export type TestDb = PrismaClient & { service: HrDatabase };

export type TestHr = ServiceUnderTest<TestDb>;

/** The oracle beside a service database of `databaseUrl` whose pool has room for `exportConnections` exports. */
export function testDb(
  databaseUrl: string,
  exportConnections: number = EXPORT_DEFAULTS.poolSize,
  readUrl?: string,
): TestDb & { $disconnect(): Promise<void> } {
  const service = createDb(databaseUrl, { exportConnections, readUrl });
  const oracle = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  const disconnect = oracle.$disconnect.bind(oracle);
  return Object.assign(oracle, {
    service,
    async $disconnect() {
      await service.close();
      await disconnect();
    },
  });
}

export interface StartHrOptions {
  settings?: Partial<HrSettings>;
  /** Point the app at this database instead of a fresh migrated one (e.g. one that does not exist). */
  databaseUrl?: string;
  /** Instead of the kit's (errors to stdout), e.g. one whose lines a test reads. */
  logger?: Logger;
  /** DATABASE_READ_URL: where the lists and the exports read (test/read-replica.test.ts). */
  readUrl?: string;
}

/** hr in-process on a fresh database, real Redis and real tokens; `token()` holds `read:hr write:hr`. */
export function startHr(options: StartHrOptions = {}): Promise<TestHr> {
  const createTestDb = (databaseUrl: string) =>
    testDb(databaseUrl, options.settings?.exports?.poolSize, options.readUrl);
  const depsOf = (db: TestDb, redis: Redis, logger: Logger, settings: Omit<HrSettings, 'exports'>): HrDeps => ({
    database: db.service,
    redis,
    outbound: testOutbound(),
    webhookSecrets: testWebhookSecrets(),
    logger: options.logger ?? logger,
    settings: { ...settings, ...options.settings },
  });
  return startServiceUnderTest({
    service: 'hr',
    migrationsDir: MIGRATIONS_DIR,
    createDb: createTestDb,
    defaultScope: 'read:hr write:hr',
    databaseUrl: options.databaseUrl,
    // Every answer a test receives is checked against the served OpenAPI document (test/support/conformance-setup.ts).
    conformance: true,
    createApp: ({ db, redis, logger, settings }) => createHrApp(depsOf(db, redis, logger, settings)),
    isolated() {
      const app = freshModule<typeof HrApp>(path.resolve(__dirname, '../../src/app'));
      return {
        // Prisma's engine is loaded once per process (a second copy of its WebAssembly breaks): the
        // replica's oracle comes from the shared module.
        createDb: createTestDb,
        createApp: ({ db, redis, logger, settings }) => app.createHrApp(depsOf(db, redis, logger, settings)),
      };
    },
  });
}
