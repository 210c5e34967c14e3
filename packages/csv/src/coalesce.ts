import { Transform, type TransformCallback } from 'node:stream';

/** About four TCP segments' worth on loopback, a few on a LAN; small enough to stay flat. */
const DEFAULT_BLOCK_BYTES = 64 * 1024;

/**
 * Gathers the writers' many small pieces (one per row) into blocks of about `blockBytes` before
 * they reach the response: one write, one chunk header and one syscall per block instead of per row,
 * and far less short-lived garbage. Back-pressure passes through unchanged (a Transform).
 */
export function coalesce(blockBytes = DEFAULT_BLOCK_BYTES): Transform {
  let parts: Buffer[] = [];
  let length = 0;
  const take = () => {
    const block = Buffer.concat(parts, length);
    parts = [];
    length = 0;
    return block;
  };
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      parts.push(chunk);
      length += chunk.length;
      callback(null, length >= blockBytes ? take() : undefined);
    },
    flush(callback: TransformCallback) {
      callback(null, length ? take() : undefined);
    },
  });
}
