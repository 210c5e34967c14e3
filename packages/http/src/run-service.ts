import type { Express } from 'express';
import { ConfigError } from './config';
import type { Readiness } from './health';
import { createLogger, type Logger } from './logger';
import { exitOnSignals, startServer } from './server';

export interface BaseServiceConfig {
  PORT: number;
  HOST: string;
  LOG_LEVEL: string;
  SHUTDOWN_TIMEOUT_MS: number;
  HEADERS_TIMEOUT_MS?: number;
  REQUEST_TIMEOUT_MS?: number;
}

export interface BootedService {
  app: Express;
  readiness: Readiness;
  /** Released after the last request, in order (database, Redis, queues). */
  cleanup: (() => Promise<unknown>)[];
  /** Extra fields of the "listening" log line. */
  describe?: Record<string, unknown>;
}

/**
 * The start sequence every service shares: configuration parsed once (a bad
 * value stops the process naming the variable), the service's own boot
 * (migrations, clients, app), listen, and graceful shutdown on SIGTERM/SIGINT.
 */
export function runService<C extends BaseServiceConfig>(
  name: string,
  loadConfig: () => C,
  boot: (config: C, logger: Logger) => Promise<BootedService>,
): void {
  let config: C;
  try {
    config = loadConfig();
  } catch (error) {
    // eslint-disable-next-line no-console -- no logger yet (its level is in the config that failed): plain stderr
    console.error(error instanceof ConfigError ? `${name}: ${error.message}` : error);
    process.exit(1);
  }
  const logger = createLogger({ service: name, level: config.LOG_LEVEL });
  (async () => {
    const service = await boot(config, logger);
    const running = await startServer({
      app: service.app,
      port: config.PORT,
      host: config.HOST,
      logger,
      readiness: service.readiness,
      shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
      cleanup: service.cleanup,
    });
    exitOnSignals(running, logger);
    logger.info(`${name} listening`, { port: running.port, ...service.describe });
  })().catch((error) => {
    logger.error(`${name} failed to start`, { error: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
}
