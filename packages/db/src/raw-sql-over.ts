import type { Pool } from 'pg';
import { withPoolTransaction } from './pool-transaction';
import { statementName } from './prepared-statements';
import type { Queryable } from './sql-reads';

/**
 * The raw-SQL surface of a Prisma client (`$queryRawUnsafe`, `$executeRawUnsafe`) over a plain
 * pool or connection, for code written against it (@msp/events' repositories) without a Prisma
 * client of its own (@msp/events' tests). Values come with pg's parsers: a timestamptz as a Date,
 * as through Prisma; an int8 as a string (Prisma: a BigInt).
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

/**
 * rawSqlOver a pool, with Prisma's interactive `$transaction(work)` as well: `work` gets the same
 * surface over one connection inside BEGIN … COMMIT (withPoolTransaction).
 */
export function transactionalSqlOver(pool: Pool) {
  return {
    ...rawSqlOver(pool),
    $transaction<T>(work: (tx: ReturnType<typeof rawSqlOver>) => Promise<T>): Promise<T> {
      return withPoolTransaction(pool, (client) => work(rawSqlOver(client)));
    },
  };
}
