import { ConfigError, createLogger, createRedis, exitOnSignals, startServer } from '@msp/http';
import { applyMigrations } from '@msp/db';
import { createHrApp } from './app';
import { loadHrConfig, type HrConfig } from './config';
import { createDb, MIGRATIONS_DIR } from './db';

async function main(config: HrConfig) {
  const logger = createLogger({ service: 'hr', level: config.LOG_LEVEL });
  const { applied } = await applyMigrations(config.DATABASE_URL, MIGRATIONS_DIR);
  if (applied.length) logger.info('migrations applied', { migrations: applied });
  const db = createDb(config.DATABASE_URL);
  const redis = config.REDIS_URL ? createRedis(config.REDIS_URL, logger) : undefined;

  const { app, readiness } = createHrApp({
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
  const running = await startServer({
    app,
    port: config.PORT,
    host: config.HOST,
    logger,
    readiness,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    cleanup: [() => db.$disconnect(), async () => redis?.quit()],
  });
  exitOnSignals(running, logger);
  logger.info('hr listening', { port: running.port, redis: Boolean(redis) });
}

try {
  main(loadHrConfig()).catch((error) => {
    console.error(`hr failed to start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
} catch (error) {
  console.error(error instanceof ConfigError ? `hr: ${error.message}` : error);
  process.exit(1);
}
