import { closeSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentOwner, isAlive, parseOwner } from './owner';

/** A marker younger than this whose owner cannot be read yet is being written, not abandoned. */
const UNREADABLE_GRACE_MS = 5000;

/**
 * Creates `path` exclusively (O_EXCL) holding the current process as owner. Returns false when
 * another live process holds it. A marker whose owner is dead is taken over: it is first renamed
 * away (atomic, so of two processes finding the same dead marker only one removes it), then
 * `onStale` cleans what the dead owner left, then the marker is created anew.
 */
export function tryCreateMarker(path: string, onStale?: (content: string) => void): boolean {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644);
      try {
        writeSync(fd, JSON.stringify(currentOwner()));
      } finally {
        closeSync(fd);
      }
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!isStaleMarker(path)) return false;
    const claimed = `${path}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      renameSync(path, claimed);
    } catch {
      continue; // somebody else claimed it first
    }
    try {
      onStale?.(readFileSync(claimed, 'utf8'));
    } finally {
      rmSync(claimed, { force: true });
    }
  }
  return false;
}

export function isStaleMarker(path: string): boolean {
  let text: string;
  let ageMs: number;
  try {
    text = readFileSync(path, 'utf8');
    ageMs = Date.now() - statSync(path).mtimeMs;
  } catch {
    return false; // gone already
  }
  const owner = parseOwner(text);
  if (owner) return !isAlive(owner);
  return ageMs > UNREADABLE_GRACE_MS;
}

/**
 * Waits (bounded) for an exclusive lock file; a lock left by a dead process is taken over.
 * Returns the function that releases it.
 */
export async function acquireLock(path: string, timeoutMs: number): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (tryCreateMarker(path)) return () => rmSync(path, { force: true });
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for the lock ${path}`);
    await sleep(200);
  }
}
