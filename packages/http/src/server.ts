import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from './logger';
import type { Readiness } from './health';
import { endStreamedFiles } from './streamed-file';

export interface RunningServer {
  server: http.Server;
  port: number;
  /** Graceful stop: readiness fails, no new connections, in-flight requests finish, then cleanup. */
  close(): Promise<void>;
}

export interface StartServerOptions {
  app: Express;
  port: number;
  host?: string;
  logger: Logger;
  readiness?: Readiness;
  /** A request's headers must arrive within this (slowloris); default 10 s. */
  headersTimeoutMs?: number;
  /** The whole request (headers and body) must arrive within this; the response may take longer. Default 30 s. */
  requestTimeoutMs?: number;
  /** How long in-flight requests may take before their connections are cut. */
  shutdownTimeoutMs?: number;
  /** Releases resources after the last request (Prisma, Redis, queues), in order. */
  cleanup?: (() => Promise<unknown>)[];
  /** How long each cleanup step may take before shutdown goes on without it; default the shutdown timeout, at least 5 s. */
  cleanupTimeoutMs?: number;
}

/** Runs `step`, giving up on it (logged) after `timeoutMs`: a pool waiting for a connection that never comes back must not hold the process. */
async function bounded(step: () => Promise<unknown>, timeoutMs: number, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
    timer.unref();
  });
  try {
    const outcome = await Promise.race([step().then(() => 'done' as const), timedOut]);
    if (outcome === 'timeout')
      logger.warn('cleanup step did not finish within its timeout; going on without it', { timeout_ms: timeoutMs });
  } catch (error) {
    logger.error('cleanup step failed', { error: error instanceof Error ? error.message : String(error) });
  } finally {
    clearTimeout(timer);
  }
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 30_000, headersTimeout);
  const server = http.createServer(
    // Node checks these timeouts every connectionsCheckingInterval (30 s by default): check often
    // enough that a slow client is cut near its limit, not up to 30 s later.
    { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeout / 2)) },
    options.app,
  );
  // Longer than a typical load balancer's idle timeout, so it closes connections first.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;

  const close = () =>
    (closing ??= (async () => {
      const timeoutMs = options.shutdownTimeoutMs ?? 10_000;
      options.readiness?.markShuttingDown();
      options.logger.info('shutting down', { timeout_ms: timeoutMs });
      // Files being streamed are cut short now (their readers get an incomplete file, never a
      // complete-looking one), and those still waiting for a connection stop waiting: a download
      // can outlast any timeout, and a stalled reader would hold the shutdown to its end.
      const files = endStreamedFiles(options.app);
      if (files > 0) options.logger.info('streamed files ended for shutdown', { files });
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive sockets would otherwise hold server.close() open. Node closes only those idle
      // at this instant; a request already running when the signal came answers keep-alive and
      // leaves its socket idle afterwards, so the sweep repeats until the server has closed.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      sweep.unref();
      void stopped.then(() => clearInterval(sweep));
      const timer = setTimeout(() => {
        options.logger.warn('shutdown timeout reached; closing remaining connections');
        server.closeAllConnections();
      }, timeoutMs);
      timer.unref();
      await stopped;
      clearTimeout(timer);
      for (const step of options.cleanup ?? [])
        await bounded(step, options.cleanupTimeoutMs ?? Math.max(timeoutMs, 5_000), options.logger);
      options.logger.info('stopped');
    })());

  return { server, port, close };
}

/** SIGTERM (Kubernetes) and SIGINT (Ctrl-C) stop the server gracefully, then the process. */
export function exitOnSignals(running: RunningServer, logger: Logger) {
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info('signal received', { signal });
    running.close().then(
      () => process.exit(0),
      (error) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
