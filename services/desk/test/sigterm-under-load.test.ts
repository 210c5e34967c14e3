import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDatabase, databaseUrlFor, dropDatabase, testServerUrl } from '@msp/db';
import { freePort } from '@msp/testkit';
import { DESK_ROOT, ensureBuiltDesk, startNode, stop, type Running } from './support/built-desk';

/*
 * SIGTERM under a load of writes: desk as it is deployed (its built process),
 * callers creating clients over keep-alive connections, then SIGTERM. Every write a caller saw
 * answered 201 is stored, no response is cut off once started, and the process exits cleanly.
 */

jest.setTimeout(120_000);

const CLIENT_ID = 'sigterm-test';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const dbName = `t_desk_sigterm_${randomBytes(6).toString('hex')}`;
let databaseUrl: string;
let dataDir: string;
let desk: Running | undefined;

beforeAll(async () => {
  ensureBuiltDesk();
  await createDatabase(testServerUrl(), dbName);
  databaseUrl = databaseUrlFor(testServerUrl(), dbName);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-sigterm-'));
}, 240_000);
afterAll(async () => {
  await stop(desk);
  await dropDatabase(testServerUrl(), dbName);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Outcome {
  status?: number;
  id?: string;
  /** The response started but did not arrive whole. */
  cut?: boolean;
  /** No response at all (connection refused or closed before an answer). */
  error?: string;
}

function post(agent: http.Agent, port: number, pathname: string, token: string, body: object): Promise<Outcome> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: pathname,
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
          Authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('aborted', () => resolve({ status: res.statusCode, cut: true }));
        res.on('error', () => resolve({ status: res.statusCode, cut: true }));
        res.on('end', () => {
          if (!res.complete) return resolve({ status: res.statusCode, cut: true });
          let id: string | undefined;
          try {
            id = (JSON.parse(text) as { id?: string }).id;
          } catch {
            return resolve({ status: res.statusCode, cut: true });
          }
          resolve({ status: res.statusCode, id });
        });
      },
    );
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.end(payload);
  });
}

test('When desk gets SIGTERM under a load of writes, then every 201 a caller saw is stored, no response is cut off, and desk exits 0', async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  desk = await startNode(
    path.join(DESK_ROOT, 'dist/index.js'),
    DESK_ROOT,
    {
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      AUTH_ISSUER: `${url}/api/v1`,
      BOOTSTRAP_CLIENT_ID: CLIENT_ID,
      BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET,
      SHUTDOWN_TIMEOUT_MS: '10000',
    },
    url,
  );
  const tokenResponse = await fetch(`${url}/api/v1/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
  });
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };

  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const outcomes: Outcome[] = [];
  let stopped = false;
  let n = 0;
  const worker = async () => {
    // Until the server refuses: then it has stopped taking work.
    while (!stopped) {
      const outcome = await post(agent, port, '/api/v1/clients', token, {
        name: `Client ${n++} ${randomBytes(3).toString('hex')}`,
      });
      outcomes.push(outcome);
      if (outcome.error) stopped = true;
    }
  };
  const workers = Promise.all(Array.from({ length: 6 }, worker));
  await new Promise((resolve) => setTimeout(resolve, 400));
  const exited = new Promise<number | null>((resolve) => desk!.child.once('exit', (code) => resolve(code)));
  desk.child.kill('SIGTERM');
  const code = await exited;
  stopped = true;
  await workers;
  agent.destroy();

  expect(code).toBe(0);
  // Drained, not cut at the shutdown timeout (which would log this and reset the open connections).
  expect(desk.output()).not.toContain('shutdown timeout reached');
  expect(outcomes.filter((o) => o.cut)).toEqual([]);
  const created = outcomes.filter((o) => o.status === 201).map((o) => o.id!);
  expect(created.length).toBeGreaterThan(10);
  expect(outcomes.filter((o) => o.status !== undefined && o.status !== 201 && o.status !== 503)).toEqual([]);

  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ id: string }>('SELECT id FROM clients WHERE id = ANY($1::uuid[])', [created]);
    expect(new Set(rows.map((row) => row.id))).toEqual(new Set(created));
  } finally {
    await pg.end();
  }
});
