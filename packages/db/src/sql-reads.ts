import { Pool } from 'pg';

/*
 * Plain SQL for a service's hottest reads. Prisma's result mapping (the driver adapter normalising
 * each value, then the client deserialising it) cost ~290 µs of CPU for a page of 25 tickets more
 * than the same SELECT through pg (~165 µs), and a model query (findFirst, findMany) more again:
 * the largest single cost of a list request (issue 12, bench/README.md). Those reads run on the pg
 * pool that Prisma's adapter itself uses, so there is one pool per service, as before.
 */

/** A statement with `$1`-style placeholders: what `Prisma.sql` builds (its `text` and `values`). */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

/** The connection pool a service's Prisma client (through `new PrismaPg(pool)`) and its plain reads share. */
export function createPool(databaseUrl: string): Pool {
  const pool = new Pool({ connectionString: databaseUrl });
  // An idle client losing its connection (PostgreSQL restarting) must not crash the process; the
  // pool replaces it on the next query.
  pool.on('error', () => undefined);
  return pool;
}

/** Anything that runs raw SQL: a Prisma client or an interactive transaction. */
export interface RawQueryRunner {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Prisma's own signature
  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): PromiseLike<T>;
}

export type SqlRows = <T>(query: SqlQuery) => Promise<T[]>;

/**
 * Runs a read on `pool` when given, else through `db` (a transaction's client, whose reads must see
 * its own writes and locks). The two differ in one type only: a bigint (int8) column is a string
 * from pg and a BigInt from Prisma; read such columns through Number().
 */
export function sqlRows(db: RawQueryRunner, pool?: Pool): SqlRows {
  if (pool) return async <T>(query: SqlQuery) => (await pool.query(query.text, query.values)).rows as T[];
  return async <T>(query: SqlQuery) => (await db.$queryRawUnsafe<T[]>(query.text, ...query.values)) as T[];
}
