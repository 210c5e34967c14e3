import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { DevstackError } from './devstack-error';
import { describeExit, startManagedProcess, type ExitInfo, type ManagedProcess } from './managed-process';
import { locatePostgresBinaries, postgresMajorVersion, type PostgresBinaries } from './postgres-binaries';
import { ensurePostgresSystemUser, ensureTraversable, type SystemUser } from './postgres-system-user';
import { probePort } from './port-check';
import { sleep } from './readiness';

// A development server on loopback only; the password is no secret, it only
// keeps other local users' tools from connecting by accident.
export const EMBEDDED_PG_HOST = '127.0.0.1';
export const EMBEDDED_PG_USER = 'postgres';
export const EMBEDDED_PG_PASSWORD = 'postgres';

const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 15_000;

export interface EmbeddedPostgresOptions {
  /** The cluster folder (PGDATA). Its parent is created when missing. */
  readonly dataDir: string;
  readonly port: number;
  /** Folders at or below this one may have their permissions fixed for the postgres user. */
  readonly fixableRoot: string;
  /** Messages of the launcher about PostgreSQL. */
  readonly log: (message: string) => void;
  /** PostgreSQL's own output. */
  readonly onServerLine: (line: string) => void;
  readonly signal?: AbortSignal;
}

export interface RunningEmbeddedPostgres {
  /** URL of the `postgres` maintenance database; swap the path for another database. */
  readonly serverUrl: string;
  /** True when this start created the cluster (initdb), false when it reused one. */
  readonly createdCluster: boolean;
  readonly majorVersion: number;
  readonly process: ManagedProcess;
  /** Fast shutdown (SIGINT: clients disconnected, checkpoint written), immediate shutdown if that hangs. */
  stop(): Promise<ExitInfo>;
}

export function embeddedServerUrl(port: number): string {
  return `postgres://${EMBEDDED_PG_USER}:${EMBEDDED_PG_PASSWORD}@${EMBEDDED_PG_HOST}:${port}/postgres`;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const binaries = locatePostgresBinaries();
  const runAs = ensurePostgresSystemUser(options.log);
  if (runAs) assertReachableBy(runAs, binaries, options);
  const majorVersion = postgresMajorVersion(binaries, runAs);

  assertNotAlreadyRunning(options.dataDir);
  await assertPortFree(options.port);
  const createdCluster = prepareDataDir(options.dataDir, runAs, majorVersion);
  if (createdCluster) {
    options.log(`creating a PostgreSQL ${majorVersion} cluster in ${options.dataDir} (first start only)`);
    await initdb(binaries, options.dataDir, runAs);
  }

  const serverUrl = embeddedServerUrl(options.port);
  const recentLines: string[] = [];
  const server = startManagedProcess({
    name: 'postgres',
    command: binaries.postgres,
    args: [
      '-D',
      options.dataDir,
      '-p',
      String(options.port),
      '-c',
      `listen_addresses=${EMBEDDED_PG_HOST}`,
      // No Unix socket: its default folder may not exist or may belong to a
      // system PostgreSQL; everything here connects over TCP.
      '-c',
      'unix_socket_directories=',
      '-c',
      'log_checkpoints=off',
    ],
    env: postgresEnv(),
    cwd: options.dataDir,
    ...(runAs ? { user: runAs } : {}),
    onLine: (line) => {
      recentLines.push(line);
      if (recentLines.length > 20) recentLines.shift();
      options.onServerLine(line);
    },
    stopSignal: 'SIGINT',
    forceSignal: 'SIGQUIT',
    signalGroup: false,
  });

  try {
    await waitUntilAcceptingConnections(serverUrl, server, recentLines, options.signal);
  } catch (error) {
    if (!server.hasExited()) options.log('stopping PostgreSQL');
    await server.stop(STOP_GRACE_MS);
    throw error;
  }
  return { serverUrl, createdCluster, majorVersion, process: server, stop: () => server.stop(STOP_GRACE_MS) };
}

/**
 * A launcher killed with SIGKILL leaves its PostgreSQL running (it has its own
 * process group). Say so plainly instead of letting PostgreSQL fail with a
 * lock-file message, and never stop it ourselves: it may belong to a launcher
 * that is still running in another terminal.
 */
function assertNotAlreadyRunning(dataDir: string): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let lines: string[];
  try {
    lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  } catch {
    return;
  }
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isPostgresProcess(pid)) return; // stale: PostgreSQL removes it itself
  throw new DevstackError(
    `PostgreSQL is already running on ${dataDir} (pid ${pid}, port ${lines[3]?.trim() || '?'}): another devstack is running, ` +
      `or a previous one was killed without stopping it. Stop that one (Ctrl-C in its terminal, or kill -INT ${pid}) and start again.`,
  );
}

function isPostgresProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('postgres');
  } catch {
    return true; // alive, and no /proc to tell more (macOS): assume it is
  }
}

async function assertPortFree(port: number): Promise<void> {
  const state = await probePort(port, EMBEDDED_PG_HOST);
  if (state === 'free') return;
  throw new DevstackError(
    state === 'in-use'
      ? `Port ${port} on ${EMBEDDED_PG_HOST} is already in use, so the embedded PostgreSQL cannot listen there. ` +
          `Pick another: EMBEDDED_PG_PORT=${port + 1} pnpm start (or use a running server: DATABASE_URL=postgres://...)`
      : `Not allowed to listen on port ${port}: choose EMBEDDED_PG_PORT above 1024`,
  );
}

function assertReachableBy(user: SystemUser, binaries: PostgresBinaries, options: EmbeddedPostgresOptions): void {
  ensureTraversable(user, { target: binaries.postgres, purpose: 'its programs', relocatable: false }, options.log);
  fs.mkdirSync(path.dirname(options.dataDir), { recursive: true });
  ensureTraversable(
    user,
    {
      target: path.dirname(options.dataDir),
      purpose: 'its data folder',
      fixableRoot: options.fixableRoot,
      relocatable: true,
    },
    options.log,
  );
}

/** Returns true when the folder holds no cluster yet (initdb needed). */
function prepareDataDir(dataDir: string, runAs: SystemUser | undefined, majorVersion: number): boolean {
  const ownerUid = runAs?.uid ?? process.getuid?.();
  fs.mkdirSync(path.dirname(dataDir), { recursive: true });
  if (!fs.existsSync(dataDir)) {
    fs.mkdirSync(dataDir, { mode: 0o700 });
  }
  const versionFile = path.join(dataDir, 'PG_VERSION');
  if (!fs.existsSync(versionFile)) {
    if (fs.readdirSync(dataDir).length > 0) {
      throw new DevstackError(
        `${dataDir} is neither empty nor a PostgreSQL data folder: move it away or set DEVSTACK_DATA_DIR`,
      );
    }
    if (runAs) fs.chownSync(dataDir, runAs.uid, runAs.gid);
    fs.chmodSync(dataDir, 0o700);
    return true;
  }

  const owner = fs.statSync(dataDir).uid;
  if (ownerUid !== undefined && owner !== ownerUid) {
    throw new DevstackError(
      `${dataDir} belongs to uid ${owner}, but PostgreSQL runs as uid ${ownerUid}${runAs ? ` (${runAs.name})` : ''}: ` +
        'was the stack started once as root and once as another user? ' +
        `Hand it over (chown -R ${runAs?.name ?? ownerUid} ${dataDir}) or delete it to start with empty development data.`,
    );
  }
  const dataVersion = Number(fs.readFileSync(versionFile, 'utf8').trim());
  if (dataVersion !== majorVersion) {
    throw new DevstackError(
      `${dataDir} was made by PostgreSQL ${dataVersion}, the embedded binaries are PostgreSQL ${majorVersion}. ` +
        'It is development data: delete the folder to start afresh (or pg_dump it with the old version first).',
    );
  }
  return false;
}

async function initdb(binaries: PostgresBinaries, dataDir: string, runAs: SystemUser | undefined): Promise<void> {
  // Next to the cluster: a folder the postgres user was just proven to reach.
  const passwordFile = path.join(path.dirname(dataDir), `.initdb-password-${crypto.randomBytes(6).toString('hex')}`);
  fs.writeFileSync(passwordFile, `${EMBEDDED_PG_PASSWORD}\n`, { mode: 0o600 });
  try {
    if (runAs) fs.chownSync(passwordFile, runAs.uid, runAs.gid);
    const args = [
      `--pgdata=${dataDir}`,
      `--username=${EMBEDDED_PG_USER}`,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      // The builtin provider needs no OS locale (none is guaranteed on a slim
      // machine) and still gives Unicode-aware upper()/lower().
      '--locale=C',
      '--locale-provider=builtin',
      '--builtin-locale=C.UTF-8',
    ];
    const output = await run(binaries.initdb, args, runAs);
    if (output.code !== 0) {
      throw new DevstackError(`initdb failed (code ${output.code}):\n${output.text.trim()}`);
    }
  } finally {
    fs.rmSync(passwordFile, { force: true });
  }
}

function run(
  command: string,
  args: string[],
  runAs: SystemUser | undefined,
): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: postgresEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, text }));
  });
}

// The caller's PG* variables (PGDATA, PGPORT, ...) must not steer this server.
function postgresEnv(): Record<string, string | undefined> {
  return { PATH: process.env['PATH'], TZ: process.env['TZ'], LANG: 'C', LC_ALL: 'C' };
}

async function waitUntilAcceptingConnections(
  serverUrl: string,
  server: ManagedProcess,
  recentLines: readonly string[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    signal?.throwIfAborted();
    if (server.hasExited()) {
      const exit = await server.exited;
      throw new DevstackError(
        `PostgreSQL ${describeExit(exit)} before accepting connections:\n${recentLines.join('\n')}`,
      );
    }
    if (await canConnect(serverUrl)) return;
    if (Date.now() > deadline) {
      throw new DevstackError(
        `PostgreSQL did not accept connections within ${START_TIMEOUT_MS / 1000} s:\n${recentLines.join('\n')}`,
      );
    }
    await sleep(50, signal);
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
