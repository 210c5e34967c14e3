import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** One `<timestamp>_<name>/migration.sql` of a Prisma migrations folder. */
export interface MigrationFile {
  name: string;
  script: string;
  /** What Prisma stores in `_prisma_migrations.checksum`: lowercase hex SHA-256 of the file's bytes. */
  checksum: string;
  /** Checksums that Prisma also accepts for this file: the same script with CRLF and LF swapped. */
  equivalentChecksums: string[];
}

function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Reads the migrations in the order Prisma applies them. The CLI sorts folder names with
 * localeCompare; every folder name starts with its own 14-digit timestamp, so `sort()`'s own order
 * (by UTF-16 code units) is the same order (a test checks each service's folder), without ICU's
 * collator: the first localeCompare of a process brings ICU's code and collation data into memory
 * for good, in every service, at start (docs/performance.md, "Memory").
 */
export async function readMigrationsFolder(migrationsDir: string): Promise<MigrationFile[]> {
  if (!existsSync(migrationsDir)) {
    throw new Error(
      `Migrations folder not found: ${migrationsDir} (it must ship beside the service's code, see @msp/db).`,
    );
  }
  const entries = await readdir(migrationsDir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

  return Promise.all(
    names.map(async (name) => {
      const file = path.join(migrationsDir, name, 'migration.sql');
      const bytes = await readFile(file).catch(() => {
        throw new Error(`Migration ${name} has no migration.sql (${file}).`);
      });
      const script = bytes.toString('utf8');
      const lf = script.replace(/\r\n/g, '\n');
      return {
        name,
        script,
        checksum: sha256(bytes),
        equivalentChecksums: [sha256(lf), sha256(lf.replace(/\n/g, '\r\n'))],
      };
    }),
  );
}
