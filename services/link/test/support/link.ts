import { randomBytes } from 'node:crypto';
import { createLogger, type Logger } from '@msp/http';
import type { Outbound } from '@msp/outbound';
import { startServiceUnderTest, testOutbound, testWebhookSecrets, type ServiceUnderTest } from '@msp/testkit';
import { createLinkApp, type LinkSettings } from '../../src/app';
import { createSecretBox } from '@msp/secrets';
import { createDb, MIGRATIONS_DIR } from '../../src/db';
import { createJobQueue } from '../../src/jobs/job-queue';
import { storedState, type StoredState } from './stored';

/** link under test; its `db` is the tests' own view of the stored state (stored.ts). */
export type TestLink = ServiceUnderTest<StoredState>;

export interface StartLinkOptions {
  settings?: Partial<LinkSettings>;
  /** Point the app at this database instead of a fresh migrated one (e.g. one that does not exist). */
  databaseUrl?: string;
  /** Directory calls; by default the development policy (loopback allowed) with a 5 s timeout. */
  outbound?: Outbound;
  /** CONNECTOR_ENCRYPTION_KEY; a fresh random one by default. */
  encryptionKey?: Buffer;
  /** Where link logs (tests read it to prove no secret is written). */
  logStream?: NodeJS.WritableStream;
  /**
   * Run jobs and the schedule (default true). false: the queue only takes jobs, so runs stay
   * queued. Not started at all when `databaseUrl` is given and this is unset (it may be unreachable).
   */
  workers?: boolean;
  /** DATABASE_READ_URL: where the lists read (test/read-replica.test.ts). */
  readUrl?: string;
}

/** link in-process on a fresh database, real Redis, real tokens and its job queue; `token()` holds `admin:tenant`. */
export function startLink(options: StartLinkOptions = {}): Promise<TestLink> {
  return startServiceUnderTest({
    service: 'link',
    migrationsDir: MIGRATIONS_DIR,
    createDb: storedState,
    defaultScope: 'admin:tenant',
    databaseUrl: options.databaseUrl,
    createApp: async ({ databaseUrl, redis, logger, settings }) => {
      const database = createDb(databaseUrl, options.readUrl === undefined ? {} : { readUrl: options.readUrl });
      const log: Logger = options.logStream
        ? createLogger({ service: 'link', level: 'debug', stream: options.logStream })
        : logger;
      const queue = createJobQueue({
        databaseUrl,
        logger: log,
        pollingIntervalSeconds: 0.5,
        superviseIntervalSeconds: 1,
        stopTimeoutMs: 1000,
        work: options.workers !== false,
      });
      const { app, schedule } = createLinkApp({
        database,
        redis,
        logger: log,
        queue,
        secrets: createSecretBox(options.encryptionKey ?? randomBytes(32)),
        outbound: options.outbound ?? testOutbound({ timeoutMs: 5000 }),
        webhookSecrets: testWebhookSecrets(),
        settings: { ...settings, ...options.settings, sync: { retryDelayMs: 200, ...options.settings?.sync } },
      });
      // A database given by the test may be unreachable on purpose: the queue could not start there.
      if (options.workers === undefined && options.databaseUrl) return { app, close: () => database.close() };
      await queue.start();
      if (options.workers !== false) schedule.start();
      return {
        app,
        async close() {
          schedule.stop();
          await queue.stop();
          await database.close();
        },
      };
    },
  });
}
