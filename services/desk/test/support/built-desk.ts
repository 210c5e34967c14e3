import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const DESK_ROOT = path.resolve(__dirname, '../..');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * Tests that run desk's built commands (dist/) as child processes build it first when it is
 * missing or older than src/ (`pnpm test` builds only the packages desk depends on). The build is
 * serialized by a lock file, so two test files never write dist/ at the same time.
 */
/** Another service's dist (hr, for tests that run it beside desk), built through turbo (it generates its Prisma client) when missing or stale. */
export function ensureBuiltService(name: 'hr' | 'link'): string {
  const root = path.resolve(DESK_ROOT, '..', name);
  const marker = path.join(root, 'dist/index.js');
  if (!fs.existsSync(marker) || fs.statSync(marker).mtimeMs < newestMtime(path.join(root, 'src'))) {
    execFileSync(
      'flock',
      [
        `/tmp/msp-${name}-test-build.lock`,
        'pnpm',
        'exec',
        'turbo',
        'run',
        'build',
        `--filter=@msp/${name}`,
        '--output-logs=errors-only',
      ],
      {
        cwd: root,
        stdio: 'inherit',
      },
    );
  }
  return path.join(root, 'dist');
}

export function ensureBuiltDesk(): string {
  const marker = path.join(DESK_ROOT, 'dist/cli/tenant-create.js');
  const fresh = () => fs.existsSync(marker) && fs.statSync(marker).mtimeMs >= newestMtime(path.join(DESK_ROOT, 'src'));
  if (!fresh()) {
    execFileSync(
      'flock',
      [
        '/tmp/msp-desk-test-build.lock',
        'sh',
        '-c',
        `test -f "${marker}" && [ "$(find src -newer "${marker}" -type f | head -1)" = "" ] || npx tsc -p tsconfig.build.json`,
      ],
      {
        cwd: DESK_ROOT,
        stdio: 'inherit',
      },
    );
  }
  return path.join(DESK_ROOT, 'dist');
}

/** A built service running as a child process, as in production. */
export interface Running {
  child: ChildProcess;
  output: () => string;
}

/** Starts `node <script>` with only PATH and `env`, and resolves once its /readyz at `url` answers 200. */
export async function startNode(
  script: string,
  cwd: string,
  env: Record<string, string>,
  url: string,
): Promise<Running> {
  const child = spawn(process.execPath, [script], {
    cwd,
    env: { PATH: process.env.PATH!, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  // Ready when /readyz answers 200 (bounded: a service that never comes up fails the test with its output).
  for (let attempt = 0; attempt < 150; attempt++) {
    if (child.exitCode !== null) throw new Error(`${script} exited ${child.exitCode}: ${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return { child, output: () => output };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`${script} did not become ready: ${output}`);
}

/** SIGTERM, then waits for the exit. */
export async function stop(running: Running | undefined) {
  if (!running || running.child.exitCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGTERM');
  await exited;
}
