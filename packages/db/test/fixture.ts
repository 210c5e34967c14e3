import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createDatabase, databaseUrlFor, dropDatabase, testServerUrl } from '../src';

/** A small service whose migrations were made by the real CLI through bin/schema-engine.js. */
export const NOTES_SERVICE = path.join(__dirname, 'fixtures', 'notes-service');
export const NOTES_MIGRATIONS = path.join(NOTES_SERVICE, 'prisma', 'migrations');

/** A copy of the notes service that a test may change; removed by the returned function. */
export async function copyOfNotesService(): Promise<{ dir: string; migrationsDir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'msp-db-notes-'));
  await cp(NOTES_SERVICE, dir, { recursive: true });
  return {
    dir,
    migrationsDir: path.join(dir, 'prisma', 'migrations'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** An empty database with a unique name, dropped by `drop()`. */
export async function emptyDatabase(label: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `t_db_${label}_${randomBytes(6).toString('hex')}`;
  await createDatabase(testServerUrl(), name);
  return { name, url: databaseUrlFor(testServerUrl(), name), drop: () => dropDatabase(testServerUrl(), name) };
}

export async function query<T extends object = Record<string, unknown>>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

export async function databaseExists(name: string): Promise<boolean> {
  const rows = await query(testServerUrl(), 'SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return rows.length === 1;
}
