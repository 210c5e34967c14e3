import { rateLimit, ipKeyGenerator, type Options } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import type { Request, RequestHandler } from 'express';
import { AppError } from './errors';
import type { Logger } from './logger';

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

/**
 * express-rate-limit with rate-limit-redis's RedisStore, writing the library's own headers: the
 * legacy `X-RateLimit-*` and the IETF draft-8 `RateLimit` and `RateLimit-Policy` (named, appended
 * when a route has a limiter of its own), and `Retry-After` on a 429. A store error lets the
 * request through uncounted and without headers (fail open), logged once per outage.
 *
 * The store loads its Lua scripts when it is made, and again when Redis answers NOSCRIPT. A store
 * made while Redis was unreachable keeps its failed load (the connection does not queue commands:
 * createRedis), so each time the connection becomes ready a new limiter with a new store takes
 * over; the counters live in Redis, so none is lost.
 */
export function createRateLimiter(options: RateLimitOptions): RequestHandler {
  const windowMs = options.windowMs ?? 60_000;
  // One log line per outage, not one per request: under load a Redis outage would otherwise
  // flood the logs exactly when someone needs to read them.
  let outage = false;
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
    handler: (_req, _res, next) => {
      next(
        new AppError(
          429,
          `Rate limit of ${options.limit} requests per ${windowMs / 1000} seconds reached. Retry after the time given in Retry-After.`,
          {
            code: 'rate-limited',
          },
        ),
      );
    },
  };
  const { redis } = options;
  if (!redis) return rateLimit(config);
  const withStore = () =>
    rateLimit({
      ...config,
      store: new RedisStore({
        prefix: options.prefix,
        sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
      }),
    });
  let limiter = withStore();
  redis.on('ready', () => {
    limiter = withStore();
    if (!outage) return;
    outage = false;
    options.logger.info('rate limiter store recovered; limits apply again');
  });
  return (req, res, next) => limiter(req, res, next);
}
