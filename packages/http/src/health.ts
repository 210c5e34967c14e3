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

export function createReadiness(checks: Record<string, ReadinessCheck>, logger: Logger, timeoutMs = 2000): Readiness {
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
            logger.warn('readiness check failed', { check: name, error: error instanceof Error ? error.message : String(error) });
          }
        }),
      );
      const ready = Object.values(results).every((value) => value === 'ok');
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: results });
    },
  };
}
