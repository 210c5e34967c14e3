import type { Logger } from '@msp/http';
import { startServiceUnderTest, testOutbound, testWebhookSecrets, type ServiceUnderTest } from '@msp/testkit';
import { createHrApp, type HrSettings } from '../../src/app';
import { createDb, MIGRATIONS_DIR, type Db } from '../../src/db';

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
    createApp: ({ db, databaseUrl, redis, logger, settings }) =>
      createHrApp({ db, databaseUrl, redis, outbound: testOutbound(), webhookSecrets: testWebhookSecrets(), logger: options.logger ?? logger, settings: { ...settings, ...options.settings } }),
  });
}
