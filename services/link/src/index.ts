import { createRedis, runService } from '@msp/http';
import { applyMigrations } from '@msp/db';
import { createLinkApp } from './app';
import { loadLinkConfig } from './config';
import { createDb, MIGRATIONS_DIR } from './db';

runService('link', loadLinkConfig, async (config, logger) => {
  const { applied } = await applyMigrations(config.DATABASE_URL, MIGRATIONS_DIR);
  if (applied.length) logger.info('migrations applied', { migrations: applied });
  const db = createDb(config.DATABASE_URL);
  const redis = config.REDIS_URL ? createRedis(config.REDIS_URL, logger) : undefined;

  const { app, readiness } = createLinkApp({
    db,
    redis,
    logger,
    settings: {
      issuer: config.AUTH_ISSUER,
      audience: config.AUTH_AUDIENCE,
      jwksUrl: config.AUTH_JWKS_URL,
      rateLimitPerMinute: config.RATE_LIMIT_PER_MINUTE,
      bodyLimit: config.BODY_LIMIT,
      trustProxy: config.TRUST_PROXY,
    },
  });
  return { app, readiness, cleanup: [() => db.$disconnect(), async () => redis?.quit()], describe: { redis: Boolean(redis) } };
});
