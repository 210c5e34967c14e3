import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startServiceUnderTest, testOutbound, testWebhookSecrets, type ServiceUnderTest } from '@msp/testkit';
import { createLinkApp } from '../../src/app';
import { createSecretBox } from '@msp/secrets';
import { createDb, MIGRATIONS_DIR, type Db } from '../../src/db';
import { createDeskClient } from '../../src/desk/desk-client';
import { createJobQueue, JOB_SCHEMA, type JobQueue } from '../../src/jobs/job-queue';
import { createConnectorDirectories } from '../../src/connectors/connector-directories';
import { createConnectorsRepository } from '../../src/connectors/connectors.repository';
import { OFFBOARDING_QUEUE } from '../../src/runs/run-queue';
import { defineRunQueues } from '../../src/runs/run-workers';
import { createRuns, type Runs } from '../../src/runs/runs';
import { startRealDesk, type DeskTenant, type RealDesk } from './desk';
import { startScimDirectory, type ScimDirectory } from './scim-directory';

/**
 * Onboarding and offboarding end to end: link in-process with its real job queue (pg-boss in its
 * test database), desk running for real on its own database (link calls it with its service
 * credential), and a real SCIM 2.0 directory. The caller's MSP tenant is a desk tenant, so the
 * tokens link verifies carry desk's tenant id.
 */
export interface RunsHarness {
  link: { readonly app: http.RequestListener; db: Db; databaseUrl: string; token: ServiceUnderTest<Db>['token'] };
  desk: RealDesk;
  deskTenant: DeskTenant;
  scim: ScimDirectory;
  /** `Authorization` of the caller (admin:tenant in the desk tenant). */
  auth: string;
  /** The managed tenant whose directory is `scim`, with an enabled SCIM connector. */
  managed: { id: string; domain: string; client_id: string };
  registerManagedTenant(options?: { withConnector?: boolean }): Promise<{ id: string; domain: string; client_id: string }>;
  /** Stops link (its queue after the running handlers) and starts a new instance on the same database. */
  restart(): Promise<void>;
  /** Jobs of the offboarding still waiting in the queue (created or retry), with their start time. */
  queuedJobs(runId: string): Promise<{ id: string; startAfter: Date }[]>;
  /** Calls the offboarding job handler directly, as a job arriving now would. */
  runOffboardingJobNow(runId: string): Promise<void>;
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
}

export async function startRunsHarness(options: RunsHarnessOptions = {}): Promise<RunsHarness> {
  const desk = await startRealDesk();
  const deskTenant = await desk.newTenant();
  const scim = await startScimDirectory();
  const secrets = createSecretBox(randomBytes(32));
  const outbound = testOutbound({ timeoutMs: 5000 });

  let app!: http.RequestListener;
  let jobs: JobQueue | undefined;
  let runs!: Runs;
  let restartLink!: () => Promise<void>;

  const link = await startServiceUnderTest({
    service: 'link',
    migrationsDir: MIGRATIONS_DIR,
    createDb,
    defaultScope: 'admin:tenant',
    createApp: async ({ db, databaseUrl, redis, logger, settings }) => {
      async function boot() {
        const deskClient = createDeskClient({ apiUrl: desk.apiUrl, clientId: desk.service.clientId, clientSecret: desk.service.clientSecret, timeoutMs: 2000 }, logger);
        jobs = createJobQueue({ databaseUrl, logger, pollingIntervalSeconds: 0.5, stopTimeoutMs: 5000, work: options.workers });
        runs = createRuns({
          db,
          logger,
          desk: deskClient,
          directories: createConnectorDirectories({ connectors: createConnectorsRepository(db), secrets, outbound }),
          queue: jobs,
          maxAttempts: 5,
        });
        defineRunQueues(jobs, runs.handlers, { maxAttempts: 5, retryDelaySeconds: 1 });
        const built = createLinkApp({ db, redis, logger, settings: { ...settings, rateLimitPerMinute: options.rateLimitPerMinute ?? settings.rateLimitPerMinute }, runs, queue: jobs, secrets, outbound, webhookSecrets: testWebhookSecrets() });
        app = built.app;
        await jobs.start();
        await runs.resume();
      }
      await boot();
      restartLink = async () => {
        await jobs?.stop();
        await boot();
      };
      return { get app() { return app; }, close: async () => jobs?.stop() } as { app: http.RequestListener; close(): Promise<void> };
    },
  });

  const auth = `Bearer ${link.token({ tenant_id: deskTenant.tenantId })}`;

  async function registerManagedTenant(options: { withConnector?: boolean } = {}) {
    const client = await deskTenant.createClient();
    const domain = `c${hex(4)}.example.com`;
    const tenant = await link.db.managedTenant.create({ data: { ownerTenantId: deskTenant.tenantId, name: `Client ${domain}`, domain, clientId: client.id } });
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
    async close() {
      await link.close();
      await scim.close();
      await desk.close();
    },
  };
}
