// The Prisma CLI talks to bin/schema-engine.js as it would to its native engine. The stand-in
// rests on internal APIs of pinned versions (prisma, @prisma/adapter-pg,
// @prisma/driver-adapter-utils, @prisma/schema-engine-wasm): this file is what tells whether an
// upgrade of any of them still works. Each CLI call takes about 3 s.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkSchemaDrift, databaseUrlFor, dropDatabase, runPrismaCli, testServerUrl } from '../src';
import { copyOfNotesService, databaseExists, emptyDatabase, NOTES_MIGRATIONS, NOTES_SERVICE, query } from './fixture';

const SCHEMA_ENGINE_BIN = path.join(__dirname, '..', 'bin', 'schema-engine.js');

function runSchemaEngine(args: string[]): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCHEMA_ENGINE_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr }));
  });
}

async function shadowDatabasesOf(dbName: string): Promise<string[]> {
  const rows = await query<{ datname: string }>(
    testServerUrl(),
    'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
    [`prisma_shadow_${dbName}`],
  );
  return rows.map((row) => row.datname);
}

describe('bin/schema-engine.js behind the pinned Prisma CLI', () => {
  test(
    'When migrate dev --create-only runs for a changed schema, then it creates the ' +
      'database, writes the migration and drops its shadow database',
    async () => {
      const service = await copyOfNotesService();
      const dbName = `t_db_dev_${randomBytes(6).toString('hex')}`;
      try {
        const schemaPath = path.join(service.dir, 'prisma', 'schema.prisma');
        const schema = await readFile(schemaPath, 'utf8');
        await writeFile(
          schemaPath,
          schema.replace('  pinned    Boolean', '  archived  Boolean  @default(false)\n  pinned    Boolean'),
        );

        const result = await runPrismaCli(['migrate', 'dev', '--create-only', '--name', 'archived_notes'], {
          cwd: service.dir,
          env: { DATABASE_URL: databaseUrlFor(testServerUrl(), dbName) },
        });

        expect(result).toMatchObject({
          exitCode: 0,
          stdout: expect.stringContaining('created the following migration without applying it'),
        });
        const created = (await readdir(service.migrationsDir)).find((name) => name.endsWith('_archived_notes'));
        expect(created).toBeDefined();
        expect(await readFile(path.join(service.migrationsDir, created!, 'migration.sql'), 'utf8')).toContain(
          'ADD COLUMN     "archived" BOOLEAN NOT NULL DEFAULT false',
        );
        expect(await databaseExists(dbName)).toBe(true);
        expect(await shadowDatabasesOf(dbName)).toEqual([]);
      } finally {
        await dropDatabase(testServerUrl(), dbName);
        await service.remove();
      }
    },
  );

  test('When migrate deploy runs on a fresh database, then migrate status reports it up to date', async () => {
    const db = await emptyDatabase('deploy');
    try {
      const deploy = await runPrismaCli(['migrate', 'deploy'], { cwd: NOTES_SERVICE, env: { DATABASE_URL: db.url } });
      const status = await runPrismaCli(['migrate', 'status'], { cwd: NOTES_SERVICE, env: { DATABASE_URL: db.url } });

      expect(deploy).toMatchObject({
        exitCode: 0,
        stdout: expect.stringContaining('All migrations have been successfully applied.'),
      });
      expect(status).toMatchObject({ exitCode: 0, stdout: expect.stringContaining('Database schema is up to date!') });
      expect(await query(db.url, 'SELECT count(*)::int AS notes FROM notes')).toEqual([{ notes: 0 }]);
    } finally {
      await db.drop();
    }
  });

  test('When migrate diff compares migrations with a schema, then it reports no drift for matching ones and the missing SQL otherwise', async () => {
    const service = await copyOfNotesService();
    try {
      const schemaPath = path.join(service.dir, 'prisma', 'schema.prisma');
      const inSync = await checkSchemaDrift({ schemaPath, migrationsDir: NOTES_MIGRATIONS });
      const schema = await readFile(schemaPath, 'utf8');
      await writeFile(schemaPath, `${schema}\nmodel Tag {\n  id Int @id\n\n  @@map("tags")\n}\n`);

      const drifted = await checkSchemaDrift({ schemaPath, migrationsDir: NOTES_MIGRATIONS });

      expect(inSync).toEqual({ drifted: false, sql: '' });
      expect(drifted.drifted).toBe(true);
      expect(drifted.sql).toContain('CREATE TABLE "tags"');
    } finally {
      await service.remove();
    }
  });

  test('When asked whether it can connect to a database that does not exist, then it answers P1003 as the native engine does', async () => {
    const url = databaseUrlFor(testServerUrl(), `t_db_missing_${randomBytes(6).toString('hex')}`);

    const result = await runSchemaEngine(['--datasource', JSON.stringify({ url }), 'cli', 'can-connect-to-database']);

    expect(result.exitCode).toBe(1);
    // The CLI skips the first stderr line, then reads the error from the JSON lines after it.
    const [, ...logLines] = result.stderr.trim().split('\n');
    expect(logLines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ level: 'ERROR', fields: expect.objectContaining({ error_code: 'P1003' }) }),
    );
  });
});
