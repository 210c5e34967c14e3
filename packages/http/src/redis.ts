import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger';

/** Where a service's Redis is: one server (`REDIS_URL`), or the master a set of Sentinels names. */
export interface RedisEndpoint {
  /** `REDIS_URL`; with Sentinels, only its password and database number are used. */
  url?: string;
  /** `REDIS_SENTINELS`: `host:port,host:port,…` */
  sentinels?: string;
  /** `REDIS_SENTINEL_NAME`: the master's name in the Sentinels' configuration. */
  sentinelName?: string;
}

/** Reconnection never gives up: a Redis (or a Sentinel) that comes back is used again without a restart. */
const retryForever = (attempt: number) => Math.min(attempt * 200, 2000);

/** `REDIS_SENTINELS` parsed, or the reason it cannot be. */
export function parseSentinels(value: string): { host: string; port: number }[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => {
      const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]+)(?::(\d{1,5}))?$/.exec(item);
      const port = Number(match?.[2] ?? 26379);
      if (!match || port < 1 || port > 65535) throw new Error(`"${item}" is not host:port`);
      return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
    });
}

/**
 * The service's Redis connection, or none when it has no Redis (in-process limits and records).
 * Commands fail at once while disconnected instead of queueing behind a dead server (the rate
 * limiter fails open, Idempotency-Key answers 503), and reconnection goes on in the background,
 * through the Sentinels to whichever server they name master after a failover.
 */
export function createRedis(endpoint: RedisEndpoint | string, logger: Logger): Redis {
  const { url, sentinels, sentinelName } = typeof endpoint === 'string' ? { url: endpoint } : endpoint;
  const common: RedisOptions = {
    enableOfflineQueue: false,
    // Off, as by default: auto-pipelining makes a closure per command that Node 24 allocates in the
    // old generation, which keeps each batch alive until a full collection (docs/adr/0007).
    enableAutoPipelining: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: retryForever,
  };
  let redis: Redis;
  if (sentinels) {
    const parsed = url ? new URL(url) : undefined;
    redis = new Redis({
      ...common,
      sentinels: parseSentinels(sentinels),
      name: sentinelName ?? 'mymaster',
      sentinelRetryStrategy: retryForever,
      // No failoverDetector: its +switch-master arriving while the client resolves the master again
      // ends the connection for good (ioredis then never reconnects). A connection left on a former
      // master instead finds out from its answers: READONLY once it is a replica, NOREPLICAS while it
      // is cut off from them (min-replicas-to-write); both send the client back to the Sentinels.
      reconnectOnError: (error) => /^(READONLY|NOREPLICAS)/.test(error.message),
      ...(parsed?.password ? { password: decodeURIComponent(parsed.password) } : {}),
      ...(parsed?.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed && parsed.pathname.length > 1 ? { db: Number(parsed.pathname.slice(1)) } : {}),
    });
  } else if (url) {
    redis = new Redis(url, common);
  } else {
    throw new Error('createRedis needs REDIS_URL or REDIS_SENTINELS');
  }
  let healthy = true;
  redis.on('error', (error) => {
    if (healthy) logger.error('redis unavailable', { error: error.message });
    healthy = false;
  });
  redis.on('ready', () => {
    if (!healthy) logger.info('redis available again');
    healthy = true;
  });
  return redis;
}

/** The service's Redis from its configuration, or undefined without REDIS_URL and REDIS_SENTINELS. */
export function redisFromConfig(
  config: { REDIS_URL?: string; REDIS_SENTINELS?: string; REDIS_SENTINEL_NAME?: string },
  logger: Logger,
): Redis | undefined {
  if (!config.REDIS_URL && !config.REDIS_SENTINELS) return undefined;
  return createRedis(
    { url: config.REDIS_URL, sentinels: config.REDIS_SENTINELS, sentinelName: config.REDIS_SENTINEL_NAME },
    logger,
  );
}

/** Whether the connection goes through Sentinels, i.e. the master has replicas a write must reach. */
export function hasReplicas(redis: Redis): boolean {
  return Boolean(redis.options.sentinels?.length);
}
