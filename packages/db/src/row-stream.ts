import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type { Pool, PoolClient } from 'pg';
import QueryStream from 'pg-query-stream';
import { poolSurvivingConnectionErrors } from './pool-errors';

/** Rows fetched from the cursor per round trip: large enough to be cheap, small enough to stay flat. */
const DEFAULT_BATCH_SIZE = 500;

/**
 * A cursor over a query's rows that gives its connection back when it ends, and when it is
 * abandoned (the client went away or stopped reading, a later stage failed) closes the connection
 * rather than waiting for a running sort to finish; a query still running on the server is
 * cancelled first.
 */
class CursorStream extends QueryStream {
  constructor(
    text: string,
    values: unknown[],
    batchSize: number,
    private readonly client: PoolClient,
    private readonly cancel: (pid: number) => Promise<unknown>,
  ) {
    super(text, values, { batchSize });
  }

  override _destroy(error: Error, callback: (error?: Error | null) => void): void {
    if (this.readableEnded && !error) {
      super._destroy(error, (closeError?: Error | null) => {
        this.client.release(closeError ?? undefined);
        callback(closeError);
      });
      return;
    }
    // Suspended between two batches (a reader that stopped taking them), the server only waits for
    // the next fetch: closing the connection ends it at once. Cancelling would need another
    // connection of the pool, which a pool full of such readers has none of.
    if ((this.cursor as { state?: string }).state === 'idle') {
      this.client.release(true);
      callback(error);
      return;
    }
    const pid = (this.client as unknown as { processID: number }).processID;
    void this.cancel(pid)
      .catch(() => undefined) // the connection is closed below either way
      .finally(() => this.client.release(true));
    callback(error);
  }
}

export interface StreamRowsOptions {
  /** The caller went away: a query still on its way to its first row is cancelled at once. */
  signal?: AbortSignal;
  batchSize?: number;
}

/**
 * The rows of `text` (with `$1`-style `values`), streamed in object mode as PostgreSQL produces
 * them, on a connection of `pool` held until the stream ends or is destroyed. Answers once the
 * first batch (or the end, or the error) is there: a failing query is still a clean error before
 * the caller has sent a byte of its own. Prisma cannot hand out a cursor, hence pg.
 */
export async function streamRows(pool: Pool, text: string, values: unknown[], options: StreamRowsOptions = {}): Promise<Readable> {
  const client = await pool.connect();
  const cancel = (pid: number) => pool.query('SELECT pg_cancel_backend($1)', [pid]);
  const rows = client.query(new CursorStream(text, values, options.batchSize ?? DEFAULT_BATCH_SIZE, client, cancel));
  try {
    await once(rows, 'readable', { signal: options.signal });
  } catch (error) {
    rows.destroy();
    throw error;
  }
  return rows;
}

/** Every connection of a stream pool stayed busy for its acquire timeout. */
export class StreamPoolBusyError extends Error {
  constructor(
    readonly size: number,
    readonly acquireTimeoutMs: number,
    options?: ErrorOptions,
  ) {
    super(`every connection of the pool (${size}) stayed busy for ${acquireTimeoutMs} ms`, options);
    this.name = 'StreamPoolBusyError';
  }
}

/** pg-pool's error when no connection came within connectionTimeoutMillis (pool full, or the database slow to accept one). */
function isAcquireTimeout(error: unknown): boolean {
  const message = (error as { message?: unknown } | undefined)?.message;
  return message === 'timeout exceeded when trying to connect' || message === 'Connection terminated due to connection timeout';
}

export interface StreamPoolOptions {
  databaseUrl: string;
  /** How its connections show up in pg_stat_activity (operators, and the disconnect tests). */
  applicationName: string;
  /** At most this many streams at once per instance. */
  size: number;
  /** How long a stream waits for a connection before StreamPoolBusyError; without it, it waits as long as it takes. */
  acquireTimeoutMs?: number;
}

/**
 * A pg Pool of its own for long reads streamed to a client (exports): a slow download never holds
 * the connections the API's requests need, and a full pool answers StreamPoolBusyError after the
 * acquire timeout instead of making the next caller wait for ever.
 */
export function createStreamPool(options: StreamPoolOptions) {
  // Its connections ending mid-stream (PostgreSQL restarted, the session terminated) reach the
  // cursor as an error; the pool keeps them from being an unhandled 'error' of the client.
  const pool = poolSurvivingConnectionErrors({
    connectionString: options.databaseUrl,
    max: options.size,
    application_name: options.applicationName,
    ...(options.acquireTimeoutMs === undefined ? {} : { connectionTimeoutMillis: options.acquireTimeoutMs }),
  });

  async function busyAware<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (options.acquireTimeoutMs !== undefined && isAcquireTimeout(error)) throw new StreamPoolBusyError(options.size, options.acquireTimeoutMs, { cause: error });
      throw error;
    }
  }

  return {
    /** streamRows on this pool. */
    rows: (text: string, values: unknown[], streamOptions?: StreamRowsOptions): Promise<Readable> => busyAware(() => streamRows(pool, text, values, streamOptions)),
    /** One query on a connection of this pool (a check before a stream, counted against the same limit). */
    query: <R extends object>(text: string, values: unknown[]): Promise<R[]> => busyAware(async () => (await pool.query<R>(text, values)).rows),
    close: (): Promise<void> => pool.end(),
  };
}

export type StreamPool = ReturnType<typeof createStreamPool>;
