import type { Redis } from 'ioredis';
import { advisoryResourceLock, rawSqlOverKysely } from '@msp/db';
import { sql } from 'kysely';
import { createAuth, registerWhoAmI, remoteJwks, SCOPES } from '@msp/auth';
import { createServiceApp, type ApiRouter, type Logger, type ResourceLock } from '@msp/http';
import type { Outbound } from '@msp/outbound';
import { createdUnderClaim, createServiceEvents, type DispatcherOptions } from '@msp/events';
import { linkEvents } from './events/link-events';
import { createConnectorDirectories } from './connectors/connector-directories';
import type { SecretBox } from '@msp/secrets';
import { createConnectorsRepository } from './connectors/connectors.repository';
import { connectorJson, registerConnectorRoutes } from './connectors/connectors.routes';
import { createConnectorsService } from './connectors/connectors.service';
import type { LinkDatabase } from './db';
import type { JobQueue } from './jobs/job-queue';
import { createSyncRunner, type SyncRunnerOptions } from './syncs/sync.runner';
import { createSyncsRepository } from './syncs/syncs.repository';
import { registerSyncRoutes } from './syncs/syncs.routes';
import { createSyncsService } from './syncs/syncs.service';
import { createTenantsRepository } from './tenants/tenants.repository';
import { registerTenantRoutes } from './tenants/tenants.routes';
import { createTenantsService } from './tenants/tenants.service';

export interface LinkSettings {
  /** desk's issuer and audience, and where its public keys are (docs/security.md). */
  issuer: string;
  audience: string;
  jwksUrl: string;
  /**
   * Least time between two JWKS fetches caused by unknown `kid`s; @msp/auth's default (30 s)
   * when unset. Tests shorten it to see a rotation without waiting.
   */
  jwksRefetchCooldownMs?: number;
  rateLimitPerMinute: number;
  bodyLimit?: string;
  trustProxy?: string;
  /** Origins whose pages may call the API from a browser (API_CORS_ORIGINS). */
  corsOrigins?: string[];
  /** Redis key prefix of the rate limiter (tests isolate themselves with it). */
  rateLimitPrefix?: string;
  /** Every enabled connector is synced this often (SYNC_INTERVAL_MINUTES; default 60 min). */
  syncIntervalMs?: number;
  /** Retry delays, SCIM page size and full-sync interval (FULL_SYNC_INTERVAL_HOURS) of sync runs (tests shorten them). */
  sync?: SyncRunnerOptions;
  /** The webhook dispatcher's pace (WEBHOOK_CONCURRENCY; tests shorten the retry schedule). */
  webhooks?: Pick<DispatcherOptions, 'concurrency' | 'pollMs' | 'retryDelaysMs' | 'disableAfterMs'>;
  /** EVENTS_RETENTION_DAYS and EVENTS_RETENTION_INTERVAL_MS: the events retention sweep (none without it). */
  eventsRetention?: { days: number; intervalMs: number };
}

/**
 * The schedule: every interval, a `schedule` run for each enabled connector that had none for
 * that long (the database decides, so several link instances do not double the runs).
 */
function startSyncSchedule(runner: ReturnType<typeof createSyncRunner>, intervalMs: number, logger: Logger) {
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      timer = setInterval(() => {
        runner
          .scheduleDue(intervalMs)
          .catch((error) =>
            logger.error('sync schedule failed', { error: error instanceof Error ? error.message : String(error) }),
          );
      }, intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}

export interface LinkDeps {
  /** link's database: Kysely over its one pool (src/db.ts createDb). */
  database: LinkDatabase;
  redis?: Redis;
  logger: Logger;
  settings: LinkSettings;
  /** Onboarding and offboarding (src/runs/runs.ts createRuns): their routes. */
  runs?: { registerRoutes(api: ApiRouter): void };
  /** pg-boss on link's database (src/jobs); started by the caller after the app defined its queues. */
  queue: JobQueue;
  /** Seals and opens connector secrets (CONNECTOR_ENCRYPTION_KEY). */
  secrets: SecretBox;
  /** Calls to webhook endpoints (and directories, unless `directoryOutbound` is given): the address policy and the timeout. */
  outbound: Outbound;
  /** Connections to connectors' directories (SCIM and LDAP): OUTBOUND_ALLOWED_NETWORKS on top of `outbound`'s policy. */
  directoryOutbound?: Outbound;
  /** Seals and opens webhook signing secrets (webhookSecretsFromConfig: WEBHOOK_ENCRYPTION_KEY). */
  webhookSecrets: SecretBox;
  /**
   * The lock of writes to one resource; the runs' workers share it (createRuns' resourceLock).
   * Default: advisoryResourceLock over link's database.
   */
  resourceLock?: ResourceLock;
}

export function createLinkApp({
  database,
  redis,
  logger,
  settings,
  runs,
  queue,
  secrets,
  outbound,
  directoryOutbound = outbound,
  webhookSecrets,
  resourceLock,
}: LinkDeps) {
  // link verifies desk's tokens against desk's JWKS: cached, refetched once for a new kid.
  const auth = createAuth({
    issuer: settings.issuer,
    audience: settings.audience,
    keys: remoteJwks({ url: settings.jwksUrl, refetchCooldownMs: settings.jwksRefetchCooldownMs }),
  });
  // List pages read `reads` (the replica with DATABASE_READ_URL); the rest, and every write, `db`.
  const { db, reads } = database;
  const tenantsRepository = createTenantsRepository(db, reads);
  const tenants = createTenantsService(tenantsRepository);
  const connectorsRepository = createConnectorsRepository(db, reads);
  const directories = createConnectorDirectories({
    connectors: connectorsRepository,
    secrets,
    outbound: directoryOutbound,
  });
  const syncsRepository = createSyncsRepository(db, reads);
  const syncRunner = createSyncRunner({ queue, syncs: syncsRepository, directories, logger, options: settings.sync });
  syncRunner.define();
  const connectors = createConnectorsService({
    connectors: connectorsRepository,
    tenants: tenantsRepository,
    secrets,
    outbound: directoryOutbound,
  });
  const syncs = createSyncsService({
    connectors,
    tenants: tenantsRepository,
    syncs: syncsRepository,
    runner: syncRunner,
    directories,
  });
  const schedule = startSyncSchedule(syncRunner, settings.syncIntervalMs ?? 60 * 60_000, logger);
  // @msp/events still speaks raw SQL, not Kysely: it gets link's database through that surface.
  const events = createServiceEvents({
    db: rawSqlOverKysely(db),
    logger,
    catalogue: linkEvents,
    outbound,
    secrets: webhookSecrets,
    dispatcher: settings.webhooks,
    retention: settings.eventsRetention,
    // A connector records no event: its row keeps the claim of the request that created it.
    createdWithoutEvents: {
      connector: createdUnderClaim((claim) => connectorsRepository.findByIdempotencyClaim(claim), connectorJson),
    },
  });

  const service = createServiceApp({
    service: 'link',
    logger,
    effectOfIdempotencyClaim: events.effectOfClaim,
    openapi: {
      title: 'Integration API (link)',
      version: '1.0.0',
      description:
        "The customer directories (managed tenants: a client's Microsoft 365 or Google Workspace tenant) that your tenant administers; " +
        'connectors, synchronisations, onboarding and offboarding build on them.\n' +
        'Every endpoint needs scope `admin:tenant`.',
      tokenUrl: `${settings.issuer}/auth/token`,
      scopes: SCOPES,
      tags: [
        { name: 'Tenants', description: 'Customer directories administered by your tenant.' },
        {
          name: 'Connectors',
          description:
            "SCIM 2.0 connectors of managed tenants, their sync runs, health and the mirror of the directory's users.",
        },
        {
          name: 'Onboarding',
          description:
            'Bringing a person in: directory account, license bundles (groups) and a hardware ticket, run by the job queue.',
        },
        {
          name: 'Offboarding',
          description:
            'Letting a person go, each step at its due time: tickets to the successor, account ' +
            'disabled, mailbox delegated, account deleted after the retention.',
        },
        {
          name: 'Moves',
          description:
            'A person changing role or team on a date: directory attributes and manager, license bundles (groups) and, with new equipment, a hardware ticket.',
        },
        ...events.tags,
        { name: 'Authentication', description: 'How this service sees your access token.' },
      ],
      webhooks: events.webhookDocs,
    },
    readinessChecks: {
      database: () => sql`SELECT 1`.execute(db),
    },
    // Reported, not gating: without the replica only the lists fail, with a 503.
    optionalReadinessChecks: reads === db ? {} : { database_reads: () => database.readPool.query('SELECT 1') },
    rateLimit: { limit: settings.rateLimitPerMinute, redis, prefix: settings.rateLimitPrefix },
    // Every instance takes the same lock for a write to one resource: If-Match holds across replicas.
    // The run engine's workers take it too, for the run they work on (src/runs/run-lock.ts).
    resourceLock: resourceLock ?? advisoryResourceLock(database.pool),
    authenticate: auth.authenticate,
    requireScope: auth.requireScope,
    bodyLimit: settings.bodyLimit,
    trustProxy: settings.trustProxy,
    corsOrigins: settings.corsOrigins,
    routes: (api) => {
      registerTenantRoutes(api, { tenants });
      registerConnectorRoutes(api, { connectors });
      registerSyncRoutes(api, { syncs });
      runs?.registerRoutes(api);
      events.registerRoutes(api);
      registerWhoAmI(api);
    },
  });
  // The schedule starts and stops with the job queue (src/index.ts, the test start-up); the
  // webhook dispatcher with the process.
  return { ...service, schedule, syncRunner, dispatcher: events.dispatcher, eventsRetention: events.retention };
}
