import http from 'node:http';

/** A GET whose client took the first chunk of the body and then stopped reading (a stalled export reader). */
export interface StalledReader {
  status: number;
  headers: http.IncomingHttpHeaders;
  response: http.IncomingMessage;
  req: http.ClientRequest;
}

/**
 * Starts a GET of `url` and, when it answers 200, reads its first chunk and pauses: the server's
 * writes then fill the socket's buffers and stall, as behind a client that stopped reading. Any
 * other status is answered as it came. End it with `req.destroy()`.
 */
export async function stalledReader(url: string | URL, headers: http.OutgoingHttpHeaders): Promise<StalledReader> {
  const req = http.get(url, { headers });
  req.on('error', () => undefined); // ended by the server or by the test
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => req.on('response', resolve).on('error', reject));
  if (response.statusCode === 200) {
    await new Promise((resolve) => response.once('data', resolve));
    response.pause();
  }
  return { status: response.statusCode ?? 0, headers: response.headers, response, req };
}

/** Resumes a stalled reader and reads until its response closes: whether it came complete, and the bytes that came. */
export async function readUntilClosed(reader: StalledReader): Promise<{ complete: boolean; bytes: number }> {
  let bytes = 0;
  const complete = new Promise<boolean>((resolve) => {
    reader.response.on('data', (chunk: Buffer) => (bytes += chunk.length));
    reader.response.on('close', () => resolve(reader.response.complete));
  });
  reader.response.resume();
  return { complete: await complete, bytes };
}
