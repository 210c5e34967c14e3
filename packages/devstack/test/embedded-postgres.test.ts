import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { databaseUrlFor } from '../src/database-urls';
import { startEmbeddedPostgres, type RunningEmbeddedPostgres } from '../src/embedded-postgres';
import { ensureDatabases } from '../src/ensure-databases';
import { findFreePort } from '../src/port-check';

const DATABASES = ['desk', 'link', 'hr'];

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL', () => {
  // A fresh folder and port per run; as root this also exercises the
  // postgres system user and the folder permission fix (mkdtemp makes 0700).
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-pg-'));
  const dataDir = path.join(root, 'postgres');
  const messages: string[] = [];
  let running: RunningEmbeddedPostgres | undefined;

  const start = async () =>
    startEmbeddedPostgres({
      dataDir,
      port: await findFreePort(),
      fixableRoot: root,
      log: (m) => messages.push(m),
      onServerLine: () => undefined,
    });

  afterAll(async () => {
    await running?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('When started in an empty folder, then it creates a cluster and the three databases', async () => {
    running = await start();
    expect(running.createdCluster).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);

    const urls = DATABASES.map((name) => databaseUrlFor(running!.serverUrl, name));
    expect(await ensureDatabases(urls)).toEqual(DATABASES);
    expect(await ensureDatabases(urls)).toEqual([]);

    const rows = await query<{ datname: string }>(
      running.serverUrl,
      'SELECT datname FROM pg_database ORDER BY datname',
    );
    expect(rows.map((row) => row.datname)).toEqual(expect.arrayContaining(DATABASES));
    await query(
      databaseUrlFor(running.serverUrl, 'desk'),
      "CREATE TABLE kept (note text); INSERT INTO kept VALUES ('survives a restart')",
    );
  });

  test('When stopped and started again, then it reuses the data without a new initdb', async () => {
    const stopped = await running!.stop();
    expect(stopped).toEqual({ code: 0, signal: null });
    expect(fs.existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);

    messages.length = 0;
    running = await start();
    expect(running.createdCluster).toBe(false);
    expect(messages.some((m) => m.includes('creating a PostgreSQL'))).toBe(false);
    expect(await ensureDatabases(DATABASES.map((name) => databaseUrlFor(running!.serverUrl, name)))).toEqual([]);
    expect(await query(databaseUrlFor(running.serverUrl, 'desk'), 'SELECT note FROM kept')).toEqual([
      { note: 'survives a restart' },
    ]);
  });

  test('When the folder is already in use by a running server, then a second start says so', async () => {
    await expect(start()).rejects.toThrow(/PostgreSQL is already running on .*\(pid \d+/);
  });

  test('When the port is taken, then the error names the port and the variable', async () => {
    const port = Number(new URL(running!.serverUrl).port);
    const other = path.join(root, 'other');
    await expect(
      startEmbeddedPostgres({
        dataDir: other,
        port,
        fixableRoot: root,
        log: () => undefined,
        onServerLine: () => undefined,
      }),
    ).rejects.toThrow(new RegExp(`Port ${port} .* already in use.*EMBEDDED_PG_PORT=${port + 1}`));
  });

  // Only root runs PostgreSQL as another user, so only root can meet this.
  const asRoot = process.getuid?.() === 0 ? test : test.skip;
  asRoot(
    'When run as root under a folder closed to other users, then nothing starts and the error says how to open it',
    async () => {
      const closed = fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-closed-'));
      try {
        const dataRoot = path.join(closed, 'data');
        await expect(
          startEmbeddedPostgres({
            dataDir: path.join(dataRoot, 'postgres'),
            port: await findFreePort(),
            fixableRoot: dataRoot,
            log: () => undefined,
            onServerLine: () => undefined,
          }),
        ).rejects.toThrow(
          new RegExp(`cannot enter ${closed} \\(mode 700\\)[\\s\\S]*chmod o\\+x ${closed}[\\s\\S]*DEVSTACK_DATA_DIR=`),
        );
        expect(fs.statSync(closed).mode & 0o777).toBe(0o700);
      } finally {
        fs.rmSync(closed, { recursive: true, force: true });
      }
    },
  );
});
