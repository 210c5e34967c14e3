import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import { AppError } from './errors';
import type { Logger } from './logger';

/** A file made while it is sent: the source (a database cursor), then the stages that turn it into bytes. */
export interface StreamedFile {
  contentType: string;
  filename: string;
  stages: [Readable, ...Transform[]];
  /** Called once the transfer has ended, however it ended (a lease given back). */
  done?: () => unknown;
}

/**
 * A streamed file's idle timeout unless configured (EXPORT_IDLE_TIMEOUT_MS), in every service that
 * sends one (desk's time export, hr's payroll export).
 */
export const STREAMED_FILE_IDLE_TIMEOUT_MS = 30_000;

/** What an export's OpenAPI description says of the idle timeout (EXPORT_IDLE_TIMEOUT_MS). */
export const STREAMED_FILE_IDLE_DOC =
  'A client that takes no byte of the file for `EXPORT_IDLE_TIMEOUT_MS` (30 s by default) has its transfer ' +
  'cut short: the file it holds is incomplete (no final chunk), and it must export again.';

export interface StreamedFileOptions {
  /**
   * A reader that takes no byte for this long has its transfer cut short: a client that stops
   * reading must not hold the file's cursor and connection for ever. Without it, the socket's own
   * timeout (none by default) applies.
   */
  idleTimeoutMs?: number;
}

/**
 * Ends `res` once its reader has taken no byte for `idleMs` (`onStall` first). Node's socket timeout
 * already ignores a write the reader is still draining; what is left to tell apart is a reader that
 * keeps up while the next rows are on their way (nothing waits in the socket), which is no stall.
 */
function endWhenStalled(res: Response, idleMs: number, onStall: () => void): () => void {
  const onTimeout = () => {
    const socket = res.socket;
    if (!socket || socket.destroyed) return;
    if (socket.writableLength === 0 && res.writableLength === 0) {
      socket.setTimeout(idleMs);
      return;
    }
    onStall();
    res.destroy();
  };
  res.setTimeout(idleMs, onTimeout);
  return () => res.off('timeout', onTimeout);
}

/**
 * The streamed files an app is sending now, so that a shutdown can end them (endStreamedFiles):
 * a download may take longer than any shutdown timeout, and one whose reader stalled, or that
 * still waits for a connection, would otherwise hold the process until it is killed.
 */
const inFlight = new WeakMap<object, Set<(reason: string) => void>>();

function inFlightOf(app: object): Set<(reason: string) => void> {
  let ends = inFlight.get(app);
  if (!ends) inFlight.set(app, (ends = new Set()));
  return ends;
}

/**
 * Ends every file `app` is sending or about to send: a transfer under way is cut short (its reader
 * sees an incomplete file, never a complete-looking one) and its cursor and connection freed; one
 * still opening stops waiting. Answers how many there were. startServer calls it when shutdown begins.
 */
export function endStreamedFiles(app: object, reason = 'the service is shutting down'): number {
  const ends = inFlight.get(app);
  if (!ends) return 0;
  const count = ends.size;
  for (const end of [...ends]) end(reason);
  return count;
}

/** Destroys every stage of a file whose transfer never started (nothing else would close its cursor). */
function discard(file: StreamedFile): void {
  for (const stage of file.stages) stage.destroy();
}

/**
 * Sends a file as an attachment while it is made, back-pressure end to end, memory flat however
 * large. `open` may take long (PostgreSQL aggregates before the first row): a client that leaves
 * meanwhile, or a shutdown, aborts its signal. An error from `open` is still a clean problem
 * document; once the status line is out all that is left on an error is to cut the transfer
 * short, so the client sees an incomplete file rather than a complete-looking one. A client that
 * went away is no error of ours. Every stage `open` made is destroyed on every path that does not
 * hand it to the pipeline, so no cursor outlives its request.
 */
export async function sendStreamedFile(
  res: Response,
  logger: Logger,
  what: string,
  context: Record<string, unknown>,
  open: (signal: AbortSignal) => Promise<StreamedFile>,
  options: StreamedFileOptions = {},
): Promise<void> {
  const gone = new AbortController();
  let shutDown: string | undefined;
  let sending = false;
  const end = (reason: string) => {
    shutDown = reason;
    gone.abort(new Error(reason));
    // Once bytes may be out, only cutting the connection tells the reader the file is incomplete.
    if (sending) res.destroy();
  };
  const ends = inFlightOf(res.app);
  ends.add(end);
  res.once('close', () => gone.abort());
  try {
    let file: StreamedFile;
    try {
      file = await open(gone.signal);
    } catch (error) {
      if (!gone.signal.aborted) throw error;
      if (shutDown === undefined) {
        logger.info(`${what} abandoned by the client before its first row`, context);
        return;
      }
      logger.info(`${what} ended before its first row: ${shutDown}`, context);
      throw new AppError(
        503,
        `The ${what} was stopped before it began: ${shutDown}. Retry after the time given in Retry-After.`,
        {
          code: 'shutting-down',
          headers: { 'Retry-After': '1', Connection: 'close' },
        },
      );
    }
    sending = true;
    if (shutDown !== undefined) res.destroy();
    await transfer(res, logger, what, context, file, options, () => shutDown);
  } finally {
    ends.delete(end);
  }
}

async function transfer(
  res: Response,
  logger: Logger,
  what: string,
  context: Record<string, unknown>,
  file: StreamedFile,
  options: StreamedFileOptions,
  shutDown: () => string | undefined,
): Promise<void> {
  let stalled = false;
  let piped = false;
  const stopWatching =
    options.idleTimeoutMs === undefined
      ? () => undefined
      : endWhenStalled(res, options.idleTimeoutMs, () => (stalled = true));
  try {
    if (res.destroyed)
      throw Object.assign(new Error('the response was closed before the file was sent'), {
        code: 'ERR_STREAM_PREMATURE_CLOSE',
      });
    res.status(200);
    res.setHeader('Content-Type', file.contentType);
    res.setHeader('Content-Disposition', `attachment; filename="${file.filename}"`);
    piped = true;
    await pipeline([...file.stages, res]);
  } catch (error) {
    res.destroy();
    if (!piped) discard(file);
    const reason = shutDown();
    if (reason) logger.info(`${what} cut short: ${reason}`, context);
    else if (stalled)
      logger.info(`${what} ended: its reader took no byte within the idle timeout`, {
        ...context,
        idle_timeout_ms: options.idleTimeoutMs,
      });
    else if ((error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE')
      logger.info(`${what} abandoned by the client`, context);
    else logger.error(`${what} failed while streaming`, { ...context, error });
  } finally {
    stopWatching();
    await file.done?.();
  }
}
