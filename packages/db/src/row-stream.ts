import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type { Pool, PoolClient } from 'pg';
import QueryStream from 'pg-query-stream';

/** Rows fetched from the cursor per round trip: large enough to be cheap, small enough to stay flat. */
const DEFAULT_BATCH_SIZE = 500;

/**
 * A cursor over a query's rows that gives its connection back when it ends, and when it is
 * abandoned (the client went away, a later stage failed) cancels the query on the server and
 * closes the connection rather than waiting for a running sort to finish.
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
