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
  const response = await new Promise<http.IncomingMessage>((resolve, reject) =>
    req.on('response', resolve).on('error', reject),
  );
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

/** The backends of `applicationName` (an export's pool) that are not idle: the ones still holding a query or a cursor. */
export async function busyBackends(
  admin: { query: <R>(text: string, values: unknown[]) => Promise<{ rows: R[] }> },
  applicationName: string,
): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND state <> 'idle'`,
    [applicationName],
  );
  return rows.map((row) => row.pid);
}

/** Asks `check` every 50 ms for up to 10 s; throws naming `what` if it never holds. */
export async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting until ${what}`);
}

/**
 * An export's idle timeout, as its caller sees it: once the stalled `reader`'s backend is idle again
 * (`busy()` names none), what the reader still takes ends short of a complete response. Ends the reader.
 */
export async function expectCutShortWhenIdle(reader: StalledReader, busy: () => Promise<number[]>): Promise<void> {
  try {
    await waitUntil(async () => (await busy()).length === 0, 'the stalled export lets go of its cursor');
    const rest = await readUntilClosed(reader);
    if (rest.complete) throw new Error('the stalled reader received a complete response: the export was not cut short');
    if (rest.bytes === 0)
      throw new Error('the stalled reader received nothing more: the export had stopped before the idle timeout');
  } finally {
    reader.req.destroy();
  }
}
