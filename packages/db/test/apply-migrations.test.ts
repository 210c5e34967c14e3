import { createHash } from 'node:crypto';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { applyMigrations, MigrationError, readMigrationsFolder, runPrismaCli } from '../src';
import { copyOfNotesService, emptyDatabase, NOTES_MIGRATIONS, NOTES_SERVICE, query } from './fixture';

const NOTES_MIGRATION_NAMES = ['20261122031138_init', '20261122031307_pinned_notes'];

interface HistoryRow {
  id: string;
  checksum: string;
  migration_name: string;
  logs: string | null;
  finished: boolean;
  rolled_back_at: Date | null;
  applied_steps_count: number;
}

function history(url: string): Promise<HistoryRow[]> {
  return query<HistoryRow>(
    url,
    `SELECT id, checksum, migration_name, logs, finished_at IS NOT NULL AS finished, rolled_back_at, applied_steps_count
       FROM _prisma_migrations ORDER BY started_at, migration_name`,
  );
}

function tableDefinitions(url: string) {
  return query(
    url,
    `SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, column_default
       FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
  );
}

const withoutIds = (rows: HistoryRow[]) => rows.map(({ id: _id, ...rest }) => rest);

describe('applyMigrations', () => {
  test('When a fresh database is migrated, then its tables and _prisma_migrations match what prisma migrate deploy leaves', async () => {
    const byApplier = await emptyDatabase('applier');
    const byPrisma = await emptyDatabase('prisma');
    try {
      const result = await applyMigrations(byApplier.url, NOTES_MIGRATIONS);
      const deploy = await runPrismaCli(['migrate', 'deploy'], {
        cwd: NOTES_SERVICE,
        env: { DATABASE_URL: byPrisma.url },
      });
      expect(deploy).toMatchObject({ exitCode: 0 });

      expect(result.applied).toEqual(NOTES_MIGRATION_NAMES);
      expect(await tableDefinitions(byApplier.url)).toEqual(await tableDefinitions(byPrisma.url));
      const rows = await history(byApplier.url);
      expect(withoutIds(rows)).toEqual(withoutIds(await history(byPrisma.url)));
      const initSql = await readFile(path.join(NOTES_MIGRATIONS, NOTES_MIGRATION_NAMES[0]!, 'migration.sql'));
      expect(rows[0]).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        checksum: createHash('sha256').update(initSql).digest('hex'),
        finished: true,
        logs: null,
        applied_steps_count: 1,
      });
    } finally {
      await byApplier.drop();
      await byPrisma.drop();
    }
  });

  test('When the database is already up to date, then another run applies and records nothing', async () => {
    const db = await emptyDatabase('rerun');
    try {
      await applyMigrations(db.url, NOTES_MIGRATIONS);
      const before = await history(db.url);

      const result = await applyMigrations(db.url, NOTES_MIGRATIONS);

      expect(result.applied).toEqual([]);
      expect(await history(db.url)).toEqual(before);
    } finally {
      await db.drop();
    }
  });

  test('When several instances migrate the same database at once, then each migration runs exactly once', async () => {
    const service = await copyOfNotesService();
    const db = await emptyDatabase('concurrent');
    try {
      // A slow first migration keeps the others waiting on the lock rather than finishing first.
      await appendFile(
        path.join(service.migrationsDir, NOTES_MIGRATION_NAMES[0]!, 'migration.sql'),
        '\nSELECT pg_sleep(0.5);\n',
      );

      const results = await Promise.all(
        Array.from({ length: 6 }, () => applyMigrations(db.url, service.migrationsDir)),
      );

      expect(results.flatMap((result) => result.applied).sort()).toEqual(NOTES_MIGRATION_NAMES);
      expect((await history(db.url)).map((row) => row.migration_name)).toEqual(NOTES_MIGRATION_NAMES);
    } finally {
      await db.drop();
      await service.remove();
    }
  });

  test('When a migration fails, then it is recorded as failed with nothing half-applied, and it blocks the next runs until resolved', async () => {
    const service = await copyOfNotesService();
    const db = await emptyDatabase('failing');
    const broken = '20261201000000_broken';
    const brokenFile = path.join(service.migrationsDir, broken, 'migration.sql');
    try {
      await mkdir(path.dirname(brokenFile));
      await writeFile(
        brokenFile,
        'CREATE TABLE "half_done" ("id" INTEGER);\nINSERT INTO "missing_table" VALUES (1);\n',
      );

      const failure = await applyMigrations(db.url, service.migrationsDir).catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(MigrationError);
      expect(failure).toMatchObject({
        migrationName: broken,
        message: expect.stringContaining('relation "missing_table" does not exist'),
      });
      expect(await history(db.url)).toEqual([
        expect.objectContaining({ migration_name: NOTES_MIGRATION_NAMES[0], finished: true }),
        expect.objectContaining({ migration_name: NOTES_MIGRATION_NAMES[1], finished: true }),
        expect.objectContaining({
          migration_name: broken,
          finished: false,
          rolled_back_at: null,
          applied_steps_count: 0,
          logs: expect.stringContaining('Database error code: 42P01'),
        }),
      ]);
      expect(await query(db.url, `SELECT to_regclass('public.half_done') AS half_done`)).toEqual([{ half_done: null }]);

      // Fixing the file is not enough: the failure must be resolved first, for us and for Prisma.
      await writeFile(brokenFile, 'CREATE TABLE "half_done" ("id" INTEGER);\n');
      await expect(applyMigrations(db.url, service.migrationsDir)).rejects.toThrow(
        `Migration ${broken} failed earlier`,
      );
      const deploy = await runPrismaCli(['migrate', 'deploy'], { cwd: service.dir, env: { DATABASE_URL: db.url } });
      expect(deploy.exitCode).toBe(1);
      expect(deploy.stderr + deploy.stdout).toContain('P3009');

      const resolve = await runPrismaCli(['migrate', 'resolve', '--rolled-back', broken], {
        cwd: service.dir,
        env: { DATABASE_URL: db.url },
      });
      expect(resolve).toMatchObject({ exitCode: 0 });
      expect(await applyMigrations(db.url, service.migrationsDir)).toEqual({ applied: [broken] });
    } finally {
      await db.drop();
      await service.remove();
    }
  }, 60_000);

  test('When an applied migration was edited since, then the run fails and names it; a CRLF copy of it still passes', async () => {
    const service = await copyOfNotesService();
    const db = await emptyDatabase('edited');
    const initFile = path.join(service.migrationsDir, NOTES_MIGRATION_NAMES[0]!, 'migration.sql');
    try {
      await applyMigrations(db.url, service.migrationsDir);
      const original = await readFile(initFile, 'utf8');

      await writeFile(initFile, original.replace(/\n/g, '\r\n'));
      await expect(applyMigrations(db.url, service.migrationsDir)).resolves.toEqual({ applied: [] });

      await writeFile(initFile, `${original}\nCREATE INDEX "notes_title_idx" ON "notes"("title");\n`);
      const failure = await applyMigrations(db.url, service.migrationsDir).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(MigrationError);
      expect(failure).toMatchObject({
        migrationName: NOTES_MIGRATION_NAMES[0],
        message: expect.stringContaining('was edited after it was applied'),
      });
    } finally {
      await db.drop();
      await service.remove();
    }
  });

  test('When a database was migrated by applyMigrations, then prisma migrate status reports it up to date', async () => {
    const db = await emptyDatabase('status');
    try {
      await applyMigrations(db.url, NOTES_MIGRATIONS);

      const status = await runPrismaCli(['migrate', 'status'], { cwd: NOTES_SERVICE, env: { DATABASE_URL: db.url } });

      expect(status.stdout).toContain('Database schema is up to date!');
      expect(status.exitCode).toBe(0);
    } finally {
      await db.drop();
    }
  });

  test('When the migrations folder does not exist, then it fails before touching the database', async () => {
    await expect(
      applyMigrations('postgresql://nobody@127.0.0.1:1/none', path.join(NOTES_SERVICE, 'nope')),
    ).rejects.toThrow('Migrations folder not found');
  });
});

describe('readMigrationsFolder', () => {
  test("When the services' folders are read, then their order is Prisma's (localeCompare) and no locale-aware compare runs", async () => {
    const original = String.prototype.localeCompare;
    let localeCompares = 0;
    String.prototype.localeCompare = function (this: string, ...args: Parameters<typeof original>) {
      localeCompares += 1;
      return original.apply(this, args);
    };
    const orders: Record<string, string[]> = {};
    try {
      for (const service of ['desk', 'link', 'hr']) {
        orders[service] = (
          await readMigrationsFolder(path.resolve(__dirname, `../../../services/${service}/prisma/migrations`))
        ).map((m) => m.name);
      }
      orders.notes = (await readMigrationsFolder(NOTES_MIGRATIONS)).map((m) => m.name);
    } finally {
      String.prototype.localeCompare = original;
    }
    expect(localeCompares).toBe(0);
    for (const [service, names] of Object.entries(orders)) {
      expect({ service, names }).toEqual({ service, names: [...names].sort((a, b) => a.localeCompare(b)) });
      expect({ service, timestamps: new Set(names.map((name) => name.slice(0, 14))).size }).toEqual({
        service,
        timestamps: names.length,
      });
    }
    expect(orders.notes).toEqual(NOTES_MIGRATION_NAMES);
  });
});
