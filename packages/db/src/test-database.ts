import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { applyMigrations } from './apply-migrations';
import { createDatabase, databaseUrlFor, dropDatabase } from './database-admin';

/** The server tests create their databases on, through any database of it (`postgres` by default). */
export function testServerUrl(): string {
  return process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

export interface TestDatabase {
  /** Connection URL of the new, migrated database. */
  url: string;
  name: string;
  /** Drops the database, closing connections still open on it. Safe to call twice. */
  drop(): Promise<void>;
}

export interface CreateTestDatabaseOptions {
  /** The service's Prisma migrations folder, applied to the new database. */
  migrationsDir: string;
  /** Any database URL of the server to use; default TEST_DATABASE_URL, else the local postgres. */
  serverUrl?: string;
  /** Middle part of the name (`t_<label>_<random>`); default the service folder's name. */
  label?: string;
}

/**
 * Creates a uniquely named database (`t_desk_3f9a…`), applies the migrations and returns its URL.
 * Each test file gets its own, so test files run in parallel and leave nothing to truncate.
 */
export async function createTestDatabase(options: CreateTestDatabaseOptions): Promise<TestDatabase> {
  const serverUrl = options.serverUrl ?? testServerUrl();
  // <service>/prisma/migrations -> <service>
  const label = (options.label ?? path.basename(path.dirname(path.dirname(path.resolve(options.migrationsDir)))))
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 24);
  const name = `t_${label}_${randomBytes(8).toString('hex')}`;
  await createDatabase(serverUrl, name);
  const drop = () => dropDatabase(serverUrl, name);
  const url = databaseUrlFor(serverUrl, name);
  try {
    await applyMigrations(url, options.migrationsDir);
  } catch (error) {
    await drop().catch(() => undefined);
    throw error;
  }
  return { url, name, drop };
}
