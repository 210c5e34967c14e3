import { createHash } from 'node:crypto';
import { sql, type PostgresPool, type PostgresPoolClient, type RawBuilder } from 'kysely';
import type { Pool, PoolClient, QueryConfig, QueryResult } from 'pg';

/**
 * The most statement texts one connection prepares. A connection that has prepared this many is
 * closed when it goes back to the pool, and the pool opens a fresh one: every statement stays
 * prepared, and PostgreSQL's memory for a session's prepared statements stays bounded.
 */
export const PREPARED_PER_CONNECTION = 200;

/**
 * A prepared statement's name: derived from its text, so the same text has the same name on every
 * connection, and two texts never share one. Behind PgBouncer in transaction mode, named statements
 * need PgBouncer 1.21 or later with max_prepared_statements set.
 */
export function statementName(text: string): string {
  return `msp_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
}

/** The comment that keeps a statement unnamed (plannedPerCall). */
export const PLANNED_PER_CALL = '/* planned per call */';

/**
 * `condition`, marked so that every statement holding it runs unnamed and PostgreSQL plans it for
 * the values of each call. For conditions whose best plan depends on the value: how many rows a
 * search's words match decides between walking the newest rows and collecting the matches through
 * the text index, and a prepared statement's generic plan, made once without the values, would
 * serve every search with one of the two.
 */
export function plannedPerCall<T>(condition: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${condition} ${sql.raw(PLANNED_PER_CALL)}`;
}

interface Preparing extends PostgresPoolClient {
  /** The names this connection has prepared. */
  prepared: Set<string>;
}

/** Per connection, not per pool: the replica's pool hands out the primary's connections when it must. */
const wrappers = new WeakMap<PoolClient, Preparing>();

/**
 * The pool Kysely runs on: each statement with parameters goes to PostgreSQL as a named prepared
 * statement (pg's `name`), which PostgreSQL parses once per connection and plans from its cached
 * plan on later executions; Kysely itself sends every statement unnamed, so PostgreSQL would parse
 * and plan the same text again on every request. Statements without parameters (`begin`, `commit`,
 * savepoints) are not worth a name and go as they are, as do cursors and statements holding a
 * plannedPerCall condition.
 */
export function preparingPool(pool: Pool | PostgresPool): PostgresPool {
  return {
    async connect() {
      const client = (await pool.connect()) as PoolClient;
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = preparing(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/** pg's error stack ends in the socket read; taken again here, it names the code that ran the statement. */
function restack(error: Error): never {
  Error.captureStackTrace(error);
  throw error;
}

/**
 * A statement through pg's callback form. pg's promise form stores a closure made for each call on
 * its Query (`query.callback = …`); the V8 of Node 24 allocates a closure stored that way in the old
 * generation, where until the next full collection it keeps the Query alive, and with it the
 * statement's text, its row description and its rows: every request's were promoted, and full
 * collections came every few seconds under load (docs/adr/0007). A callback passed as an argument
 * stays young, and the Query dies with the request.
 */
function submit(client: PoolClient, config: QueryConfig): Promise<QueryResult> {
  return new Promise<QueryResult>((resolve, reject) => {
    client.query(config, (error: Error | undefined, result: QueryResult) => (error ? reject(error) : resolve(result)));
  }).catch(restack);
}

function preparing(client: PoolClient): Preparing {
  const prepared = new Set<string>();
  const query = (textOrCursor: unknown, parameters?: ReadonlyArray<unknown>) => {
    if (typeof textOrCursor !== 'string') return client.query(textOrCursor as string, parameters as unknown[]);
    const values = parameters as unknown[] | undefined;
    if (!values?.length || textOrCursor.includes(PLANNED_PER_CALL)) {
      return submit(client, { text: textOrCursor, values });
    }
    const name = statementName(textOrCursor);
    prepared.add(name);
    return submit(client, { name, text: textOrCursor, values });
  };
  return {
    prepared,
    query: query as unknown as PostgresPoolClient['query'],
    release: (destroy?: boolean) => client.release(destroy || prepared.size >= PREPARED_PER_CONNECTION),
  };
}
