import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` in a transaction on one connection of `pool`: BEGIN, `work`, COMMIT, or ROLLBACK when
 * it throws (and the error is thrown on). For a short write on a hot path that Prisma's interactive
 * transaction makes slow: Prisma sends the same BEGIN and statements, but its transaction manager
 * and result mapping cost link's sync run time before its end was recorded (docs/performance.md,
 * `pnpm bench:link`). Statements inside go through pg (rawSqlOver(client) gives them the raw-SQL
 * surface @msp/events records with). A connection that failed is discarded, not returned to the pool.
 */
export async function withPoolTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection that ended or errored mid-transaction must not serve the next caller.
  let broken: Error | undefined;
  const onError = (error: Error) => (broken ??= error);
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackFailed: Error) => (broken ??= rollbackFailed));
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
