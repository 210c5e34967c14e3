import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { runPrismaCli } from './prisma-cli';
import { createTestDatabase, testServerUrl } from './test-database';

export interface SchemaDriftOptions {
  /** The service's prisma/schema.prisma. */
  schemaPath: string;
  /** The service's prisma/migrations. */
  migrationsDir: string;
  /**
   * Server for the temporary shadow database the migrations are replayed in (any database URL of
   * it); default TEST_DATABASE_URL, else the local postgres. No other database is touched.
   */
  serverUrl?: string;
}

export interface SchemaDriftResult {
  drifted: boolean;
  /** The SQL that would bring the migrations to the schema: the migration still to create. */
  sql: string;
}

/**
 * Compares what the migrations build with what schema.prisma describes, with the real Prisma
 * engine (`prisma migrate diff --from-migrations … --to-schema … --exit-code`). A drift means
 * someone edited the schema without creating the migration, or edited a migration by hand.
 */
export async function checkSchemaDrift(options: SchemaDriftOptions): Promise<SchemaDriftResult> {
  // Exit code 1 is the engine failing, not a verdict on the schema. The WASM engine traps
  // ("unreachable") while introspecting hand-written CHECK constraints, always on some and at
  // random on others, more often under load. Prisma's schema cannot state a CHECK, so the diff
  // never sees them: the first try compares schema.prisma with a database our own applier
  // migrated, its CHECKs dropped before the engine looks. The usual `--from-migrations` way
  // (the engine replays the migrations into a shadow database) is the fallback.
  const failures: string[] = [];
  try {
    return await diffAgainstMigratedDatabase(options);
  } catch (error) {
    failures.push(`attempt 1 (a migrated database, CHECKs dropped): ${(error as Error).message}`);
  }
  for (let attempt = 2; attempt <= 3; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    try {
      return await diffOnce(options);
    } catch (error) {
      failures.push(`attempt ${attempt} (--from-migrations): ${(error as Error).message}`);
    }
  }
  throw new Error(failures.join('\n'));
}

async function diffAgainstMigratedDatabase(options: SchemaDriftOptions): Promise<SchemaDriftResult> {
  const schemaPath = path.resolve(options.schemaPath);
  const database = await createTestDatabase({
    migrationsDir: path.resolve(options.migrationsDir),
    serverUrl: options.serverUrl,
    label: 'drift',
  });
  try {
    await dropCheckConstraints(database.url);
    const { exitCode, stdout, stderr } = await runPrismaCli(
      ['migrate', 'diff', '--from-config-datasource', '--to-schema', schemaPath, '--script', '--exit-code'],
      { cwd: configDirOf(schemaPath), env: { DATABASE_URL: database.url } },
    );
    if (exitCode === 0) return { drifted: false, sql: '' };
    if (exitCode === 2) return { drifted: true, sql: stdout.trim() };
    throw new Error(`prisma migrate diff failed (exit code ${exitCode}):\n${stderr.trim()}\n${stdout.trim()}`);
  } finally {
    await database.drop();
  }
}

/** Drops every CHECK constraint of the throwaway database (invisible to Prisma's diff anyway). */
async function dropCheckConstraints(databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ tbl: string; name: string }>(
      `SELECT conrelid::regclass::text AS tbl, conname AS name FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
       WHERE c.contype = 'c' AND n.nspname = 'public'`,
    );
    for (const { tbl, name } of rows)
      await client.query(`ALTER TABLE ${tbl} DROP CONSTRAINT "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

async function diffOnce(options: SchemaDriftOptions): Promise<SchemaDriftResult> {
  const schemaPath = path.resolve(options.schemaPath);
  const { exitCode, stdout, stderr } = await runPrismaCli(
    [
      'migrate',
      'diff',
      '--from-migrations',
      path.resolve(options.migrationsDir),
      '--to-schema',
      schemaPath,
      '--script',
      '--exit-code',
    ],
    // prisma.config.ts reads DATABASE_URL; the shadow database is made on that server.
    { cwd: configDirOf(schemaPath), env: { DATABASE_URL: options.serverUrl ?? testServerUrl() } },
  );
  if (exitCode === 0) return { drifted: false, sql: '' };
  if (exitCode === 2) return { drifted: true, sql: stdout.trim() };
  throw new Error(`prisma migrate diff failed (exit code ${exitCode}):\n${stderr.trim()}\n${stdout.trim()}`);
}

/** The folder of the prisma.config.ts that governs a schema: the nearest one above it. */
function configDirOf(schemaPath: string): string {
  for (let dir = path.dirname(schemaPath); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'prisma.config.ts'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`No prisma.config.ts found above ${schemaPath}.`);
  }
}
