import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { Client, type Pool, type PoolClient } from 'pg';
import QueryStream from 'pg-query-stream';
import { poolSurvivingConnectionErrors } from './pool-errors';

/** Rows fetched from the cursor per round trip: large enough to be cheap, small enough to stay flat. */
const DEFAULT_BATCH_SIZE = 500;

/** How long a stream pool's caller waits for a connection when its options name no acquire timeout. */
export const DEFAULT_STREAM_ACQUIRE_TIMEOUT_MS = 5_000;

/** How long the side connection that cancels an abandoned query may take to connect. */
const CANCEL_CONNECT_TIMEOUT_MS = 5_000;

/** The states of pg-cursor in which PostgreSQL is still working on the query (not between batches, not done). */
const RUNNING = new Set(['initialized', 'submitted', 'busy']);

/**
 * Cancels the query running on backend `pid` from a connection of its own, outside any pool: a
 * pool whose connections are all held by abandoned streams still gets their queries cancelled.
 * Best effort: the abandoned connection is closed either way, which ends the backend once it next
 * writes to it.
 */
function cancelOutsidePool(connectionString: string | undefined, pid: number): void {
  if (!connectionString || !pid) return;
  const client = new Client({ connectionString, connectionTimeoutMillis: CANCEL_CONNECT_TIMEOUT_MS, application_name: 'msp-cancel' });
  client.on('error', () => undefined);
  void client
    .connect()
    .then(() => client.query('SELECT pg_cancel_backend($1)', [pid]))
    .catch(() => undefined)
    .finally(() => client.end().catch(() => undefined));
}

/**
 * A cursor over a query's rows that gives its connection back on every path: when it ends, and
 * when it is abandoned (the client went away or stopped reading, a later stage failed, the
 * service shuts down). An abandoned cursor's connection is closed at once rather than waiting for
 * a running sort to finish, and a query still running on the server is cancelled beside it.
 */
class CursorStream extends QueryStream {
  private released = false;

  constructor(
    text: string,
    values: unknown[],
    batchSize: number,
    private readonly client: PoolClient,
    private readonly connectionString: string | undefined,
    private readonly onRelease: () => void,
  ) {
    super(text, values, { batchSize });
  }

  /** Gives the connection back, once: to the pool when it is clean, else closed (`discard`). */
  private release(discard: boolean | Error | undefined): void {
    if (this.released) return;
    this.released = true;
    this.client.release(discard);
    this.onRelease();
  }

  override _destroy(error: Error, callback: (error?: Error | null) => void): void {
    if (this.readableEnded && !error) {
      super._destroy(error, (closeError?: Error | null) => {
        this.release(closeError ?? undefined);
        callback(closeError);
      });
      return;
    }
    // Closing the connection ends whatever the server was doing for it; a query still running
    // (not merely suspended between two batches, nor already failed) is cancelled too, from a
    // connection of its own, so that it does not run on until it next writes a row.
    const state = (this.cursor as { state?: string }).state ?? '';
    const pid = (this.client as unknown as { processID: number }).processID;
    this.release(true);
    if (RUNNING.has(state)) cancelOutsidePool(this.connectionString, pid);
    callback(error);
  }
}

export interface StreamRowsOptions {
  /** The caller went away: a wait for a connection, or a query on its way to its first row, ends at once. */
  signal?: AbortSignal;
  batchSize?: number;
}

/** `pool.connect()`, given up as soon as `signal` aborts (a connection that comes after that goes straight back). */
async function connectUnlessAborted(pool: Pool, signal: AbortSignal | undefined): Promise<PoolClient> {
  signal?.throwIfAborted();
  const connecting = pool.connect();
  if (!signal) return connecting;
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([connecting, aborted]);
  } catch (error) {
    if (signal.aborted) void connecting.then((client) => client.release(), () => undefined);
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The rows of `text` (with `$1`-style `values`), streamed in object mode as PostgreSQL produces
 * them, on a connection of `pool` held until the stream ends or is destroyed. Answers once the
 * first batch (or the end, or the error) is there: a failing query is still a clean error before
 * the caller has sent a byte of its own. Prisma cannot hand out a cursor, hence pg.
 */
export async function streamRows(pool: Pool, text: string, values: unknown[], options: StreamRowsOptions = {}, onRelease: () => void = () => undefined): Promise<Readable> {
  const client = await connectUnlessAborted(pool, options.signal);
  const rows = client.query(new CursorStream(text, values, options.batchSize ?? DEFAULT_BATCH_SIZE, client, pool.options.connectionString, onRelease));
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
export function isAcquireTimeout(error: unknown): boolean {
  const message = (error as { message?: unknown } | undefined)?.message;
  return message === 'timeout exceeded when trying to connect' || message === 'Connection terminated due to connection timeout';
}

export interface StreamPoolOptions {
  databaseUrl: string;
  /** How its connections show up in pg_stat_activity (operators, and the disconnect tests). */
  applicationName: string;
  /** At most this many streams at once per instance. */
  size: number;
  /** How long a stream waits for a connection before StreamPoolBusyError; DEFAULT_STREAM_ACQUIRE_TIMEOUT_MS when not given. */
  acquireTimeoutMs?: number;
}

/**
 * A pg Pool of its own for long reads streamed to a client (exports): a slow download never holds
 * the connections the API's requests need, and a full pool answers StreamPoolBusyError after the
 * acquire timeout instead of making the next caller wait for ever. `close()` ends what is still
 * streaming (its readers get a file cut short) and what still waits for a connection, so that it
 * never waits on a reader.
 */
export function createStreamPool(options: StreamPoolOptions) {
  const acquireTimeoutMs = options.acquireTimeoutMs ?? DEFAULT_STREAM_ACQUIRE_TIMEOUT_MS;
  // Its connections ending mid-stream (PostgreSQL restarted, the session terminated) reach the
  // cursor as an error; the pool keeps them from being an unhandled 'error' of the client.
  const pool = poolSurvivingConnectionErrors({
    connectionString: options.databaseUrl,
    max: options.size,
    application_name: options.applicationName,
    connectionTimeoutMillis: acquireTimeoutMs,
  });
  /** Streams that hold a connection now, and the pool's own end: close() reaches both. */
  const open = new Set<Readable>();
  const closing = new AbortController();

  async function busyAware<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isAcquireTimeout(error)) throw new StreamPoolBusyError(options.size, acquireTimeoutMs, { cause: error });
      throw error;
    }
  }

  async function rows(text: string, values: unknown[], streamOptions: StreamRowsOptions = {}): Promise<Readable> {
    const signal = streamOptions.signal ? AbortSignal.any([streamOptions.signal, closing.signal]) : closing.signal;
    // The stream leaves `open` when it gives its connection back, which may be before it is known here.
    const held: { stream?: Readable } = {};
    const stream = await busyAware(() => streamRows(pool, text, values, { ...streamOptions, signal }, () => held.stream && open.delete(held.stream)));
    held.stream = stream;
    if (closing.signal.aborted) {
      stream.destroy();
      throw closing.signal.reason;
    }
    if (!stream.destroyed) open.add(stream);
    return stream;
  }

  return {
    /** streamRows on this pool. */
    rows,
    /** One query on a connection of this pool (a check before a stream, counted against the same limit). */
    query: <R extends object>(text: string, values: unknown[]): Promise<R[]> => busyAware(async () => (await pool.query<R>(text, values)).rows),
    /** How many streams hold a connection now. */
    get streaming(): number {
      return open.size;
    },
    close: async (): Promise<void> => {
      if (closing.signal.aborted) return;
      closing.abort(new Error('the stream pool is closing'));
      for (const stream of [...open]) stream.destroy();
      await pool.end();
    },
  };
}

export type StreamPool = ReturnType<typeof createStreamPool>;
