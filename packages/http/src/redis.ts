import { Redis } from 'ioredis';
import type { Logger } from './logger';

/**
 * A Redis connection tuned for a rate limiter that must fail open: commands
 * fail at once while disconnected instead of queueing behind a dead server,
 * and reconnection goes on in the background.
 *
 * The commands issued while the event loop serves one batch of ready sockets (the rate limiter's
 * one per request, under load several at once) leave in one socket write at setImmediate instead
 * of one write each (coalesceWrites). Every command still reaches Redis and every caller still
 * waits for its own reply, so counts stay exact; a loopback write costs several µs of CPU on a
 * small VM, which made the rate limiter's command ~6 % of a request's CPU (bench/README.md).
 */
export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    // coalesceWrites does what auto-pipelining did for this, without a Pipeline per batch.
    enableAutoPipelining: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  coalesceWrites(redis);
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

/**
 * Corks the connection's socket at the first command of a turn of the event loop and uncorks it at
 * setImmediate, after the turn's I/O callbacks: the turn's commands go out in one `writev`.
 * ioredis's auto-pipelining batches the same way, but builds a Pipeline (its queue, its promise,
 * its result arrays) per batch: at one or two commands per batch under the single read's load that
 * was 5 µs of garbage collection per request, half of desk's (issue 25, bench/README.md). Only a
 * ready connection is corked: the commands of its handshake go out as ioredis sends them.
 */
function coalesceWrites(redis: Redis): void {
  let corked: Redis['stream'] | undefined;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    const socket = redis.stream;
    if (redis.status === 'ready' && socket && corked !== socket && !socket.destroyed) {
      socket.cork();
      corked = socket;
      setImmediate(() => {
        corked = undefined;
        socket.uncork();
      });
    }
    return send(command, stream);
  };
}
