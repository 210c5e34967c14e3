import { redisFromConfig, runService, parseOriginList } from '@msp/http';
import { applyMigrations } from '@msp/db';
import { webhookSecretsFromConfig } from '@msp/events';
import { outboundFromConfig } from '@msp/outbound';
import { createHrApp } from './app';
import { loadHrConfig } from './config';
import { createDb, MIGRATIONS_DIR } from './db';

runService('hr', loadHrConfig, async (config, logger) => {
  const { applied } = await applyMigrations(config.DATABASE_URL, MIGRATIONS_DIR);
  if (applied.length) logger.info('migrations applied', { migrations: applied });
  const database = createDb(config.DATABASE_URL, {
    exportConnections: config.EXPORT_POOL_SIZE,
    acquireTimeoutMs: config.DATABASE_POOL_ACQUIRE_TIMEOUT_MS,
    readUrl: config.DATABASE_READ_URL,
  });
  const redis = redisFromConfig(config, logger);

  const { app, readiness, dispatcher, eventsRetention } = createHrApp({
    database,
    redis,
    logger,
    outbound: outboundFromConfig(config),
    webhookSecrets: webhookSecretsFromConfig(config),
    settings: {
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
      jwksUrl: config.AUTH_JWKS_URL,
      rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
      bodyLimit: config.BODY_LIMIT,
      trustProxy: config.TRUST_PROXY,
      corsOrigins: parseOriginList(config.API_CORS_ORIGINS),
      webhooks: { concurrency: config.WEBHOOK_CONCURRENCY },
      eventsRetention: { days: config.EVENTS_RETENTION_DAYS, intervalMs: config.EVENTS_RETENTION_INTERVAL_MS },
      exports: {
        poolSize: config.EXPORT_POOL_SIZE,
        acquireTimeoutMs: config.EXPORT_POOL_ACQUIRE_TIMEOUT_MS,
        idleTimeoutMs: config.EXPORT_IDLE_TIMEOUT_MS,
      },
    },
  });
  await dispatcher.start();
  eventsRetention.start();
  return {
    app,
    readiness,
    cleanup: [() => dispatcher.stop(), () => eventsRetention.stop(), () => database.close(), async () => redis?.quit()],
    describe: { redis: Boolean(redis) },
  };
});
