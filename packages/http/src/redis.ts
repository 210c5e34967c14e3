import { Redis } from 'ioredis';
import type { Logger } from './logger';

/**
 * A Redis connection tuned for a rate limiter that must fail open: commands
 * fail at once while disconnected instead of queueing behind a dead server,
 * and reconnection goes on in the background.
 *
 * Auto-pipelining: the commands issued while the event loop serves one batch of ready sockets
 * (the rate limiter's one per request, under load several at once) leave in one socket write at
 * setImmediate instead of one write each. Every command still reaches Redis and every caller
 * still waits for its own reply, so counts stay exact; a loopback write costs ~50 µs of CPU on a
 * small VM, which made the rate limiter's command ~6 % of a request's CPU (bench/README.md).
 */
export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    enableAutoPipelining: true,
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
