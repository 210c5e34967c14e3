import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findFreePort } from '../src/port-check';
import { findRepoRoot } from '../src/repo-root';
import { tenantCreate } from '../src/tenant-create';

// What the README promises a newcomer, end to end: `pnpm start` (here its
// second half, the built launcher) brings up desk, link and hr on an embedded
// PostgreSQL; the printed development client gets a token from desk, and link
// and hr answer with it. The services are the real builds (turbo builds them first).
const root = findRepoRoot();
const cli = path.join(root, 'packages/devstack/dist/cli.js');

interface Stack {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  ports: { desk: number; link: number; hr: number };
}

async function start(dataDir: string, pgPort: number): Promise<Stack> {
  const ports = { desk: await findFreePort(), link: await findFreePort(), hr: await findFreePort() };
  let output = '';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DEVSTACK_DATA_DIR: dataDir,
    EMBEDDED_PG_PORT: String(pgPort),
    DESK_PORT: String(ports.desk),
    LINK_PORT: String(ports.link),
    HR_PORT: String(ports.hr),
    DEVSTACK_LOG_FORMAT: 'json',
    NO_COLOR: '1',
  };
  const child = spawn(process.execPath, [cli], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  while (!output.includes('The stack is ready.')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the stack did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { child, output: () => output, exited, ports };
}

async function tokenFor(stack: Stack, clientId: string, secret: string): Promise<string> {
  const response = await fetch(`http://localhost:${stack.ports.desk}/api/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

const get = (url: string, token?: string) => fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('zero-setup start', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-e2e-'));
  fs.chmodSync(dataDir, 0o755);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test(
    'When the stack starts with no DATABASE_URL and no REDIS_URL, then the dev client gets a token that ' +
      'desk, link and hr accept, the other pages at their moved ports may fetch tokens from desk, ' +
      'tenant:create finds the database by itself; a restart reuses the data',
    async () => {
      const pgPort = await findFreePort();
      const first = await start(dataDir, pgPort);
      try {
        const devClient = JSON.parse(fs.readFileSync(path.join(dataDir, 'dev-client.json'), 'utf8'));
        expect(first.output()).toContain(devClient.client_secret);
        const token = await tokenFor(first, devClient.client_id, devClient.client_secret);

        const me = await get(`http://localhost:${first.ports.desk}/api/v1/me`, token);
        expect(me.status).toBe(200);
        const tenants = await get(`http://localhost:${first.ports.link}/api/v1/tenants`, token);
        expect(tenants.status).toBe(200);
        expect(tenants.headers.get('x-ratelimit-remaining')).toBe('599');
        const employees = await get(`http://localhost:${first.ports.hr}/api/v1/employees`, token);
        expect(employees.status).toBe(200);
        expect((await get(`http://localhost:${first.ports.hr}/api/v1/employees`)).status).toBe(401);
        for (const port of Object.values(first.ports))
          expect((await get(`http://localhost:${port}/readyz`)).status).toBe(200);

        // The ports are not the standard ones: the reference pages of link and hr, at theirs, may still
        // fetch a token from desk for their "try it" (desk's CORS origins follow the ports).
        for (const port of [first.ports.link, first.ports.hr]) {
          const preflight = await fetch(`http://localhost:${first.ports.desk}/api/v1/auth/token`, {
            method: 'OPTIONS',
            headers: {
              origin: `http://localhost:${port}`,
              'access-control-request-method': 'POST',
              'access-control-request-headers': 'content-type',
            },
          });
          expect(preflight.status).toBe(204);
          expect(preflight.headers.get('access-control-allow-origin')).toBe(`http://localhost:${port}`);
        }

        // pnpm tenant:create finds the embedded PostgreSQL on its own port, with no EMBEDDED_PG_PORT.
        let created = '';
        const code = await tenantCreate(['e2e-acme'], { PATH: process.env.PATH, DEVSTACK_DATA_DIR: dataDir }, root, {
          out: (text) => (created += text),
          err: () => undefined,
        });
        expect(code).toBe(0);
        const tenant = JSON.parse(created) as { client_id: string; client_secret: string };
        expect(
          (
            await get(
              `http://localhost:${first.ports.link}/api/v1/me`,
              await tokenFor(first, tenant.client_id, tenant.client_secret),
            )
          ).status,
        ).toBe(200);
      } finally {
        first.child.kill('SIGINT');
      }
      expect(await first.exited).toBe(0);

      // Second start: same data, same client and signing key; no new client is printed.
      const second = await start(dataDir, pgPort);
      try {
        const devClient = JSON.parse(fs.readFileSync(path.join(dataDir, 'dev-client.json'), 'utf8'));
        expect(second.output()).not.toContain('Development API client (shown once');
        const token = await tokenFor(second, devClient.client_id, devClient.client_secret);
        expect((await get(`http://localhost:${second.ports.link}/api/v1/me`, token)).status).toBe(200);
      } finally {
        second.child.kill('SIGTERM');
      }
      expect(await second.exited).toBe(0);
    },
    240_000,
  );
});
