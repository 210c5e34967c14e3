import type { Pool } from 'pg';
import { poolSurvivingConnectionErrors } from './pool-errors';

/**
 * Runs `task` while holding the lock named `key` (or every lock named in `key`); of two holders of
 * one key, the second waits for the first to finish.
 */
type ResourceLock = <T>(key: string | readonly string[], task: () => Promise<T>) => Promise<T>;

/*
 * Several keys are taken on one connection in the order of their lock ids (the keys' hashes, each
 * taken once), whatever order they were given in: two holders of overlapping sets cannot deadlock,
 * and a holder of one key (a PATCH) simply waits for a holder of many (a merge). Evaluated in the
 * subquery's order, one pg_advisory_lock after the other.
 */
const LOCK_ALL =
  'SELECT count(pg_advisory_lock(id)) FROM (SELECT DISTINCT hashtextextended(key, 0) AS id FROM unnest($1::text[]) AS key ORDER BY id) AS ids';
const UNLOCK_ALL =
  'SELECT count(pg_advisory_unlock(id)) FROM (SELECT DISTINCT hashtextextended(key, 0) AS id FROM unnest($1::text[]) AS key ORDER BY id) AS ids';

/*
 * A lock every instance of a service shares: a PostgreSQL session advisory lock, keyed on a hash of
 * `key`, held on a connection of its own from before `task` starts until after it has ended. The
 * API router wraps each write to one resource (PATCH, PUT, DELETE) in it, around the If-Match
 * re-read and the write's own transaction, so a second writer on any replica re-reads only after
 * the first writer's change has committed: what locking the row and re-reading it before the
 * change would give, for every resource alike. A write to several resources at once (desk's bulk
 * change and merge of tickets) takes the same lock of each, under the same keys
 * (@msp/http's resourceLockKey), so it and a PATCH of one of them are serialized too.
 *
 * The connections come from a small pool beside the service's own, never from it: a holder's task
 * needs a connection of the service's pool for its work, and holders waiting for the lock must not
 * be able to take all of those. A connection that fails while holding the lock is thrown away,
 * which ends its session and so frees the lock; a process that dies frees its locks the same way.
 */
export function advisoryResourceLock(
  pool: Pool,
  options: { max?: number } = {},
): ResourceLock & { close(): Promise<void> } {
  const locks = poolSurvivingConnectionErrors({
    ...pool.options,
    max: options.max ?? 10,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
  });
  const lock = async <T>(key: string | readonly string[], task: () => Promise<T>): Promise<T> => {
    const keys = typeof key === 'string' ? [key] : [...key];
    const client = await locks.connect();
    // Its connection ending while it holds the lock (PostgreSQL restarted, the session terminated)
    // is kept here, so that the connection is discarded below (the lock went with it).
    let lost: Error | undefined;
    const onError = (error: Error) => (lost ??= error);
    client.on('error', onError);
    const release = (error?: Error) => {
      client.off('error', onError);
      client.release(error ?? lost);
    };
    try {
      await client.query(LOCK_ALL, [keys]);
    } catch (error) {
      release(error as Error);
      throw error;
    }
    try {
      return await task();
    } finally {
      // The lock is freed with the session when the unlock cannot be sent: discard the connection.
      const failed = await client.query(UNLOCK_ALL, [keys]).then(
        () => undefined,
        (error: Error) => error,
      );
      release(failed);
    }
  };
  return Object.assign(lock, { close: () => locks.end() });
}
