import type { RequestHandler } from 'express';
import type { Logger } from './logger';

export type ReadinessCheck = () => Promise<unknown>;

export interface Readiness {
  /** Set when shutdown begins, so load balancers stop sending traffic first. */
  markShuttingDown(): void;
  isShuttingDown(): boolean;
  liveness: RequestHandler;
  readiness: RequestHandler;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error) => (clearTimeout(timer), reject(error)),
    );
  });
}

/**
 * `optional` checks are reported but do not make the service unready: Redis only backs the rate
 * limiter, which fails open, so taking every replica out of the load balancer for it would turn a
 * degraded service into an outage. /readyz then answers 200 with `status: degraded`.
 */
export function createReadiness(
  checks: Record<string, ReadinessCheck>,
  logger: Logger,
  options: { timeoutMs?: number; optional?: string[] } = {},
): Readiness {
  const timeoutMs = options.timeoutMs ?? 2000;
  const optional = new Set(options.optional ?? []);
  let shuttingDown = false;
  return {
    markShuttingDown: () => {
      shuttingDown = true;
    },
    isShuttingDown: () => shuttingDown,
    liveness: (_req, res) => {
      res.json({ status: 'ok' });
    },
    readiness: async (_req, res) => {
      if (shuttingDown) {
        res.status(503).json({ status: 'shutting_down', checks: {} });
        return;
      }
      const results: Record<string, string> = {};
      await Promise.all(
        Object.entries(checks).map(async ([name, check]) => {
          try {
            await withTimeout(check(), timeoutMs);
            results[name] = 'ok';
          } catch (error) {
            results[name] = 'failing';
            logger.warn('readiness check failed', {
              check: name,
              error: error instanceof Error ? error.message : String(error),
            });
          }
        }),
      );
      const failing = Object.keys(results).filter((name) => results[name] !== 'ok');
      const ready = failing.every((name) => optional.has(name));
      const status = !ready ? 'not_ready' : failing.length ? 'degraded' : 'ready';
      res.status(ready ? 200 : 503).json({ status, checks: results });
    },
  };
}
