import type { Pool, PoolClient } from 'pg';
import { statementName } from './sql-reads';

/*
 * A transaction in plain SQL for a hot write whose every statement is SQL (desk's POST /tickets).
 * Prisma's interactive transaction (its transaction manager, and each raw statement through the
 * query engine and the driver adapter) was ~30 % of the CPU of creating a ticket, about as much
 * as the request's HTTP, validation and SQL together (issue 12, bench/README.md). Writes that use
 * Prisma's model API keep Prisma's transactions.
 */

/** A connection of the pool, or the pool itself: both run `query` the same way. */
export type Queryable = Pool | PoolClient;

/**
 * Runs `work` in one transaction on one connection of `pool`: BEGIN, work, COMMIT; ROLLBACK when
 * it throws (and the error goes on). A connection whose ROLLBACK failed (it broke mid-way) is
 * closed instead of going back to the pool.
 */
export async function sqlTransaction<T>(pool: Pool, work: (connection: PoolClient) => Promise<T>): Promise<T> {
  const connection = await pool.connect();
  let broken = false;
  // A checked-out connection that breaks (PostgreSQL restarting) emits 'error', which the pool
  // only listens for on idle ones: unheard, it would end the process. Its query fails as well,
  // and that failure is what the caller sees.
  const markBroken = () => {
    broken = true;
  };
  connection.on('error', markBroken);
  try {
    await connection.query('BEGIN');
    const result = await work(connection);
    await connection.query('COMMIT');
    return result;
  } catch (error) {
    await connection.query('ROLLBACK').catch(markBroken);
    throw error;
  } finally {
    connection.off('error', markBroken);
    connection.release(broken);
  }
}

/**
 * The raw-SQL surface of a Prisma client (`$queryRawUnsafe`, `$executeRawUnsafe`) over a plain
 * connection, for code written against it (@msp/events' recordEvent) inside a sqlTransaction.
 * Values come with pg's parsers: a timestamptz as a Date, as through Prisma; an int8 as a string
 * (Prisma: a BigInt).
 */
export function rawSqlOver(connection: Queryable) {
  return {
    async $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T> {
      return (await connection.query({ name: statementName(query), text: query, values })).rows as T;
    },
    async $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number> {
      return (await connection.query({ name: statementName(query), text: query, values })).rowCount ?? 0;
    },
  };
}
