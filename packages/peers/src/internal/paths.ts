import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { atExit } from './cleanup';
import { currentOwner, isAlive, parseOwner, startTimeOf } from './owner';

const exitHooks = new Map<string, () => void>();

/** Everything the peers write lives under here: caches (templates) and one directory per instance. */
export function peersRoot(): string {
  const root = process.env.MSP_PEERS_DIR ?? join(tmpdir(), 'msp-peers');
  mkdirSync(root, { recursive: true, mode: 0o755 });
  return root;
}

function runRoot(): string {
  const dir = join(peersRoot(), 'run');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  return dir;
}

/**
 * A fresh directory for one peer instance, marked with its owner so a later run can remove it
 * (and kill what it recorded) when the owner died without cleaning up.
 */
export function makeInstanceDir(kind: string): string {
  sweepInstanceDirs();
  const dir = join(runRoot(), `${kind}-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { mode: 0o755 });
  writeFileSync(join(dir, 'owner'), JSON.stringify(currentOwner()));
  // Registered before the servers' own hooks, so at exit it runs after they are killed (last in, first run).
  exitHooks.set(
    dir,
    atExit(() => {
      if (!process.env.MSP_PEERS_KEEP) rmSync(dir, { recursive: true, force: true });
    }),
  );
  return dir;
}

/** Notes a server process of an instance, so a sweep can kill it if it outlived its owner. */
export function recordPid(instanceDir: string, pid: number): void {
  const startTime = startTimeOf(pid);
  if (startTime === undefined) return;
  writeFileSync(join(instanceDir, `pid-${pid}`), JSON.stringify({ pid, startTime }));
}

export function removeInstanceDir(dir: string): void {
  exitHooks.get(dir)?.();
  exitHooks.delete(dir);
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

function sweepInstanceDirs(): void {
  let entries: string[];
  try {
    entries = readdirSync(runRoot());
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = join(runRoot(), name);
    const ownerFile = join(dir, 'owner');
    if (!existsSync(ownerFile)) continue;
    let owner;
    try {
      owner = parseOwner(readFileSync(ownerFile, 'utf8'));
    } catch {
      continue;
    }
    if (!owner || isAlive(owner)) continue;
    for (const file of safeReaddir(dir).filter((f) => f.startsWith('pid-'))) {
      try {
        const child = parseOwner(readFileSync(join(dir, file), 'utf8'));
        if (child && isAlive(child)) process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    removeInstanceDir(dir);
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
