import path from 'node:path';
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Outbound } from '@msp/outbound';
import {
  freshModule,
  startServiceUnderTest,
  testOutbound,
  testWebhookSecrets,
  type ServiceUnderTest,
} from '@msp/testkit';
import { createLinkApp } from '../../src/app';
import { createSecretBox } from '@msp/secrets';
import { advisoryResourceLock } from '@msp/db';
import { createDb, MIGRATIONS_DIR } from '../../src/db';
import { createDeskClient } from '../../src/desk/desk-client';
import { createJobQueue, JOB_SCHEMA, type JobQueue } from '../../src/jobs/job-queue';
import { createConnectorDirectories } from '../../src/connectors/connector-directories';
import { createConnectorsRepository } from '../../src/connectors/connectors.repository';
import { OFFBOARDING_QUEUE, queueOf } from '../../src/runs/run-queue';
import { defineRunQueues } from '../../src/runs/run-workers';
import { createRuns, type Runs } from '../../src/runs/runs';
import { startRealDesk, type DeskTenant, type RealDesk } from './desk';
import { startScimDirectory, type ScimDirectory } from './scim-directory';
import type * as LinkApp from '../../src/app';
import { storedState, type StoredState } from './stored';

/**
 * Onboarding and offboarding end to end: link in-process with its real job queue (pg-boss in its
 * test database), desk running for real on its own database (link calls it with its service
 * credential), and a real SCIM 2.0 directory. The caller's MSP tenant is a desk tenant, so the
 * tokens link verifies carry desk's tenant id.
 */
export interface RunsHarness {
  /** `db`: the tests' own view of link's stored state (stored.ts). */
  link: {
    readonly app: http.RequestListener;
    db: StoredState;
    databaseUrl: string;
    token: ServiceUnderTest<StoredState>['token'];
  };
  desk: RealDesk;
  deskTenant: DeskTenant;
  scim: ScimDirectory;
  /** `Authorization` of the caller (admin:tenant in the desk tenant). */
  auth: string;
  /** The managed tenant whose directory is `scim`, with an enabled SCIM connector. */
  managed: { id: string; domain: string; client_id: string };
  registerManagedTenant(options?: {
    withConnector?: boolean;
  }): Promise<{ id: string; domain: string; client_id: string }>;
  /** A second link instance on the same database (another replica, nothing in memory shared): its HTTP app. */
  replica(): Promise<http.RequestListener>;
  /** Stops link (its queue after the running handlers) and starts a new instance on the same database. */
  restart(): Promise<void>;
  /** Jobs of the offboarding still waiting in the queue (created or retry), with their start time. */
  queuedJobs(runId: string): Promise<{ id: string; startAfter: Date }[]>;
  /** Calls the offboarding job handler directly, as a job arriving now would. */
  runOffboardingJobNow(runId: string): Promise<void>;
  /** Calls the job handler of a run of `kind` directly, as a job arriving now would. */
  runJobNow(kind: 'onboarding' | 'offboarding' | 'move', runId: string): Promise<void>;
  /** Whether some session of link's database waits for an advisory lock (a run's or a resource's). */
  waitingForLock(): Promise<boolean>;
  close(): Promise<void>;
}

const hex = (n: number) => randomBytes(n).toString('hex');

export interface RunsHarnessOptions {
  rateLimitPerMinute?: number;
  /**
   * false: the queue takes jobs but runs none, so runs stay queued and nothing changes in the
   * background (the fuzzer's "a rejected write changes no table" needs a still database).
   */
  workers?: boolean;
  /** The run engine's clock (default the real time): a test moves it to make a dated task due. */
  now?: () => Date;
  /** Tries of one step through an outage (default 5). */
  maxAttempts?: number;
  /** The directories' address policy (default: the development one, loopback allowed). */
  outbound?: Outbound;
}

export async function startRunsHarness(options: RunsHarnessOptions = {}): Promise<RunsHarness> {
  const desk = await startRealDesk();
  const deskTenant = await desk.newTenant();
  const scim = await startScimDirectory();
  const secrets = createSecretBox(randomBytes(32));
  const outbound = options.outbound ?? testOutbound({ timeoutMs: 5000 });

  let app!: http.RequestListener;
  let jobs: JobQueue | undefined;
  let runs!: Runs;
  let restartLink!: () => Promise<void>;

  const link = await startServiceUnderTest({
    service: 'link',
    migrationsDir: MIGRATIONS_DIR,
    createDb: storedState,
    defaultScope: 'admin:tenant',
    createApp: async ({ databaseUrl, redis, logger, settings }) => {
      const database = createDb(databaseUrl);
      const { db } = database;
      async function boot() {
        const deskClient = createDeskClient(
          {
            apiUrl: desk.apiUrl,
            clientId: desk.service.clientId,
            clientSecret: desk.service.clientSecret,
            timeoutMs: 2000,
          },
          logger,
        );
        jobs = createJobQueue({
          databaseUrl,
          logger,
          pollingIntervalSeconds: 0.5,
          stopTimeoutMs: 5000,
          work: options.workers,
        });
        // The app's router and the workers share one lock, as in src/index.ts.
        const resourceLock = advisoryResourceLock(database.pool);
        runs = createRuns({
          db,
          resourceLock,
          logger,
          desk: deskClient,
          directories: createConnectorDirectories({ connectors: createConnectorsRepository(db), secrets, outbound }),
          queue: jobs,
          secrets,
          maxAttempts: options.maxAttempts ?? 5,
          now: options.now,
        });
        defineRunQueues(jobs, runs.handlers, {
          maxAttempts: options.maxAttempts ?? 5,
          stepsPerJob: runs.stepsPerJob,
          retryDelaySeconds: 1,
        });
        const built = createLinkApp({
          database,
          redis,
          logger,
          settings: { ...settings, rateLimitPerMinute: options.rateLimitPerMinute ?? settings.rateLimitPerMinute },
          runs,
          queue: jobs,
          secrets,
          outbound,
          webhookSecrets: testWebhookSecrets(),
          resourceLock,
        });
        app = built.app;
        await jobs.start();
        await runs.resume();
      }
      await boot();
      restartLink = async () => {
        await jobs?.stop();
        await boot();
      };
      return {
        get app() {
          return app;
        },
        close: async () => {
          await jobs?.stop();
          await database.close();
        },
      } as { app: http.RequestListener; close(): Promise<void> };
    },
    // Another instance's HTTP side (its own modules and database pool) over the same queue and runs
    // (whose workers the first instance has defined already).
    isolated() {
      const app = freshModule<typeof LinkApp>(path.resolve(__dirname, '../../src/app'));
      return {
        // Prisma's engine is loaded once per process (a second copy of its WebAssembly breaks): the
        // tests' view of the stored state comes from the shared module.
        createDb: storedState,
        createApp: ({ databaseUrl, redis, logger, settings }) => {
          const database = createDb(databaseUrl);
          return {
            app: app.createLinkApp({
              database,
              redis,
              logger,
              settings: { ...settings, rateLimitPerMinute: options.rateLimitPerMinute ?? settings.rateLimitPerMinute },
              runs,
              queue: { ...jobs!, define: () => undefined },
              secrets,
              outbound,
              webhookSecrets: testWebhookSecrets(),
            }).app,
            close: () => database.close(),
          };
        },
      };
    },
  });

  const auth = `Bearer ${link.token({ tenant_id: deskTenant.tenantId })}`;

  async function registerManagedTenant(options: { withConnector?: boolean } = {}) {
    const client = await deskTenant.createClient();
    const domain = `c${hex(4)}.example.com`;
    const tenant = await link.db.managedTenant.create({
      data: { ownerTenantId: deskTenant.tenantId, name: `Client ${domain}`, domain, clientId: client.id },
    });
    if (options.withConnector !== false) {
      await link.db.connector.create({
        data: {
          ownerTenantId: deskTenant.tenantId,
          managedTenantId: tenant.id,
          type: 'scim',
          name: 'Directory',
          enabled: true,
          baseUrl: scim.baseUrl,
          bearerTokenEncrypted: secrets.seal(scim.bearerToken),
        },
      });
    }
    return { id: tenant.id, domain, client_id: client.id };
  }
  const managed = await registerManagedTenant();

  return {
    link: {
      get app() {
        return app;
      },
      db: link.db,
      databaseUrl: link.databaseUrl,
      token: link.token,
    },
    desk,
    deskTenant,
    scim,
    auth,
    managed,
    registerManagedTenant,
    replica: () => link.replica(),
    restart: () => restartLink(),
    async queuedJobs(runId) {
      const pg = new Client({ connectionString: link.databaseUrl });
      await pg.connect();
      try {
        const { rows } = await pg.query<{ id: string; start_after: Date }>(
          `SELECT id, start_after FROM ${JOB_SCHEMA}.job WHERE name = $1 AND data->>'runId' = $2 AND state IN ('created', 'retry') ORDER BY start_after`,
          [OFFBOARDING_QUEUE, runId],
        );
        return rows.map((row) => ({ id: row.id, startAfter: row.start_after }));
      } finally {
        await pg.end();
      }
    },
    runOffboardingJobNow: (runId) => runs.handlers[OFFBOARDING_QUEUE]({ runId }),
    runJobNow: (kind, runId) => runs.handlers[queueOf(kind)]({ runId }),
    async waitingForLock() {
      const rows = await link.db.$queryRaw<{ waiting: boolean }[]>`
        SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid
          FROM pg_database WHERE datname = current_database())) AS waiting`;
      return rows[0]!.waiting;
    },
    async close() {
      await link.close();
      await scim.close();
      await desk.close();
    },
  };
}
