import { Pool } from 'pg';

/** Runs `task` while holding the lock named `key`; of two holders of one key, the second waits for the first to finish. */
type ResourceLock = <T>(key: string, task: () => Promise<T>) => Promise<T>;

/*
 * A lock every instance of a service shares: a PostgreSQL session advisory lock, keyed on a hash of
 * `key`, held on a connection of its own from before `task` starts until after it has ended. The
 * API router wraps each write to one resource (PATCH, PUT, DELETE) in it, around the If-Match
 * re-read and the write's own transaction, so a second writer on any replica re-reads only after
 * the first writer's change has committed: what locking the row and re-reading it before the
 * change would give, for every resource alike.
 *
 * The connections come from a small pool beside the service's own, never from it: a holder's task
 * needs a connection of the service's pool for its work, and holders waiting for the lock must not
 * be able to take all of those. A connection that fails while holding the lock is thrown away,
 * which ends its session and so frees the lock; a process that dies frees its locks the same way.
 */
export function advisoryResourceLock(pool: Pool, options: { max?: number } = {}): ResourceLock & { close(): Promise<void> } {
  const locks = new Pool({ ...pool.options, max: options.max ?? 10, idleTimeoutMillis: 10_000, allowExitOnIdle: true });
  locks.on('error', () => undefined);
  const lock = async <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const client = await locks.connect();
    try {
      await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    try {
      return await task();
    } finally {
      // The lock is freed with the session when the unlock cannot be sent: discard the connection.
      const failed = await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).then(
        () => undefined,
        (error: Error) => error,
      );
      client.release(failed);
    }
  };
  return Object.assign(lock, { close: () => locks.end() });
}
