import { Readable } from 'node:stream';

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
