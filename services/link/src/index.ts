import { redisFromConfig, runService, parseOriginList } from '@msp/http';
import { advisoryResourceLock, applyMigrations } from '@msp/db';
import { webhookSecretsFromConfig } from '@msp/events';
import { outboundFromConfig } from '@msp/outbound';
import { createLinkApp } from './app';
import { createSecretBox, resolveEncryptionKey } from '@msp/secrets';
import { createConnectorDirectories } from './connectors/connector-directories';
import { createConnectorsRepository } from './connectors/connectors.repository';
import { createDeskClient } from './desk/desk-client';
import { createJobQueue } from './jobs/job-queue';
import { defineRunQueues } from './runs/run-workers';
import { createRuns } from './runs/runs';
import { directoryOutboundFromConfig, loadLinkConfig } from './config';
import { createDb, MIGRATIONS_DIR } from './db';

runService('link', loadLinkConfig, async (config, logger) => {
  const { applied } = await applyMigrations(config.DATABASE_URL, MIGRATIONS_DIR);
  if (applied.length) logger.info('migrations applied', { migrations: applied });
  const database = createDb(config.DATABASE_URL, {
    acquireTimeoutMs: config.DATABASE_POOL_ACQUIRE_TIMEOUT_MS,
    ...(config.DATABASE_READ_URL === undefined ? {} : { readUrl: config.DATABASE_READ_URL }),
  });
  const redis = redisFromConfig(config, logger);

  const queue = createJobQueue({ databaseUrl: config.DATABASE_URL, logger });
  const secrets = createSecretBox(
    resolveEncryptionKey(config.CONNECTOR_ENCRYPTION_KEY, config.DATA_DIR, {
      variable: 'CONNECTOR_ENCRYPTION_KEY',
      file: 'connector-encryption.key',
    }),
    'CONNECTOR_ENCRYPTION_KEY',
  );
  const outbound = outboundFromConfig(config);
  const directoryOutbound = directoryOutboundFromConfig(config);

  // Onboarding and offboarding: link calls desk with its own service credential.
  const desk = createDeskClient(
    {
      apiUrl: config.DESK_API_URL,
      clientId: config.DESK_CLIENT_ID,
      clientSecret: config.DESK_CLIENT_SECRET,
      timeoutMs: config.OUTBOUND_TIMEOUT_MS,
    },
    logger,
  );
  // One lock for writes to a resource, shared by the API's writes and the run workers.
  const resourceLock = advisoryResourceLock(database.pool);
  const runs = createRuns({
    db: database.db,
    reads: database.reads,
    resourceLock,
    logger,
    desk,
    directories: createConnectorDirectories({
      connectors: createConnectorsRepository(database.db),
      secrets,
      outbound: directoryOutbound,
    }),
    queue,
    secrets,
  });
  defineRunQueues(queue, runs.handlers, {
    maxAttempts: runs.maxAttempts,
    stepsPerJob: runs.stepsPerJob,
    retryDelaySeconds: 30,
  });

  const { app, readiness, schedule, dispatcher, eventsRetention } = createLinkApp({
    database,
    redis,
    logger,
    queue,
    runs,
    secrets,
    outbound,
    directoryOutbound,
    webhookSecrets: webhookSecretsFromConfig(config),
    resourceLock,
    settings: {
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
      jwksUrl: config.AUTH_JWKS_URL,
      rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
      bodyLimit: config.BODY_LIMIT,
      trustProxy: config.TRUST_PROXY,
      corsOrigins: parseOriginList(config.API_CORS_ORIGINS),
      syncIntervalMs: config.SYNC_INTERVAL_MINUTES * 60_000,
      sync: { fullSyncIntervalMs: config.FULL_SYNC_INTERVAL_HOURS * 3600_000 },
      webhooks: { concurrency: config.WEBHOOK_CONCURRENCY },
      eventsRetention: { days: config.EVENTS_RETENTION_DAYS, intervalMs: config.EVENTS_RETENTION_INTERVAL_MS },
    },
  });
  // The queue starts once every resource has defined its queues and handlers.
  await queue.start();
  // Every open run gets its job back, should an enqueue have been lost (stable job ids: no doubles).
  await runs.resume();
  schedule.start();
  await dispatcher.start();
  eventsRetention.start();
  return {
    app,
    readiness,
    cleanup: [
      async () => schedule.stop(),
      () => dispatcher.stop(),
      () => eventsRetention.stop(),
      () => queue.stop(),
      () => resourceLock.close(),
      () => database.close(),
      async () => redis?.quit(),
    ],
    describe: { redis: Boolean(redis) },
  };
});
