import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { databaseUrlFor, redactPassword } from './database-urls';
import { DEFAULT_EMBEDDED_PG_PORT, readDevstackConfig } from './devstack-config';
import { isDevstackError } from './devstack-error';
import { EMBEDDED_PG_HOST, embeddedServerUrl } from './embedded-postgres';
import { embeddedPostgresStateFileOf, recordedEmbeddedPostgresPort } from './embedded-postgres-state';
import { ensureDatabases } from './ensure-databases';

type Env = Record<string, string | undefined>;

export interface ToolIo {
  /** stdout: only the created tenant's JSON. */
  readonly out: (text: string) => void;
  /** stderr: everything for people. */
  readonly err: (text: string) => void;
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(2000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });
}

/** Which embedded server to use: the port given, else the one `pnpm start` noted, else the default. */
function embeddedPortOf(env: Env, dataRoot: string): { port: number; from: string } {
  const given = env['EMBEDDED_PG_PORT']?.trim();
  if (given) return { port: Number(given), from: 'EMBEDDED_PG_PORT' };
  const recorded = recordedEmbeddedPostgresPort(dataRoot);
  if (recorded !== undefined) return { port: recorded, from: embeddedPostgresStateFileOf(dataRoot) };
  return { port: DEFAULT_EMBEDDED_PG_PORT, from: 'the default' };
}

/**
 * `pnpm tenant:create <slug>`: desk's own command (services/desk/dist/cli/tenant-create.js, also
 * in desk's image) against the database `pnpm start` uses, resolved as the launcher resolves it:
 * DESK_DATABASE_URL, else the database "desk" on DATABASE_URL's server, else on the embedded
 * PostgreSQL, whose port is the one the running (or last) `pnpm start` noted in its data folder
 * unless EMBEDDED_PG_PORT names another. Resolves with the exit code.
 */
export async function tenantCreate(argv: readonly string[], env: Env, repoRoot: string, io: ToolIo): Promise<number> {
  let config;
  try {
    config = readDevstackConfig(env, repoRoot);
  } catch (error) {
    io.err(`tenant:create: ${isDevstackError(error) ? error.message : String(error)}\n`);
    return 2;
  }
  let databaseUrl =
    config.databaseUrlOverrides.desk ??
    (config.databaseServerUrl ? databaseUrlFor(config.databaseServerUrl, 'desk') : undefined);
  if (!databaseUrl) {
    const { port, from } = embeddedPortOf(env, config.dataRoot);
    if (!(await canConnect(EMBEDDED_PG_HOST, port))) {
      const where =
        from === 'EMBEDDED_PG_PORT'
          ? `the port EMBEDDED_PG_PORT names`
          : from === 'the default'
            ? `the default port: no \`pnpm start\` has noted a port in ${embeddedPostgresStateFileOf(config.dataRoot)}`
            : `the port the last \`pnpm start\` noted in ${from}`;
      io.err(
        `tenant:create: the embedded PostgreSQL of \`pnpm start\` is not running (nothing listens on ${EMBEDDED_PG_HOST}:${port}, ${where}).\n` +
          '  Start the stack in another terminal with `pnpm start` and run this again. If it runs with its own DEVSTACK_DATA_DIR, set the same here\n' +
          '  (or EMBEDDED_PG_PORT to the port it prints: "PostgreSQL … started on port N"),\n' +
          '  or point the command at a database: DESK_DATABASE_URL=postgres://…/desk (or DATABASE_URL=postgres://…, whose database "desk" is used).\n',
      );
      return 1;
    }
    databaseUrl = databaseUrlFor(embeddedServerUrl(port), 'desk');
    io.err(
      `tenant:create: using the embedded PostgreSQL of \`pnpm start\` on port ${port} (${from === 'EMBEDDED_PG_PORT' ? 'EMBEDDED_PG_PORT' : `from ${from}`})\n`,
    );
  }
  try {
    // As `pnpm start` does: desk's database is created on the server when it does not exist yet.
    await ensureDatabases([databaseUrl]);
  } catch (error) {
    io.err(`tenant:create: ${redactPassword(databaseUrl)}: ${(error as Error).message}\n`);
    return 1;
  }
  const child = spawn(process.execPath, [path.join(repoRoot, 'services/desk/dist/cli/tenant-create.js'), ...argv], {
    cwd: path.join(repoRoot, 'services/desk'),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, DATABASE_URL: databaseUrl },
  });
  child.stdout.on('data', (chunk: Buffer) => io.out(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => io.err(chunk.toString()));
  return new Promise((resolve) => {
    child.once('error', (error) => {
      io.err(`tenant:create: could not run desk's command: ${error.message}\n`);
      resolve(1);
    });
    child.once('close', (code) => resolve(code ?? 1));
  });
}
