import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDevstack } from '../src/devstack';
import { readDevstackConfig } from '../src/devstack-config';
import { findFreePort } from '../src/port-check';
import { findRepoRoot } from '../src/repo-root';
import { tenantCreate } from '../src/tenant-create';

const FAKE_SERVICE = path.join(__dirname, 'fixtures', 'fake-service.js');

/** Polls until `done` holds (the launcher works in the background). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('the launcher, with stand-in services', () => {
  // One data folder for the file: the first test creates the cluster, the
  // others reuse it, as a second `pnpm start` would.
  const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-run-'));
  afterAll(() => fs.rmSync(dataRoot, { recursive: true, force: true }));

  async function launch(extraEnv: Record<string, string> = {}) {
    const env: Record<string, string | undefined> = {
      PATH: process.env['PATH'],
      DEVSTACK_DATA_DIR: dataRoot,
      EMBEDDED_PG_PORT: String(await findFreePort()),
      DESK_PORT: String(await findFreePort()),
      LINK_PORT: String(await findFreePort()),
      HR_PORT: String(await findFreePort()),
      DEVSTACK_SERVICE_CMD: `${process.execPath} ${FAKE_SERVICE} {service}`,
      DEVSTACK_STOP_TIMEOUT_MS: '1000',
      ...extraEnv,
    };
    const lines: string[] = [];
    const devstack = createDevstack(readDevstackConfig(env, findRepoRoot()), {
      write: (line) => lines.push(line),
      env,
    });
    const exitCode = devstack.run();
    return { devstack, exitCode, lines, env };
  }

  test('When started, then every service gets its own database and settings, and the banner shows the dev client', async () => {
    const { devstack, exitCode, lines, env } = await launch({ REDIS_URL: 'redis://127.0.0.1:6390' });
    const ready = await devstack.ready;
    expect(ready).toBeDefined();
    expect(ready!.baseUrls.desk).toBe(`http://localhost:${env['DESK_PORT']}/api/v1`);
    expect(ready!.devClient).toEqual({ client_id: 'dev-desk', client_secret: "s3cret'with quote", tenant: 'default' });

    const output = lines.join('\n');
    expect(output).toContain('created databases desk, link, hr');
    expect(output).toContain(`"DATABASE_URL":"postgres://postgres:postgres@127.0.0.1:${env['EMBEDDED_PG_PORT']}/link"`);
    expect(output).toContain(`"DATA_DIR":"${path.join(dataRoot, 'hr')}"`);
    expect(output).toContain(`"AUTH_JWKS_URL":"http://127.0.0.1:${env['DESK_PORT']}/api/v1/.well-known/jwks.json"`);
    expect(output).toContain(`"DEV_CLIENT_FILE":"${path.join(dataRoot, 'dev-client.json')}"`);
    expect(output).toContain('"REDIS_URL":"redis://127.0.0.1:6390"');
    expect(output).toContain(`curl -s -X POST http://localhost:${env['DESK_PORT']}/api/v1/auth/token`);

    devstack.stop('test done');
    expect(await exitCode).toBe(0);
    const tail = lines.join('\n');
    expect(tail).toContain('everything stopped cleanly');
    // Services stop before PostgreSQL does.
    expect(tail.indexOf('hr exited with code 0')).toBeLessThan(tail.indexOf('stopping PostgreSQL'));
    expect(tail).toContain('PostgreSQL exited with code 0');
  });

  test('When a service crashes, then everything stops and the exit code is 1', async () => {
    const { devstack, exitCode, lines } = await launch({ FAKE_CRASH: 'link' });
    await devstack.ready;
    expect(await exitCode).toBe(1);
    const output = lines.join('\n');
    expect(output).toContain('PostgreSQL 18 started with the existing data');
    expect(output).toContain('link exited with code 3 unexpectedly: stopping everything');
    expect(output).toContain('desk exited with code 0');
    expect(output).toContain('PostgreSQL exited with code 0');
  });

  test(
    'When a service ignores SIGTERM, then it is killed after the grace period, the launcher ' +
      'says which and after how long, never "stopped cleanly", and exits 1',
    async () => {
      const { devstack, exitCode, lines } = await launch({ FAKE_IGNORE_SIGTERM: 'hr' });
      await devstack.ready;
      devstack.stop('test done');
      expect(await exitCode).toBe(1);
      const output = lines.join('\n');
      // The grace period is DEVSTACK_STOP_TIMEOUT_MS=1000: the kill follows SIGTERM by about a second.
      expect(output).toMatch(/hr was killed with SIGKILL \d+\.\d s after SIGTERM \(it ignored the request to stop\)/);
      expect(output).toMatch(/stopped, but not cleanly: hr was killed with SIGKILL \d+\.\d s after SIGTERM/);
      expect(output).not.toContain('everything stopped cleanly');
      // The others stopped by themselves, and PostgreSQL after them.
      expect(output).toContain('desk exited with code 0');
      expect(output).toContain('link exited with code 0');
      expect(output).toContain('PostgreSQL exited with code 0');
    },
  );

  test('When a second Ctrl-C skips the grace period, then the kills are reported as kills and the exit code is 1', async () => {
    const { devstack, exitCode, lines } = await launch({ FAKE_IGNORE_SIGTERM: 'link' });
    await devstack.ready;
    devstack.stop('SIGINT received');
    await until(() => lines.some((line) => line.includes('stopping desk, link, hr')));
    devstack.stop('SIGINT received', { force: true });
    expect(await exitCode).toBe(1);
    const output = lines.join('\n');
    expect(output).toMatch(/link was killed with SIGKILL \d+\.\d s after SIGTERM \(a second Ctrl-C asked for it\)/);
    expect(output).toContain('stopped, but not cleanly: ');
    expect(output).not.toContain('everything stopped cleanly');
  });

  test(
    'When pnpm start runs its PostgreSQL on a port of its own, then tenant:create finds it without ' +
      'EMBEDDED_PG_PORT; once it is stopped, it says which port it tried and which variables to set',
    async () => {
      const { devstack, exitCode, env } = await launch();
      await devstack.ready;
      const toolEnv = { PATH: process.env['PATH'], DEVSTACK_DATA_DIR: dataRoot };
      const out: string[] = [];
      const err: string[] = [];
      const io = { out: (text: string) => out.push(text), err: (text: string) => err.push(text) };
      const slug = `acme-${Date.now().toString(36)}`;
      try {
        expect(await tenantCreate([slug], toolEnv, findRepoRoot(), io)).toBe(0);
      } finally {
        devstack.stop('test done');
      }
      expect(await exitCode).toBe(0);
      // stdout holds exactly desk's JSON; the port came from the launcher's note.
      expect(JSON.parse(out.join(''))).toEqual({
        tenant_id: expect.any(String),
        client_id: expect.any(String),
        client_secret: expect.any(String),
      });
      expect(err.join('')).toContain(
        `using the embedded PostgreSQL of \`pnpm start\` on port ${env['EMBEDDED_PG_PORT']} (from ${path.join(dataRoot, 'embedded-postgres.json')})`,
      );

      err.length = 0;
      expect(await tenantCreate(['other'], toolEnv, findRepoRoot(), io)).toBe(1);
      const stopped = err.join('');
      expect(stopped).toContain(
        `nothing listens on 127.0.0.1:${env['EMBEDDED_PG_PORT']}, the port the last \`pnpm start\` noted in ${path.join(dataRoot, 'embedded-postgres.json')}`,
      );
      expect(stopped).toContain('DEVSTACK_DATA_DIR');
      expect(stopped).toContain('EMBEDDED_PG_PORT');

      // EMBEDDED_PG_PORT, when given, wins over the note, and is named.
      err.length = 0;
      expect(
        await tenantCreate(
          ['other'],
          { ...toolEnv, EMBEDDED_PG_PORT: String(await findFreePort()) },
          findRepoRoot(),
          io,
        ),
      ).toBe(1);
      expect(err.join('')).toMatch(/nothing listens on 127\.0\.0\.1:\d+, the port EMBEDDED_PG_PORT names/);
    },
    60_000,
  );

  test('When a service exits before it is ready, then the start fails with its name', async () => {
    const { devstack, exitCode, lines } = await launch({
      DEVSTACK_SERVICE_CMD: `${process.execPath} -e process.exit(7) {service}`,
    });
    expect(await devstack.ready).toBeUndefined();
    expect(await exitCode).toBe(1);
    expect(lines.join('\n')).toMatch(/(desk|link|hr) exited with code 7 before it was ready/);
  });
});
