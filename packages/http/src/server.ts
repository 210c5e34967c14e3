import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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
    if (outcome === 'timeout') logger.warn('cleanup step did not finish within its timeout; going on without it', { timeout_ms: timeoutMs });
  } catch (error) {
    logger.error('cleanup step failed', { error: error instanceof Error ? error.message : String(error) });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Node's request and response classes for a server of `app`, whose objects are born with the
 * app's request and response prototypes (Express's `app.request`, `app.response`). Express gives
 * every request and response those prototypes on arrival (Object.setPrototypeOf, twice per
 * request), and V8 pays for an object whose prototype changed on every later property access of
 * Node's HTTP code and Express's own. An object that already has its prototype makes that call a
 * no-op. Measured (`pnpm bench:floor`, an Express 5 app serving one JSON body): ~200 -> ~95 µs of
 * CPU per request. Node's constructors are plain functions, called on the new object as a
 * subclass's would be (Reflect.construct with another new.target, tried too, cost 300 µs: V8
 * builds such objects the slow way).
 */
export function serverClassesFor(app: Express): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  const IncomingMessage = http.IncomingMessage as unknown as (this: object, socket: Socket) => void;
  const ServerResponse = http.ServerResponse as unknown as (this: object, req: http.IncomingMessage, options?: unknown) => void;
  function AppRequest(this: object, socket: Socket) {
    IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: object, req: http.IncomingMessage, options?: unknown) {
    ServerResponse.call(this, req, options);
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
  };
}

/**
 * Whether serverClassesFor pays on Node `nodeMajor` (default: this process's). It does where an object
 * whose prototype was changed stays slow: Express on a plain server against the same app with
 * these classes, `pnpm bench:floor` on 2026-11-25, Node 20: 262 -> 121 µs of CPU per request;
 * Node 22: 178 -> 96. On Node 24 Express's own re-parenting is cheap and these classes cost more
 * than they save: 75 -> 93 µs, and desk's `GET /tickets/:id` took 365 µs without them against 476
 * with them (8 interleaved rounds; bench/README.md). The images run Node 24; development may run 20.
 */
export function serverClassesPay(nodeMajor = Number(process.versions.node.split('.')[0])): boolean {
  return nodeMajor < 24;
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 30_000, headersTimeout);
  const server = http.createServer(
    // Node checks these timeouts every connectionsCheckingInterval (30 s by default): check often
    // enough that a slow client is cut near its limit, not up to 30 s later.
    { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeout / 2)), ...(serverClassesPay() ? serverClassesFor(options.app) : {}) },
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
      for (const step of options.cleanup ?? []) await bounded(step, options.cleanupTimeoutMs ?? Math.max(timeoutMs, 5_000), options.logger);
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
