import { createHash } from 'node:crypto';
import { rateLimit, ipKeyGenerator, type Options, type RateLimitInfo } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import type { Request, RequestHandler, Response } from 'express';
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

/** What express-rate-limit records of the request it counted (its `requestPropertyName`). */
const countedAs = (req: Request) => (req as Request & { rateLimit?: RateLimitInfo }).rateLimit;

/** How many callers' partition keys are remembered (the oldest goes first). */
const PARTITION_KEYS_KEPT = 10_000;

/**
 * The rate-limit headers of a response, as express-rate-limit 8 writes them (`legacyHeaders`, and
 * `standardHeaders: 'draft-8'`), with one difference: the `pk` (partition key) of RateLimit-Policy,
 * a hash of the caller's key, is remembered per caller instead of hashed again on every request
 * (a SHA-256 per request, half of the headers' cost: issue 12). The library's own `Date` header
 * is left to Node, which writes the same value.
 */
function limitHeaders(name: string, windowMs: number) {
  const windowSeconds = Math.ceil(windowMs / 1000);
  const partitionKeys = new Map<string, string>();
  const partitionKey = (key: string) => {
    let pk = partitionKeys.get(key);
    if (pk === undefined) {
      pk = Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
      if (partitionKeys.size >= PARTITION_KEYS_KEPT) partitionKeys.delete(partitionKeys.keys().next().value!);
      partitionKeys.set(key, pk);
    }
    return pk;
  };
  /** Sets the headers of `info` on `res`; answers the seconds until the window resets (Retry-After). */
  return (res: Response, info: RateLimitInfo): number => {
    const resetSeconds = info.resetTime ? Math.max(0, Math.ceil((info.resetTime.getTime() - Date.now()) / 1000)) : windowSeconds;
    if (res.headersSent) return resetSeconds;
    res.setHeader('X-RateLimit-Limit', String(info.limit));
    res.setHeader('X-RateLimit-Remaining', String(info.remaining));
    if (info.resetTime) res.setHeader('X-RateLimit-Reset', String(Math.ceil(info.resetTime.getTime() / 1000)));
    // Appended: a route with a limiter of its own (desk's token endpoint) names both policies.
    res.append('RateLimit', `"${name}"; r=${info.remaining}; t=${resetSeconds}`);
    res.append('RateLimit-Policy', `"${name}"; q=${info.limit}; w=${windowSeconds}; pk=:${partitionKey(info.key)}:`);
    return resetSeconds;
  };
}

export function createRateLimiter(options: RateLimitOptions): RequestHandler {
  const windowMs = options.windowMs ?? 60_000;
  const setHeaders = limitHeaders(options.name, windowMs);
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
    // Written by setHeaders (above) instead, the same headers with less work per request.
    standardHeaders: false,
    legacyHeaders: false,
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
    handler: (req, res, next) => {
      const resetSeconds = setHeaders(res, countedAs(req)!);
      next(
        new AppError(429, `Rate limit of ${options.limit} requests per ${windowMs / 1000} seconds reached. Retry after the time given in Retry-After.`, {
          code: 'rate-limited',
          headers: { 'Retry-After': String(resetSeconds) },
        }),
      );
    },
  };
  if (store) config.store = store;
  const limiter = rateLimit(config);
  return (req, res, next) => {
    const earlier = countedAs(req);
    limiter(req, res, (error?: unknown) => {
      // A request this limiter counted; not one it let through uncounted (its store failed, the
      // limit fails open), whose req.rateLimit, if any, is an earlier limiter's.
      const info = countedAs(req);
      if (!error && info && info !== earlier) setHeaders(res, info);
      next(error);
    });
  };
}
