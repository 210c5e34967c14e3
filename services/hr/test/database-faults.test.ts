import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { applyMigrations, createDatabase, databaseUrlFor } from '@msp/db';
import { findFreePort, startEmbeddedPostgres, type RunningEmbeddedPostgres } from '@msp/devstack';
import { MIGRATIONS_DIR } from '../src/db';
import { startHr, type TestHr } from './support/hr';

/*
 * PostgreSQL faults against a real server (issue 10 point 6): hr on a PostgreSQL of this test's
 * own (the embedded one of `pnpm start`, on a free port), since the machine's serves the other
 * tests and must not be restarted. Its connections are terminated under a load of writes, then
 * the server is stopped and started again: requests in flight get 503 problem documents, never a
 * 500; hr recovers by itself; and what is stored is exactly what was answered 201.
 */

jest.setTimeout(120_000);

let root: string;
let port: number;
let server: RunningEmbeddedPostgres;
let databaseUrl: string;
let hr: TestHr;
let auth: string;
let next = 100_000;

async function startServer() {
  server = await startEmbeddedPostgres({ dataDir: path.join(root, 'pgdata'), port, fixableRoot: root, log: () => {}, onServerLine: () => {} });
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'hr-db-faults-'));
  fs.chmodSync(root, 0o755);
  port = await findFreePort();
  await startServer();
  await createDatabase(server.serverUrl, 'hr_faults');
  databaseUrl = databaseUrlFor(server.serverUrl, 'hr_faults');
  await applyMigrations(databaseUrl, MIGRATIONS_DIR);
  hr = await startHr({ databaseUrl });
  auth = `Bearer ${hr.token()}`;
});
afterAll(async () => {
  await hr?.close();
  await server?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

interface Answer {
  status: number;
  type?: string;
  contentType?: string;
  id?: string;
}

/** `workers` callers each creating employees one after the other until `stop()` says so. */
function writeLoad(workers: number) {
  const answers: Answer[] = [];
  let running = true;
  const worker = async () => {
    while (running) {
      const response = await request(hr.app)
        .post('/api/v1/employees')
        .set('Authorization', auth)
        .send({ user_id: crypto.randomUUID(), personnel_number: String(next++), name: 'Erika Mustermann' });
      answers.push({ status: response.status, type: response.body?.type, contentType: response.headers['content-type'], id: response.body?.id });
      // While the database is away every request fails fast: do not spin.
      if (response.status === 503) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const done = Promise.all(Array.from({ length: workers }, worker));
  return {
    answers,
    async stop() {
      running = false;
      await done;
    },
  };
}

async function storedIds(): Promise<Set<string>> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return new Set((await client.query<{ id: string }>('SELECT id FROM employees')).rows.map((row) => row.id));
  } finally {
    await client.end();
  }
}

function expectOnly201Or503(answers: Answer[]) {
  const unexpected = answers.filter((a) => a.status !== 201 && a.status !== 503);
  expect(unexpected).toEqual([]);
  for (const answer of answers.filter((a) => a.status === 503)) {
    expect(answer.contentType).toMatch(/^application\/problem\+json/);
    expect(answer.type).toBe('urn:msp:problem:database-unavailable');
  }
}

async function untilReady() {
  for (let i = 0; i < 300; i += 1) {
    if ((await request(hr.app).get('/readyz')).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('hr did not become ready again');
}

test('When hr\'s database connections are terminated under a load of writes, then requests get 201 or a 503 problem document, hr recovers by itself, and exactly the answered writes are stored', async () => {
  const before = await storedIds();
  const load = writeLoad(4);
  const admin = new Client({ connectionString: server.serverUrl });
  await admin.connect();
  for (let round = 0; round < 3; round += 1) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'hr_faults' AND pid <> pg_backend_pid()`);
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  await load.stop();
  await admin.end();

  expectOnly201Or503(load.answers);
  const after = (await request(hr.app).post('/api/v1/employees').set('Authorization', auth).send({ user_id: crypto.randomUUID(), personnel_number: String(next++), name: 'After' }));
  expect(after.status).toBe(201);
  const stored = await storedIds();
  const created = load.answers.filter((a) => a.status === 201).map((a) => a.id!);
  expect(stored.size).toBe(before.size + created.length + 1);
  for (const id of created) expect(stored.has(id)).toBe(true);
});

test('When PostgreSQL is stopped under a load of writes and started again, then requests in flight get 503 problem documents, /readyz is 503 meanwhile, and hr serves again by itself', async () => {
  const before = await storedIds();
  const load = writeLoad(3);
  await new Promise((resolve) => setTimeout(resolve, 200));
  await server.stop();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const ready = await request(hr.app).get('/readyz');
  expect(ready.status).toBe(503);
  expect(ready.body.checks.database).toBe('failing');
  await startServer();
  await untilReady();
  await new Promise((resolve) => setTimeout(resolve, 200));
  await load.stop();

  expectOnly201Or503(load.answers);
  expect(load.answers.some((a) => a.status === 503)).toBe(true);
  expect(load.answers.filter((a) => a.status === 201).length).toBeGreaterThan(0);
  const stored = await storedIds();
  const created = load.answers.filter((a) => a.status === 201).map((a) => a.id!);
  expect(stored.size).toBe(before.size + created.length);
  for (const id of created) expect(stored.has(id)).toBe(true);
});
