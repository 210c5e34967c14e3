import path from 'node:path';
import type { Logger } from '@msp/http';
import { freshModule, startServiceUnderTest, testOutbound, testWebhookSecrets, type ServiceUnderTest } from '@msp/testkit';
import { createHrApp, type HrSettings } from '../../src/app';
import { createDb, MIGRATIONS_DIR, type Db } from '../../src/db';
import type * as HrApp from '../../src/app';

export type TestHr = ServiceUnderTest<Db>;

export interface StartHrOptions {
  settings?: Partial<HrSettings>;
  /** Point the app at this database instead of a fresh migrated one (e.g. one that does not exist). */
  databaseUrl?: string;
  /** Instead of the kit's (errors to stdout), e.g. one whose lines a test reads. */
  logger?: Logger;
}

/** hr in-process on a fresh database, real Redis and real tokens; `token()` holds `read:hr write:hr`. */
export function startHr(options: StartHrOptions = {}): Promise<TestHr> {
  return startServiceUnderTest({
    service: 'hr',
    migrationsDir: MIGRATIONS_DIR,
    createDb,
    defaultScope: 'read:hr write:hr',
    databaseUrl: options.databaseUrl,
    // Every answer a test receives is checked against the served OpenAPI document (test/support/conformance-setup.ts).
    conformance: true,
    createApp: ({ db, databaseUrl, redis, logger, settings }) =>
      createHrApp({ db, databaseUrl, redis, outbound: testOutbound(), webhookSecrets: testWebhookSecrets(), logger: options.logger ?? logger, settings: { ...settings, ...options.settings } }),
    isolated() {
      const app = freshModule<typeof HrApp>(path.resolve(__dirname, '../../src/app'));
      return {
        // Prisma's engine is loaded once per process (a second copy of its WebAssembly breaks): the
        // replica has a client of its own, from the shared module.
        createDb,
        createApp: ({ db, databaseUrl, redis, logger, settings }) =>
          app.createHrApp({ db: db as Db, databaseUrl, redis, outbound: testOutbound(), webhookSecrets: testWebhookSecrets(), logger: options.logger ?? logger, settings: { ...settings, ...options.settings } }),
      };
    },
  });
}
