import { randomUUID } from 'node:crypto';
import type { Client, DatabaseError } from 'pg';
import { withClient } from './database-admin';
import { readMigrationsFolder, type MigrationFile } from './migrations-folder';

// What `prisma migrate deploy` does, with pg alone: services migrate at start without the Prisma
// CLI or a schema engine in their image, and the database stays one the Prisma CLI reads as its
// own (`migrate status`, `migrate resolve`, `migrate dev` keep working on it).

/** The lock Prisma's schema engine holds while migrating: appliers and the CLI exclude each other. */
export const PRISMA_MIGRATE_ADVISORY_LOCK = 72707369;

/** Prisma's own definition of its history table. */
const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                  VARCHAR(36) NOT NULL,
    "checksum"            VARCHAR(64) NOT NULL,
    "finished_at"         TIMESTAMPTZ,
    "migration_name"      VARCHAR(255) NOT NULL,
    "logs"                TEXT,
    "rolled_back_at"      TIMESTAMPTZ,
    "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "_prisma_migrations_pkey" PRIMARY KEY ("id")
)`;

export interface ApplyMigrationsOptions {
  /** How long to wait for another applier (another instance, the Prisma CLI). Default 60 s. */
  lockTimeoutMs?: number;
}

export interface ApplyMigrationsResult {
  /** Names of the migrations this call applied, in order; empty when the database was up to date. */
  applied: string[];
}

/** A migration that failed now or earlier, or whose file no longer matches what was applied. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  constructor(
    message: string,
    readonly migrationName: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface HistoryRow {
  migration_name: string;
  checksum: string;
  started_at: Date;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  logs: string | null;
}

/**
 * Applies the migrations of `migrationsDir` (a Prisma migrations folder) that `databaseUrl` has
 * not applied yet, recording them in `_prisma_migrations` exactly as Prisma does. Safe to call
 * from several processes at once: they queue on Prisma's advisory lock and each migration runs
 * once. Throws a MigrationError when a migration fails (it is then recorded as failed and blocks
 * every later run until resolved), when an earlier failure is still unresolved, or when an
 * applied migration's file was edited since.
 */
export async function applyMigrations(
  databaseUrl: string,
  migrationsDir: string,
  options: ApplyMigrationsOptions = {},
): Promise<ApplyMigrationsResult> {
  const migrations = await readMigrationsFolder(migrationsDir);
  return withClient(databaseUrl, async (client) => {
    await acquireLock(client, options.lockTimeoutMs ?? 60_000);
    try {
      await client.query(CREATE_MIGRATIONS_TABLE);
      const history = await readHistory(client);
      assertNoUnresolvedFailure(history);
      const pending = pendingMigrations(migrations, history);
      for (const migration of pending) await applyOne(client, migration);
      return { applied: pending.map((migration) => migration.name) };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [PRISMA_MIGRATE_ADVISORY_LOCK]).catch(() => undefined);
    }
  });
}

async function acquireLock(client: Client, timeoutMs: number): Promise<void> {
  // lock_timeout bounds the wait for an advisory lock too; reset so migrations run without it.
  await client.query(`SET lock_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_ADVISORY_LOCK]);
  } catch (error) {
    if ((error as DatabaseError).code === '55P03') {
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for the migration lock ` +
          `(pg_advisory_lock(${PRISMA_MIGRATE_ADVISORY_LOCK})): another instance or the Prisma CLI is migrating ` +
          'this database.',
        { cause: error },
      );
    }
    throw error;
  } finally {
    await client.query('RESET lock_timeout').catch(() => undefined);
  }
}

async function readHistory(client: Client): Promise<HistoryRow[]> {
  const { rows } = await client.query<HistoryRow>(
    `SELECT migration_name, checksum, started_at, finished_at, rolled_back_at, logs
       FROM "_prisma_migrations" ORDER BY started_at, migration_name`,
  );
  return rows;
}

function assertNoUnresolvedFailure(history: HistoryRow[]): void {
  const failed = history.find((row) => row.finished_at === null && row.rolled_back_at === null);
  if (!failed) return;
  throw new MigrationError(
    `Migration ${failed.migration_name} failed earlier (started ${failed.started_at.toISOString()}) and blocks every later migration (Prisma P3009). ` +
      `Repair the database by hand, then record the outcome with \`msp-prisma migrate resolve --rolled-back ${failed.migration_name}\` ` +
      `(or \`--applied\`). Its error was:\n${failed.logs ?? '(no log)'}`,
    failed.migration_name,
  );
}

/**
 * The folder's migrations not yet applied. A migration applied in the database but absent from
 * the folder is ignored, as `prisma migrate deploy` does: during a rolling deploy, instances of
 * the previous release start beside a database that the new release has already migrated.
 */
function pendingMigrations(migrations: MigrationFile[], history: HistoryRow[]): MigrationFile[] {
  const applied = new Map<string, HistoryRow>();
  for (const row of history) {
    if (row.finished_at !== null && row.rolled_back_at === null) applied.set(row.migration_name, row);
  }
  for (const migration of migrations) {
    const row = applied.get(migration.name);
    if (row && row.checksum !== migration.checksum && !migration.equivalentChecksums.includes(row.checksum)) {
      throw new MigrationError(
        `Migration ${migration.name} was edited after it was applied (checksum ${row.checksum} in _prisma_migrations, ` +
          `${migration.checksum} on disk). Applied migrations must not change: restore the file and put the change in a new migration.`,
        migration.name,
      );
    }
  }
  return migrations.filter((migration) => !applied.has(migration.name));
}

async function applyOne(client: Client, migration: MigrationFile): Promise<void> {
  const id = randomUUID();
  await client.query(
    'INSERT INTO "_prisma_migrations" (id, checksum, started_at, migration_name) VALUES ($1, $2, now(), $3)',
    [id, migration.checksum, migration.name],
  );
  try {
    // One simple-protocol query, as Prisma sends it: PostgreSQL runs the whole script in one
    // implicit transaction, so a failing script leaves nothing half-applied behind.
    await client.query(migration.script);
  } catch (error) {
    // A script that opened its own transaction would leave the session aborted.
    await client.query('ROLLBACK').catch(() => undefined);
    await client.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, failureLog(error)]);
    throw new MigrationError(
      `Migration ${migration.name} failed: ${(error as Error).message}. It is recorded as failed in _prisma_migrations ` +
        `and blocks every later migration until resolved (\`msp-prisma migrate resolve\`).`,
      migration.name,
      { cause: error },
    );
  }
  await client.query(
    'UPDATE "_prisma_migrations" SET applied_steps_count = applied_steps_count + 1, finished_at = now() WHERE id = $1',
    [id],
  );
}

/** The `logs` text, shaped like the one Prisma's engine writes. */
function failureLog(error: unknown): string {
  const dbError = error as Partial<DatabaseError>;
  if (!dbError.code) return `Error:\n${(error as Error).message ?? String(error)}`;
  const lines = [
    `Database error code: ${dbError.code}`,
    '',
    'Database error:',
    `${dbError.severity ?? 'ERROR'}: ${dbError.message}`,
  ];
  if (dbError.detail) lines.push(`DETAIL: ${dbError.detail}`);
  if (dbError.hint) lines.push(`HINT: ${dbError.hint}`);
  if (dbError.position) lines.push('', `Position: character ${dbError.position} of migration.sql`);
  return lines.join('\n');
}
