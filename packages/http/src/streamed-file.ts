import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { Logger } from './logger';

/** A file made while it is sent: the source (a database cursor), then the stages that turn it into bytes. */
export interface StreamedFile {
  contentType: string;
  filename: string;
  stages: [Readable, ...Transform[]];
}

/**
 * Sends a file as an attachment while it is made, back-pressure end to end, memory flat however
 * large. `open` may take long (PostgreSQL aggregates before the first row): a client that leaves
 * meanwhile aborts its signal. An error from `open` is still a clean problem document; once the
 * status line is out all that is left on an error is to cut the transfer short, so the client sees
 * an incomplete file rather than a complete-looking one. A client that went away is no error of ours.
 */
export async function sendStreamedFile(
  res: Response,
  logger: Logger,
  what: string,
  context: Record<string, unknown>,
  open: (signal: AbortSignal) => Promise<StreamedFile>,
): Promise<void> {
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  let file: StreamedFile;
  try {
    file = await open(gone.signal);
  } catch (error) {
    if (!gone.signal.aborted) throw error;
    logger.info(`${what} abandoned by the client before its first row`, context);
    return;
  }
  res.status(200);
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Disposition', `attachment; filename="${file.filename}"`);
  try {
    await pipeline([...file.stages, res]);
  } catch (error) {
    res.destroy();
    if ((error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') logger.info(`${what} abandoned by the client`, context);
    else logger.error(`${what} failed while streaming`, { ...context, error });
  }
}
