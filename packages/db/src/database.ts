import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import Cursor from 'pg-cursor';
import { Pool, types, type PoolConfig } from 'pg';
import { preparingPool } from './prepared-statements';
import { DEFAULT_ACQUIRE_TIMEOUT_MS } from './sql-reads';

/**
 * A service's one way to its database: a Kysely instance over one pg pool. Every repository takes
 * the `Kysely<DB>` (or a transaction of it, which has the same type), so a row has one type inside
 * and outside a transaction, and one set of type parsers reads every value.
 */
export interface Database<DB> {
  db: Kysely<DB>;
  /** The pool under `db`: for readiness checks, advisory locks and tests; queries go through `db`. */
  pool: Pool;
  /**
   * Where reads that tolerate replica lag go (list pages and their totals, exports): Kysely over a
   * second pool to the read-only replica when `readUrl` was given, else `db` itself. A read that
   * follows the caller's own write in the same request goes through `db`: the replica may not
   * have that write yet.
   */
  reads: Kysely<DB>;
  /**
   * The replica's own pool (the same object as `pool` without a replica), for its readiness check:
   * `reads` falls back to the primary when this pool cannot connect, so only this pool tells
   * whether the replica answers.
   */
  readPool: Pool;
  /** Closes both pools. */
  close(): Promise<void>;
}

/**
 * Any service's database, for code shared by the services (list counts, events) that reads tables
 * every service has. Kysely's types are invariant in the database type, so a `Kysely<DeskDB>` is not
 * a `Kysely<{list_counts: …}>`; shared code takes this and reads it through its own table types.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type AnyDatabase = Kysely<any>;

export interface DatabaseOptions {
  /** Connections at most (pg's default 10). */
  max?: number;
  /**
   * How long a query waits for a free connection (DEFAULT_ACQUIRE_TIMEOUT_MS when not given); past it
   * pg-pool's timeout error, which @msp/http answers as a 503 with Retry-After.
   */
  acquireTimeoutMs?: number;
  /** How the connections show up in pg_stat_activity; the replica's connections carry it with `-reads`. */
  applicationName?: string;
  /**
   * A read-only replica (DATABASE_READ_URL, e.g. HAProxy's replica port): `reads` goes there over a
   * pool of the same settings. Unset, everything reads the primary.
   */
  readUrl?: string;
}

const DATE = 1082;
const INT8 = 20;
const NUMERIC = 1700;

/*
 * The one set of parsers. A `date` stays the text PostgreSQL sends ("2026-03-29"): pg would make it
 * a Date at local midnight, a day off east or west of UTC. An int8 (counts, sequence numbers) is a
 * number: the services' counters stay far below 2^53. A timestamptz is pg's Date.
 */
const PARSERS: Record<number, (text: string) => unknown> = {
  [DATE]: (text) => text,
  [INT8]: (text) => Number(text),
  [NUMERIC]: (text) => text,
};

export const typeParsers = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (format !== 'binary' && PARSERS[oid]) || types.getTypeParser(oid, format as 'text')) as typeof types.getTypeParser,
};

/**
 * The services' statements are short: JIT compilation and parallel workers cost more to start than
 * they save on them, on every execution whose estimate passes their thresholds.
 */
export const SESSION_OPTIONS = '-c jit=off -c max_parallel_workers_per_gather=0';

/** The pool's settings for `url`, shared by the services' pool and the ones tests open beside it. */
export function poolConfig(url: string, options: DatabaseOptions = {}): PoolConfig {
  return {
    connectionString: url,
    options: SESSION_OPTIONS,
    types: typeParsers,
    ...(options.max === undefined ? {} : { max: options.max }),
    connectionTimeoutMillis: options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
    ...(options.applicationName === undefined ? {} : { application_name: options.applicationName }),
  };
}

/**
 * A pg Pool whose connections' failures never end the process. A pg client emits 'error' when its
 * connection fails while no query of its own runs on it (PostgreSQL restarted, the session
 * terminated), and an 'error' nobody listens to ends the process; pg-pool listens only while a
 * client is idle. The failed client is already unusable when it fires: its queries fail, and the
 * pool discards it on release.
 */
export function createPool(config: PoolConfig): Pool {
  const pool = new Pool(config);
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

function kyselyOver<DB>(pool: PostgresPool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool(pool), cursor: Cursor }) });
}

/**
 * The replica's pool, which hands out a primary connection when no replica connection can be had
 * (the replica down, being rebuilt, or HAProxy's replica port without a healthy server): a list may
 * read the primary for a while, but it never fails because the replica is away.
 */
function replicaOrPrimary(readPool: Pool, primary: Pool): PostgresPool {
  return {
    async connect() {
      try {
        return await readPool.connect();
      } catch {
        return primary.connect();
      }
    },
    end: () => readPool.end(),
  };
}

export function openDatabase<DB>(url: string, options: DatabaseOptions = {}): Database<DB> {
  const { readUrl, ...poolOptions } = options;
  const pool = createPool(poolConfig(url, poolOptions));
  const db = kyselyOver<DB>(pool);
  if (readUrl === undefined) return { db, pool, reads: db, readPool: pool, close: () => db.destroy() };
  const readPool = createPool(
    poolConfig(readUrl, {
      ...poolOptions,
      ...(poolOptions.applicationName === undefined ? {} : { applicationName: `${poolOptions.applicationName}-reads` }),
    }),
  );
  const reads = kyselyOver<DB>(replicaOrPrimary(readPool, pool));
  return { db, pool, reads, readPool, close: async () => void (await Promise.all([db.destroy(), reads.destroy()])) };
}
