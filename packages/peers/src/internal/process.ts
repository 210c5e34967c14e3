import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { atExit } from './cleanup';
import { recordPid } from './paths';

const execFileAsync = promisify(execFile);

/** Runs a command to completion (bounded); a failure carries the command's stderr. */
export async function run(
  command: string,
  args: readonly string[],
  options: { timeoutMs?: number; cwd?: string; input?: string } = {},
): Promise<string> {
  try {
    const child = execFileAsync(command, args, {
      cwd: options.cwd,
      timeout: options.timeoutMs ?? 60_000,
      maxBuffer: 64 * 1024 * 1024,
      encoding: 'utf8',
    });
    if (options.input !== undefined) {
      child.child.stdin?.end(options.input);
    }
    const { stdout } = await child;
    return stdout;
  } catch (error) {
    const e = error as Error & { stderr?: string; stdout?: string };
    const detail = [e.stderr, e.stdout].filter(Boolean).join('\n').trim().slice(-2000);
    throw new Error(`${command} ${args.join(' ')} failed: ${e.message}${detail ? `\n${detail}` : ''}`, {
      cause: error,
    });
  }
}

export interface PeerProcess {
  readonly pid: number;
  readonly logPath: string;
  hasExited(): boolean;
  /** The last lines of the process's output, for error messages. */
  logTail(): string;
  /**
   * SIGTERM to the process group, SIGKILL to what is left after `graceMs` (0: at once);
   * resolves once the process is gone.
   */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  logPath: string;
  /** Recorded in this instance directory so a later sweep can kill it if it outlives us. */
  instanceDir: string;
  /** Words before the command, such as `ip netns exec <ns>`; they must exec, not fork. */
  prefix?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts a server process whose output goes to a log file, with a parent-death signal
 * (`setpriv --pdeathsig KILL`): if this Node process dies by any means, the kernel kills the
 * server too, so no test run leaves daemons behind.
 */
export function spawnPeer(command: string, args: readonly string[], options: SpawnOptions): PeerProcess {
  const fd = openSync(options.logPath, 'a', 0o644);
  const argv = [...(options.prefix ?? []), 'setpriv', '--pdeathsig', 'KILL', '--', command, ...args];
  let child: ChildProcess;
  try {
    child = spawn(argv[0]!, argv.slice(1), {
      stdio: ['ignore', fd, fd],
      env: options.env ?? process.env,
      // A process group of its own, so stopping reaches the server's children too (Dovecot's
      // master leaves its workers to die slowly when it is killed alone).
      detached: true,
    });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`Could not start ${command}`);
  // A forgotten peer must not keep the test process alive; the exit hook below still kills it.
  child.unref();

  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  recordPid(options.instanceDir, pid);
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is gone
    }
  };
  // Only while the leader lives: once the group is empty its number may be reused.
  const unregister = atExit(() => {
    if (!exited) signalGroup('SIGKILL');
  });

  return {
    pid,
    logPath: options.logPath,
    hasExited: () => exited,
    logTail: () => tail(options.logPath),
    async stop(graceMs = 5000) {
      if (!exited && graceMs > 0) {
        signalGroup('SIGTERM');
        await exitWithin(exitPromise, graceMs);
      }
      // Whatever of the group is left, the leader included.
      signalGroup('SIGKILL');
      if (!exited) await exitWithin(exitPromise, 2000);
      unregister();
    },
  };
}

/** Whether `exit` settles within `ms`; the timer is cleared at once when it does. */
async function exitWithin(exit: Promise<void>, ms: number): Promise<boolean> {
  const timer = new AbortController();
  try {
    return await Promise.race([exit.then(() => true), sleep(ms, false, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}

export function tail(path: string, bytes = 3000): string {
  try {
    const text = readFileSync(path, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '';
  }
}

/** Whether a TCP connection to host:port is accepted now. */
export function canConnect(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Waits until no port accepts connections any more. A killed server's leader is reaped before its
 * children (Dovecot's login processes hold the listening sockets too), and the kernel completes
 * handshakes on a listening socket until its last holder is gone.
 */
export async function waitForPortsClosed(host: string, ports: readonly number[], timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const port of ports) {
    while (await canConnect(host, port, 200)) {
      if (Date.now() > deadline) throw new Error(`${host}:${port} still accepts connections after ${timeoutMs} ms`);
      await sleep(20);
    }
  }
}

/**
 * Waits until every port accepts connections, failing at once (with the log's tail) when the
 * process exits first, and after `timeoutMs` at the latest.
 */
export async function waitForPorts(
  proc: PeerProcess,
  host: string,
  ports: readonly number[],
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const port of ports) {
    for (;;) {
      if (proc.hasExited()) throw new Error(`${what} exited before listening on ${host}:${port}\n${proc.logTail()}`);
      if (await canConnect(host, port, 500)) break;
      if (Date.now() > deadline) {
        await proc.stop(1000);
        throw new Error(`${what} did not listen on ${host}:${port} within ${timeoutMs} ms\n${proc.logTail()}`);
      }
      await sleep(50);
    }
  }
}

/**
 * A port that was free a moment ago on 127.0.0.1. Another process may take it before the server
 * binds it; the starters retry with new ports when the server then fails to listen.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}
