import fs from 'node:fs';
import path from 'node:path';

/**
 * Where the launcher notes the port of the embedded PostgreSQL it started, so the repository's
 * other commands (`pnpm tenant:create`) find that server without the user repeating
 * EMBEDDED_PG_PORT. The note stays after a stop: it names the port the stack will use again, and
 * the commands check that something answers there.
 */
export function embeddedPostgresStateFileOf(dataRoot: string): string {
  return path.join(dataRoot, 'embedded-postgres.json');
}

export function recordEmbeddedPostgres(dataRoot: string, port: number): void {
  const state = { port, host: '127.0.0.1', launcher_pid: process.pid, started_at: new Date().toISOString() };
  fs.writeFileSync(embeddedPostgresStateFileOf(dataRoot), `${JSON.stringify(state, null, 2)}\n`);
}

/** The port the last start noted under `dataRoot`, or undefined when there is no (readable) note. */
export function recordedEmbeddedPostgresPort(dataRoot: string): number | undefined {
  try {
    const { port } = JSON.parse(fs.readFileSync(embeddedPostgresStateFileOf(dataRoot), 'utf8')) as { port?: unknown };
    return typeof port === 'number' && Number.isInteger(port) && port > 0 && port <= 65_535 ? port : undefined;
  } catch {
    return undefined;
  }
}
