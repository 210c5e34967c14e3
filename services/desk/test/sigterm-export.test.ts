import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDatabase, databaseUrlFor, dropDatabase, testServerUrl } from '@msp/db';
import { freePort, readUntilClosed, stalledReader, waitUntil } from '@msp/testkit';
import { DESK_ROOT, ensureBuiltDesk, startNode, stop, type Running } from './support/built-desk';

/*
 * SIGTERM while time exports stream (desk's built process, as deployed): an export whose reader
 * stopped reading, and one still waiting for its first row, must not hold the process until the
 * shutdown timeout (nor, before, for ever): the first is cut short, the second answers 503.
 */

jest.setTimeout(120_000);

const CLIENT_ID = 'sigterm-export-test';
const CLIENT_SECRET = randomBytes(24).toString('base64url');
const dbName = `t_desk_sigterm_export_${randomBytes(6).toString('hex')}`;
const TICKETS = 8_000;
let databaseUrl: string;
let dataDir: string;
let desk: Running | undefined;

beforeAll(async () => {
  ensureBuiltDesk();
  await createDatabase(testServerUrl(), dbName);
  databaseUrl = databaseUrlFor(testServerUrl(), dbName);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'desk-sigterm-export-'));
}, 240_000);
afterAll(async () => {
  await stop(desk);
  await dropDatabase(testServerUrl(), dbName);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function api(url: string, token: string, method: string, pathname: string, body?: object) {
  const response = await fetch(`${url}/api/v1${pathname}`, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await response.json()) as { id: string };
}

test(
  'When desk gets SIGTERM while one export stalls mid-file and another waits for its first row, then the first is ' +
    'cut short, the second answers 503, and desk exits 0 without waiting for the shutdown timeout',
  async () => {
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
        // Neither timeout ends the exports here: only the shutdown itself may.
        SHUTDOWN_TIMEOUT_MS: '60000',
        EXPORT_IDLE_TIMEOUT_MS: '600000',
      },
      url,
    );
    const tokenResponse = await fetch(`${url}/api/v1/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
    });
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
    const client = await api(url, token, 'POST', '/clients', { name: 'Wide Client' });
    const user = await api(url, token, 'POST', '/users', { name: 'Ann', email: 'ann@example.com' });
    const pg = new Client({ connectionString: databaseUrl });
    const locker = new Client({ connectionString: databaseUrl });
    await Promise.all([pg.connect(), locker.connect()]);
    try {
      // ~5 MB of CSV: more than the socket buffers of a reader that stops reading hold.
      await pg.query(
        `INSERT INTO tickets (tenant_id, number, title, client_id)
       SELECT c.tenant_id, n, 'Ticket ' || n || ' ' || repeat('x', 600), c.id FROM clients c, generate_series(1, $2::int) AS n WHERE c.id = $1::uuid`,
        [client.id, TICKETS],
      );
      await pg.query(
        `INSERT INTO time_entries (tenant_id, ticket_id, client_id, user_id, minutes, date)
       SELECT t.tenant_id, t.id, t.client_id, $2::uuid, 75, '2026-10-15' FROM tickets t WHERE t.client_id = $1::uuid`,
        [client.id, user.id],
      );
      const headers = { Authorization: `Bearer ${token}` };
      const stalled = await stalledReader(`${url}/api/v1/exports/time?period=2026-10`, headers);
      expect(stalled.status).toBe(200);
      // A lock request queued behind the stalled export's cursor: the next export's query waits behind it.
      await locker.query('BEGIN');
      const locking = locker.query('LOCK TABLE time_entries IN ACCESS EXCLUSIVE MODE');
      const waiting = new Promise<{ status?: number; headers: http.IncomingHttpHeaders; body: string }>((resolve) => {
        const req = http.get(`${url}/api/v1/exports/time?period=2026-10`, { headers }, (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
          res.on('error', () => resolve({ status: res.statusCode, headers: res.headers, body }));
        });
        req.on('error', () => resolve({ headers: {}, body: '' }));
      });
      await waitUntil(async () => {
        const { rows } = await pg.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'desk-time-export' AND wait_event_type = 'Lock'`,
        );
        return rows.length === 1;
      }, 'the second export waits for its first row');

      const exited = new Promise<number | null>((resolve) => desk!.child.once('exit', (code) => resolve(code)));
      desk.child.kill('SIGTERM');

      const rest = await readUntilClosed(stalled);
      expect(rest.complete).toBe(false);
      const second = await waiting;
      expect(second.status).toBe(503);
      expect(second.headers['retry-after']).toBeDefined();
      expect(JSON.parse(second.body)).toMatchObject({ type: 'urn:msp:problem:shutting-down', status: 503 });
      expect(await exited).toBe(0);
      expect(desk.output()).not.toContain('shutdown timeout reached');
      await locking;
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await Promise.all([pg.end(), locker.end()]);
    }
  },
);
