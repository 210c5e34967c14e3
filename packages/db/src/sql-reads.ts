import { type Pool, types, type PoolClient } from 'pg';
import { poolSurvivingConnectionErrors } from './pool-errors';
import { statementName } from './prepared-statements';

/*
 * Plain SQL for a service's hottest reads. Prisma's result mapping (the driver adapter normalising
 * each value, then the client deserialising it) cost ~290 µs of CPU for a page of 25 tickets more
 * than the same SELECT through pg (~165 µs), and a model query (findFirst, findMany) more again:
 * the largest single cost of a list request (docs/performance.md). Those reads run on the pg
 * pool that Prisma's adapter itself uses, so there is one pool per service, as before.
 */

/** A connection of the pool, or the pool itself: both run `query` the same way. */
export type Queryable = Pool | PoolClient;

/** A statement with `$1`-style placeholders: what `Prisma.sql` builds (its `text` and `values`). */
export interface SqlQuery {
  text: string;
  values: unknown[];
}

const TIMESTAMPTZ = 1184;
// PostgreSQL's text for a UTC timestamptz: "2026-11-24 00:25:05.7+00" (fraction trimmed, or none).
const UTC_TEXT = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,3}))?\+00$/;

/**
 * A timestamptz as the API writes it, ISO 8601 in UTC with milliseconds ("2026-11-24T00:25:05.700Z",
 * what Date#toISOString gives), made from PostgreSQL's text without a Date in between: parsing
 * into a Date and formatting it again was ~7 % of a list request's CPU. The short way needs the
 * session in UTC (PostgreSQL's usual default); anything else (another offset, more digits, a year
 * past 9999) goes the long way, through pg's own parser.
 */
export function isoTimestamp(text: string): string {
  const match = UTC_TEXT.exec(text);
  if (!match) return new Date(types.getTypeParser(TIMESTAMPTZ)(text) as Date).toISOString();
  return `${match[1]}T${match[2]}.${(match[3] ?? '').padEnd(3, '0')}Z`;
}

/**
 * The same format written by PostgreSQL, for a row that becomes JSON in the database itself (the
 * object of an event inserted by the statement that makes the change). `column` is SQL of the
 * caller's code, never a value. Years 0001-9999, as the API's timestamps are.
 */
export function isoTimestampSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * The connection pool a service's Prisma client (through `new PrismaPg(pool)`) and its plain reads share.
 *
 * Its sessions run without JIT and without parallel workers: the services' statements are short,
 * and both are costs paid on every execution once the planner's estimate passes a threshold, not
 * once per statement. A search at a million tickets (desk's GET /tickets?q=) ran 28 ms and spent
 * ~25 ms more compiling expressions (jit_above_cost is reached by the estimate of a branch it does
 * not run), and 35 ms more starting two workers for a bitmap scan that found nothing
 * (docs/performance.md).
 */
export function createPool(databaseUrl: string, options: PoolOptions = {}): Pool {
  return poolSurvivingConnectionErrors({
    connectionString: databaseUrl,
    options: SESSION_OPTIONS,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
    ...(options.size === undefined ? {} : { max: options.size }),
  });
}

/**
 * How long a request waits for a connection of a service's pool when none is free (all held by
 * other requests) or the database is slow to accept a new one. Past it the request fails with
 * pg-pool's `timeout exceeded when trying to connect`, which @msp/http answers as a 503 with
 * `Retry-After`: a caller is told to come back instead of waiting for ever behind a full pool.
 */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000;

export interface PoolOptions {
  /** DEFAULT_ACQUIRE_TIMEOUT_MS when not given. */
  acquireTimeoutMs?: number;
  /** Connections at most (pg's default, 10, when not given). */
  size?: number;
}

/** The settings of createPool's sessions (PostgreSQL's `options` startup parameter). */
export const SESSION_OPTIONS = '-c jit=off -c max_parallel_workers_per_gather=0';

/** Anything that runs raw SQL: a Prisma client or an interactive transaction. */
export interface RawQueryRunner {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Prisma's own signature
  $queryRawUnsafe<T = unknown>(query: string, ...values: any[]): PromiseLike<T>;
}

export type SqlRows = <T>(query: SqlQuery) => Promise<T[]>;

/** pg's parsers, but those of `overrides` (by type OID, text format) instead. Per query: the pool keeps pg's defaults. */
export function typeParsers(overrides: Record<number, (text: string) => unknown>) {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      (format !== 'binary' && overrides[oid]) ||
      types.getTypeParser(oid, format as 'text')) as typeof types.getTypeParser,
  };
}

/** A timestamptz becomes the API's ISO string (isoTimestamp). */
const PLAIN_READ_TYPES = typeParsers({ [TIMESTAMPTZ]: isoTimestamp });

/** Statements on `pool` (or one of its connections), each a named prepared statement, its rows read with `parsers`. */
export function poolRows(pool: Queryable, parsers: ReturnType<typeof typeParsers> = PLAIN_READ_TYPES): SqlRows {
  return async <T>(query: SqlQuery) =>
    (await pool.query({ name: statementName(query.text), text: query.text, values: query.values, types: parsers }))
      .rows as T[];
}

/**
 * Runs a statement on `pool` when given (the pool, or one of its connections), else
 * through `db` (Prisma, or a Prisma transaction's client, whose reads must see its own writes and
 * locks). The two differ in two types: a bigint (int8) column is a string from
 * pg and a BigInt from Prisma (read it through Number()),, and a timestamptz is an ISO string from
 * the pool and a Date from Prisma.
 */
export function sqlRows(db: RawQueryRunner, pool?: Queryable): SqlRows {
  if (pool) return poolRows(pool);
  return async <T>(query: SqlQuery) => (await db.$queryRawUnsafe<T[]>(query.text, ...query.values)) as T[];
}

/** `query`'s placeholders moved up by `offset` ($1 → $(1+offset)), to place it after another query's values. */
function shifted(query: SqlQuery, offset: number): string {
  return query.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
}

/**
 * A page of a list and the list's total, in one round trip: `SELECT page.*, (<total>) AS total
 * FROM (<page>) AS page`; only an empty page (past the end, or nothing matches) asks for the total
 * again. `page` selects the rows (with its ORDER BY, LIMIT and OFFSET), `total` one count. (A
 * LATERAL join that also answered an empty page in one statement cost PostgreSQL 2.5× the
 * planning and execution of this one, measured with pgbench.)
 */
export async function pageWithTotal<T>(
  rows: SqlRows,
  page: SqlQuery,
  total: SqlQuery,
): Promise<{ items: T[]; total: number }> {
  const found = await rows<T & { total: string | bigint | null }>({
    text: `SELECT page.*, (${shifted(total, page.values.length)}) AS total FROM (${page.text}) AS page`,
    values: [...page.values, ...total.values],
  });
  // int8 arrives as a string (pg) or a BigInt (Prisma): Number() reads both.
  const counted = found.length
    ? found[0]!.total
    : Object.values((await rows<Record<string, string | bigint | null>>(total))[0] ?? {})[0];
  return { items: found as T[], total: Number(counted ?? 0) };
}
