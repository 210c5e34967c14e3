import { existsSync } from 'node:fs';
import path from 'node:path';
import { runPrismaCli } from './prisma-cli';
import { testServerUrl } from './test-database';

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
  // Exit code 1 is the engine failing, not a verdict on the schema. CI saw the engine end right
  // after start, and once trap, while the suites of three services ran at once: a few more tries
  // tell a passing hiccup from a real failure, which fails every time and says why.
  const failures: string[] = [];
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    try {
      return await diffOnce(options);
    } catch (error) {
      failures.push(`attempt ${attempt}: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
  throw new Error(failures.join('\n'));
}

async function diffOnce(options: SchemaDriftOptions): Promise<SchemaDriftResult> {
  const schemaPath = path.resolve(options.schemaPath);
  const { exitCode, stdout, stderr } = await runPrismaCli(
    ['migrate', 'diff', '--from-migrations', path.resolve(options.migrationsDir), '--to-schema', schemaPath, '--script', '--exit-code'],
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
