import { Redis } from 'ioredis';
import type { Logger } from './logger';

/**
 * A Redis connection tuned for a rate limiter that must fail open: commands
 * fail at once while disconnected instead of queueing behind a dead server,
 * and reconnection goes on in the background.
 */
export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
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
