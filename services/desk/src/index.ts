import { redisFromConfig, runService, parseOriginList } from '@msp/http';
import { applyMigrations } from '@msp/db';
import { webhookSecretsFromConfig } from '@msp/events';
import { outboundFromConfig } from '@msp/outbound';
import { createDeskApp } from './app';
import { bootstrapClients, ensureServiceClients } from './auth/bootstrap';
import { createApiClientsRepository } from './auth/api-clients.repository';
import { loadSigningKey } from './auth/signing-key';
import { loadDeskConfig } from './config';
import { createDb, MIGRATIONS_DIR } from './db';

runService('desk', loadDeskConfig, async (config, logger) => {
  const signingKey = loadSigningKey(config, (message) => logger.info(message));
  const { applied } = await applyMigrations(config.DATABASE_URL, MIGRATIONS_DIR);
  if (applied.length) logger.info('migrations applied', { migrations: applied });
  const database = createDb(config.DATABASE_URL, {
    acquireTimeoutMs: config.DATABASE_POOL_ACQUIRE_TIMEOUT_MS,
    readUrl: config.DATABASE_READ_URL,
  });
  const redis = redisFromConfig(config, logger);
  await bootstrapClients(config, createApiClientsRepository(database.db), logger);
  await ensureServiceClients(config.serviceClients, createApiClientsRepository(database.db), logger);

  const { app, readiness, dispatcher, eventsRetention, slaBreaches, mailPolls, mailSends, close } = createDeskApp({
    database,
    outbound: outboundFromConfig(config),
    webhookSecrets: webhookSecretsFromConfig(config),
    redis,
    logger,
    signingKey,
    previousKeys: config.previousPublicKeys,
    settings: {
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
      rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
      tokenRateLimitPerMinute: config.TOKEN_RATE_LIMIT_PER_MINUTE,
      tokenClientFailureLimit: config.TOKEN_CLIENT_FAILURE_LIMIT,
      tokenClientFailureWindowSec: config.TOKEN_CLIENT_FAILURE_WINDOW_SEC,
      refreshTokenTtlDays: config.REFRESH_TOKEN_TTL_DAYS,
      bodyLimit: config.BODY_LIMIT,
      trustProxy: config.TRUST_PROXY,
      apiCorsOrigins: parseOriginList(config.API_CORS_ORIGINS),
      corsOrigins: config.corsOrigins,
      webhooks: { concurrency: config.WEBHOOK_CONCURRENCY },
      eventsRetention: { days: config.EVENTS_RETENTION_DAYS, intervalMs: config.EVENTS_RETENTION_INTERVAL_MS },
      slaSweepIntervalMs: config.SLA_SWEEP_INTERVAL_MS,
      timeZone: config.DEFAULT_TIME_ZONE,
      exports: {
        idleTimeoutMs: config.EXPORT_IDLE_TIMEOUT_MS,
        acquireTimeoutMs: config.EXPORT_POOL_ACQUIRE_TIMEOUT_MS,
      },
    },
  });
  await dispatcher.start();
  eventsRetention.start();
  slaBreaches.start();
  mailPolls.start();
  mailSends.start();
  return {
    app,
    readiness,
    cleanup: [
      () => dispatcher.stop(),
      () => eventsRetention.stop(),
      () => slaBreaches.stop(),
      () => mailPolls.stop(),
      () => mailSends.stop(),
      close,
      () => database.close(),
      async () => redis?.quit(),
    ],
    describe: { redis: Boolean(redis) },
  };
});
