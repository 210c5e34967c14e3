import { rateLimit, ipKeyGenerator, type Options } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import type { Request, RequestHandler } from 'express';
import { AppError } from './errors';
import type { Logger } from './logger';

/**
 * rate-limit-redis loads its Lua scripts once; when Redis is down at that
 * moment, the rejected promise would be reused forever and the limiter would
 * stay open after Redis returns. Reloading after any failure heals it.
 */
class SelfHealingRedisStore extends RedisStore {
  /** Called on the first success after a failure: the outage is over. */
  onRecovered: () => void = () => {};
  /** Whether the connection is up: then a failure is a missing script (a restarted Redis), worth one retry. */
  isConnected: () => boolean = () => false;

  override async increment(key: string) {
    try {
      const result = await super.increment(key);
      this.onRecovered();
      return result;
    } catch (error) {
      this.incrementScriptSha = this.loadIncrementScript();
      this.incrementScriptSha.catch(() => undefined);
      // A Redis that came back empty has lost the script: with the connection up, the reload above
      // makes the retry count this request, instead of letting it through uncounted.
      if (this.isConnected()) {
        try {
          const result = await super.increment(key);
          this.onRecovered();
          return result;
        } catch {
          // Still failing: fail open below.
        }
      }
      throw error;
    }
  }
}

export interface RateLimitOptions {
  /** Requests allowed per window and key. */
  limit: number;
  windowMs?: number;
  /** Shared store; without it counters live in this process only. */
  redis?: Redis;
  /** Redis key prefix: the same prefix means the same counters across instances. */
  prefix: string;
  /** Policy name shown in the RateLimit headers. */
  name: string;
  logger: Logger;
  keyGenerator?: (req: Request) => string;
}

/** Per verified API client when the caller has a valid token, per address otherwise. */
export function callerKey(req: Request): string {
  if (req.principal) return `client:${req.principal.tenantId}:${req.principal.clientId}`;
  return `ip:${ipKeyGenerator(req.ip ?? 'unknown')}`;
}

export function createRateLimiter(options: RateLimitOptions): RequestHandler {
  const windowMs = options.windowMs ?? 60_000;
  const store = options.redis
    ? new SelfHealingRedisStore({
        prefix: options.prefix,
        sendCommand: (command: string, ...args: string[]) => options.redis!.call(command, ...args) as Promise<RedisReply>,
      })
    : undefined;
  // One log line per outage, not one per request: under load a Redis outage would otherwise
  // flood the logs exactly when someone needs to read them.
  let outage = false;
  if (store) {
    store.isConnected = () => options.redis!.status === 'ready';
    store.onRecovered = () => {
      if (!outage) return;
      outage = false;
      options.logger.info('rate limiter store recovered; limits apply again');
    };
  }
  const config: Partial<Options> = {
    windowMs,
    limit: options.limit,
    standardHeaders: 'draft-8',
    legacyHeaders: true,
    identifier: options.name,
    keyGenerator: options.keyGenerator ?? callerKey,
    // Fail open: an outage of Redis must not take the APIs down with it.
    passOnStoreError: true,
    logger: {
      warn: (warning: unknown, detail?: unknown) => options.logger.warn('rate limiter warning', { warning, detail }),
      error: (error: unknown, context?: unknown) => {
        if (outage) return;
        outage = true;
        options.logger.error('rate limiter store failed; serving without a limit until it is back', {
          context,
          error: error instanceof Error ? error.message : String(error),
        });
      },
    },
    validate: { trustProxy: false, xForwardedForHeader: false },
    handler: (_req, res, next) => {
      next(
        new AppError(429, `Rate limit of ${options.limit} requests per ${windowMs / 1000} seconds reached. Retry after the time given in Retry-After.`, {
          code: 'rate-limited',
          headers: { 'Retry-After': String(res.getHeader('Retry-After') ?? Math.ceil(windowMs / 1000)) },
        }),
      );
    },
  };
  if (store) config.store = store;
  return rateLimit(config);
}
