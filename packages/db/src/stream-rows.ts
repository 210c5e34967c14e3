import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { sql, type Kysely } from 'kysely';

/** Rows fetched from the cursor per round trip: large enough to be cheap, small enough to stay flat. */
const DEFAULT_CHUNK_SIZE = 500;

/** A Kysely query that can be streamed (a SelectQueryBuilder, or `sql` run through a cursor). */
export interface StreamableQuery<Row> {
  stream(chunkSize?: number): AsyncIterableIterator<Row>;
}

/**
 * The rows of `query` as an object-mode Readable, read through a cursor on a connection of the
 * pool that is held until the stream ends. Answers once the first row (or the end, or the error)
 * is there, so a failing query is a clean error before the caller has sent a byte. Ended, failed
 * or destroyed (the client went away, a later stage failed), the stream closes its cursor and gives
 * its connection back: Kysely's iterator does both when it is returned.
 */
export async function streamRows<Row>(
  query: StreamableQuery<Row>,
  options: { chunkSize?: number } = {},
): Promise<Readable> {
  const rows = query.stream(options.chunkSize ?? DEFAULT_CHUNK_SIZE);
  let first: IteratorResult<Row>;
  try {
    first = await rows.next();
  } catch (error) {
    await rows.return?.();
    throw error;
  }
  async function* all(): AsyncGenerator<Row> {
    try {
      if (first.done) return;
      yield first.value;
      yield* rows;
    } finally {
      await rows.return?.();
    }
  }
  return Readable.from(all(), { objectMode: true });
}

/** streamInReadOnlyTransaction's settings. */
export interface ExportStreamOptions {
  /** What the connection is named while it streams (`application_name`, seen in pg_stat_activity). */
  applicationName: string;
  /** The caller gone: cancels the query if no row has come yet. */
  signal?: AbortSignal;
  /** Called once the transaction has ended, however it ended (an export slot given back). */
  release: () => void;
}

/**
 * The rows of `query`, streamed (streamRows) in a read-only transaction of their own that ends when
 * the stream does, for a long export. A large export spends most of its time before the first row
 * (PostgreSQL aggregates first): a caller gone meanwhile (`signal`) cancels the query at once.
 */
export function streamInReadOnlyTransaction<DB, Row>(
  db: Kysely<DB>,
  query: (trx: Kysely<DB>) => StreamableQuery<Row>,
  { applicationName, signal, release }: ExportStreamOptions,
): Promise<Readable> {
  return new Promise<Readable>((resolve, reject) => {
    const transaction = db
      .transaction()
      .setAccessMode('read only')
      .execute(async (trx) => {
        const named = sql<{
          pid: number;
        }>`SELECT pg_backend_pid() AS pid, set_config('application_name', ${applicationName}, true)`;
        const { rows } = await named.execute(trx);
        signal?.throwIfAborted();
        // Cancelling needs another connection; it is awaited before this one can be given back, so it can only reach this query.
        let cancelled: Promise<unknown> | undefined;
        const cancel = () =>
          (cancelled = sql`SELECT pg_cancel_backend(${rows[0]!.pid})`.execute(db).catch(() => undefined));
        signal?.addEventListener('abort', cancel, { once: true });
        let streamed: Readable;
        try {
          streamed = await streamRows(query(trx));
        } finally {
          signal?.removeEventListener('abort', cancel);
          await cancelled;
        }
        resolve(streamed);
        // However the stream ends (read to its end, abandoned, failed), its cursor is closed by then.
        await finished(streamed).catch(() => undefined);
      });
    transaction.then(release, (error: unknown) => {
      release();
      reject(error);
    });
  });
}
