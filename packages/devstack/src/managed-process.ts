import { spawn } from 'node:child_process';
import readline from 'node:readline';

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all (missing executable, bad uid). */
  readonly error?: Error;
  /**
   * Set when the launcher sent the force signal (it did not exit within its grace period, or a
   * second Ctrl-C asked for it): how long after the stop signal that was (null: no stop signal
   * came first). The process did not stop by itself.
   */
  readonly forced?: { readonly signal: NodeJS.Signals; readonly afterMs: number | null };
}

export interface ManagedProcessOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string | undefined>;
  readonly cwd: string;
  /** Run as another user; only possible when the launcher is root. */
  readonly user?: { readonly uid: number; readonly gid: number };
  /** Every line of stdout and stderr. */
  readonly onLine: (line: string) => void;
  /** The polite request to stop, and the one sent when the grace period is over. */
  readonly stopSignal: NodeJS.Signals;
  readonly forceSignal: NodeJS.Signals;
  /**
   * Signal the whole process group (the command and whatever it started) or
   * only the process itself. PostgreSQL must be signalled alone: its
   * postmaster shuts its backends down in order.
   */
  readonly signalGroup: boolean;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number | undefined;
  readonly exited: Promise<ExitInfo>;
  hasExited(): boolean;
  /** Stop signal, then the force signal after `graceMs`; resolves when the process is gone. */
  stop(graceMs: number): Promise<ExitInfo>;
  /** Stop signal now, without waiting: for when the launcher itself cannot wait any more. */
  requestStop(): void;
  /** Force signal now, without waiting. */
  kill(): void;
}

const FORCE_WAIT_MS = 5_000;

/**
 * Children run in their own process group (`detached`), so a Ctrl-C in the
 * terminal reaches only the launcher, which then stops them in order:
 * services first, PostgreSQL last. Without this, the terminal would deliver
 * SIGINT to PostgreSQL at the same moment as to the services, and their
 * in-flight requests would lose the database while they drain.
 */
export function startManagedProcess(options: ManagedProcessOptions): ManagedProcess {
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });

  let exitInfo: ExitInfo | undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => resolve((exitInfo = { code, signal })));
    child.once('error', (error) => resolve((exitInfo = { code: null, signal: null, error })));
  });

  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', options.onLine);
  }

  let stopSentAt: number | undefined;
  let forcedAt: number | undefined;
  const send = (signal: NodeJS.Signals): void => {
    if (exitInfo || child.pid === undefined) return;
    if (signal === options.forceSignal) forcedAt ??= Date.now();
    else stopSentAt ??= Date.now();
    try {
      process.kill(options.signalGroup ? -child.pid : child.pid, signal);
    } catch (error) {
      // ESRCH: it exited between the check and the signal.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };

  /** The exit as it was, and whether the launcher had to force it. */
  const withForce = (info: ExitInfo): ExitInfo =>
    forcedAt === undefined
      ? info
      : {
          ...info,
          forced: {
            signal: options.forceSignal,
            afterMs: stopSentAt === undefined || stopSentAt > forcedAt ? null : forcedAt - stopSentAt,
          },
        };

  return {
    name: options.name,
    pid: child.pid,
    exited,
    hasExited: () => exitInfo !== undefined,
    requestStop: () => send(options.stopSignal),
    kill: () => send(options.forceSignal),
    async stop(graceMs) {
      if (exitInfo) return withForce(exitInfo);
      send(options.stopSignal);
      const polite = await Promise.race([exited, delay(graceMs)]);
      if (polite) return withForce(polite);
      send(options.forceSignal);
      const forced = await Promise.race([exited, delay(FORCE_WAIT_MS)]);
      return withForce(
        forced ?? {
          code: null,
          signal: null,
          error: new Error(`${options.name} (pid ${child.pid}) did not exit after ${options.forceSignal}`),
        },
      );
    },
  };
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

export function describeExit(info: ExitInfo): string {
  if (info.forced && info.error) return `was sent ${info.forced.signal} and still did not exit: ${info.error.message}`;
  if (info.error) return `could not run: ${info.error.message}`;
  if (info.signal) return `was killed by ${info.signal}`;
  return `exited with code ${info.code}`;
}
