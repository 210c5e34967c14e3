import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { applyMigrations, createDatabase, databaseUrlFor } from '@msp/db';
import { startTestIssuer, type TestIssuer } from '@msp/testkit';
import { findFreePort, startEmbeddedPostgres, type RunningEmbeddedPostgres } from '../src';

/*
 * PostgreSQL faults against real servers: hr as it is deployed (its built
 * process) on a PostgreSQL of this test's own — the embedded one `pnpm start` runs, on a free port,
 * since the machine's serves the other suites and must not be restarted. hr's connections are
 * terminated under a load of writes, then the server is stopped and started again: requests in
 * flight get 503 problem documents, never a 500; hr recovers by itself; and what is stored is
 * exactly what was answered 201. (Here rather than in hr: devstack owns the embedded PostgreSQL
 * and already depends on hr.)
 */

jest.setTimeout(180_000);

const HR_ROOT = path.dirname(require.resolve('@msp/hr/package.json'));

let root: string;
let pgPort: number;
let server: RunningEmbeddedPostgres;
let databaseUrl: string;
let issuer: TestIssuer;
let hr: ChildProcess;
let hrUrl: string;
let hrOutput = '';
let auth: string;
let next = 100_000;

async function startServer() {
  server = await startEmbeddedPostgres({
    dataDir: path.join(root, 'pgdata'),
    port: pgPort,
    fixableRoot: root,
    log: () => {},
    onServerLine: () => {},
  });
}

async function readyz(): Promise<{ status: number; body: { status?: string; checks?: Record<string, string> } }> {
  try {
    const response = await fetch(`${hrUrl}/readyz`);
    return {
      status: response.status,
      body: (await response.json()) as { status?: string; checks?: Record<string, string> },
    };
  } catch {
    return { status: 0, body: {} };
  }
}

async function untilReady() {
  for (let i = 0; i < 300; i += 1) {
    if (hr.exitCode !== null) throw new Error(`hr exited ${hr.exitCode}: ${hrOutput}`);
    if ((await readyz()).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`hr did not become ready: ${hrOutput}`);
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'hr-db-faults-'));
  fs.chmodSync(root, 0o755);
  pgPort = await findFreePort();
  await startServer();
  await createDatabase(server.serverUrl, 'hr_faults');
  databaseUrl = databaseUrlFor(server.serverUrl, 'hr_faults');
  await applyMigrations(databaseUrl, path.join(HR_ROOT, 'prisma/migrations'));
  issuer = await startTestIssuer();
  const port = await findFreePort();
  hrUrl = `http://127.0.0.1:${port}`;
  hr = spawn(process.execPath, [path.join(HR_ROOT, 'dist/index.js')], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      AUTH_ISSUER: issuer.issuer,
      AUTH_AUDIENCE: issuer.audience,
      AUTH_JWKS_URL: issuer.jwksUrl,
      RATE_LIMIT_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  hr.stdout!.on('data', (chunk: Buffer) => (hrOutput += chunk.toString()));
  hr.stderr!.on('data', (chunk: Buffer) => (hrOutput += chunk.toString()));
  await untilReady();
  auth = `Bearer ${issuer.token({ scope: 'read:hr write:hr' })}`;
});
afterAll(async () => {
  if (hr && hr.exitCode === null) {
    const exited = new Promise((resolve) => hr.once('exit', resolve));
    hr.kill('SIGTERM');
    await exited;
  }
  await issuer?.close();
  await server?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

interface Answer {
  status: number;
  type?: string;
  contentType?: string;
  id?: string;
}

async function createEmployee(name = 'Erika Mustermann'): Promise<Answer> {
  const response = await fetch(`${hrUrl}/api/v1/employees`, {
    method: 'POST',
    headers: { Authorization: auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ user_id: randomUUID(), personnel_number: String(next++), name }),
  });
  const body = (await response.json()) as { type?: string; id?: string };
  return {
    status: response.status,
    type: body.type,
    contentType: response.headers.get('content-type') ?? undefined,
    id: body.id,
  };
}

/** `workers` callers each creating employees one after the other until `stop()` says so. */
function writeLoad(workers: number) {
  const answers: Answer[] = [];
  let running = true;
  const worker = async () => {
    while (running) {
      const answer = await createEmployee();
      answers.push(answer);
      // While the database is away every request fails fast: do not spin.
      if (answer.status === 503) await new Promise((resolve) => setTimeout(resolve, 20));
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

/** Fails with what hr printed when it has ended, instead of the next request's "fetch failed". */
function expectHrAlive() {
  if (hr.exitCode !== null || hr.signalCode !== null)
    throw new Error(`hr ended (${hr.exitCode ?? hr.signalCode}):\n${hrOutput.slice(-4000)}`);
}

function expectOnly201Or503(answers: Answer[]) {
  expect(answers.filter((a) => a.status !== 201 && a.status !== 503)).toEqual([]);
  for (const answer of answers.filter((a) => a.status === 503)) {
    expect(answer.contentType).toMatch(/^application\/problem\+json/);
    expect(answer.type).toBe('urn:msp:problem:database-unavailable');
  }
}

test(
  "When hr's database connections are terminated under a load of writes, then requests get 201 or a 503 " +
    'problem document, hr recovers by itself, and exactly the answered writes are stored',
  async () => {
    const before = await storedIds();
    const load = writeLoad(12);
    const admin = new Client({ connectionString: server.serverUrl });
    await admin.connect();
    // Many rounds, some while hr is still reconnecting from the last: a termination that reaches a
    // connection just opened for a transaction ended hr once (see @msp/db's pool-errors.ts).
    for (let round = 0; round < 40; round += 1) {
      await new Promise((resolve) => setTimeout(resolve, [20, 60, 110, 170][round % 4]));
      expectHrAlive();
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'hr_faults' AND pid <> pg_backend_pid()`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    await load.stop();
    await admin.end();
    expectHrAlive();

    expectOnly201Or503(load.answers);
    expect((await createEmployee('After')).status).toBe(201);
    const stored = await storedIds();
    const created = load.answers.filter((a) => a.status === 201).map((a) => a.id!);
    expect(stored.size).toBe(before.size + created.length + 1);
    for (const id of created) expect(stored.has(id)).toBe(true);
    expect(hr.exitCode).toBeNull();
  },
);

test(
  'When PostgreSQL is stopped under a load of writes and started again, then requests in flight get ' +
    '503 problem documents, /readyz is 503 meanwhile, and hr serves again by itself',
  async () => {
    expectHrAlive();
    const before = await storedIds();
    const load = writeLoad(3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const ready = await readyz();
    expect(ready.status).toBe(503);
    expect(ready.body.checks?.['database']).toBe('failing');
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
    expect(hr.exitCode).toBeNull();
  },
);

test(
  'When a create with an Idempotency-Key commits but its COMMIT is cut off while it waits for the synchronous ' +
    'standby, then it is answered 503, not as created, and a retry with the key once the standby has it replays it',
  async () => {
    expectHrAlive();
    const call = (path: string, body: object, key?: string) =>
      fetch(`${hrUrl}/api/v1${path}`, {
        method: 'POST',
        headers: {
          Authorization: auth,
          'Content-Type': 'application/json',
          ...(key ? { 'Idempotency-Key': key } : {}),
        },
        body: JSON.stringify(body),
      });
    const userId = randomUUID();
    const employee = await call('/employees', {
      user_id: userId,
      personnel_number: String(next++),
      name: 'Sync Standby',
      employment: { start_date: '2024-01-01' },
    });
    expect(employee.status).toBe(201);
    const { id: employeeId } = (await employee.json()) as { id: string };
    const contract = await call(`/employees/${employeeId}/contracts`, {
      valid_from: '2024-01-01',
      weekly_minutes: 2400,
      working_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      vacation_days_per_year: 30,
      state: 'DE-BY',
    });
    expect(contract.status).toBe(201);
    // A timesheet: its create records timesheet.created, carrying the request's claim, in its transaction.
    const key = randomUUID();
    const sheet = {
      user_id: userId,
      date: '2024-03-04',
      entries: [{ start: '08:00', end: '12:00', category: 'normal' }],
    };
    const post = () => call('/timesheets', sheet, key);

    const admin = new Client({ connectionString: server.serverUrl });
    await admin.connect();
    // A standby that never attaches: every commit waits for it, as on a primary cut off from its standby.
    await admin.query(`ALTER SYSTEM SET synchronous_standby_names = 'never_attached'`);
    await admin.query('SELECT pg_reload_conf()');
    let cutting = true;
    // What a failover does to the old primary's sessions: each one waiting for the standby is ended.
    const cutter = (async () => {
      while (cutting) {
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'hr_faults' AND wait_event = 'SyncRep'`,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    let first: Response;
    try {
      first = await post();
    } finally {
      cutting = false;
      await cutter;
      await admin.query('ALTER SYSTEM RESET synchronous_standby_names');
      await admin.query('SELECT pg_reload_conf()');
      await admin.end();
    }
    expect(first.status).toBe(503);
    expect(first.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    // The change did commit on this server, and with no standby required it is durable now: the retry
    // is answered with it, and nothing is created twice.
    let again = await post();
    for (let i = 0; again.status === 503 && i < 50; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await post();
    }
    const body = (await again.json()) as { id: string; date: string };
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(body.date).toBe(sheet.date);
    const hrDb = new Client({ connectionString: databaseUrl });
    await hrDb.connect();
    try {
      const stored = await hrDb.query<{ id: string }>(`SELECT id FROM timesheets WHERE user_id = $1`, [userId]);
      expect(stored.rows.map((row) => row.id)).toEqual([body.id]);
    } finally {
      await hrDb.end();
    }
    expectHrAlive();
  },
);
