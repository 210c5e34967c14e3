import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findFreePort } from '../src/port-check';
import { findRepoRoot } from '../src/repo-root';

// `pnpm start` as a newcomer runs it (scripts/start.js): the build, then the built launcher. turbo is
// replaced by a transcript of its own output (DEVSTACK_BUILD_CMD), the services by stand-ins
// (DEVSTACK_SERVICE_CMD); the launcher and the embedded PostgreSQL are the real ones.
const root = findRepoRoot();
const FIXTURES = path.join(__dirname, 'fixtures');
const fakeTurbo = (transcript: string) =>
  `${process.execPath} ${path.join(FIXTURES, 'fake-turbo.js')} ${path.join(FIXTURES, transcript)}`;

describe('pnpm start', () => {
  const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-start-'));
  afterAll(() => fs.rmSync(dataRoot, { recursive: true, force: true }));

  async function start(extraEnv: Record<string, string>) {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      DEVSTACK_DATA_DIR: dataRoot,
      EMBEDDED_PG_PORT: String(await findFreePort()),
      DESK_PORT: String(await findFreePort()),
      LINK_PORT: String(await findFreePort()),
      HR_PORT: String(await findFreePort()),
      DEVSTACK_SERVICE_CMD: `${process.execPath} ${path.join(FIXTURES, 'fake-service.js')} {service}`,
      DEVSTACK_STOP_TIMEOUT_MS: '2000',
      NO_COLOR: '1',
      ...extraEnv,
    };
    const child = spawn(process.execPath, [path.join(root, 'scripts/start.js')], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, exited, output: () => output, lines: () => output.split('\n') };
  }

  async function until(done: () => boolean, what: string, output: () => string) {
    const deadline = Date.now() + 60_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${what} never came:\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test(
    'When the build has work to do, then pnpm start says it is building and how long a first start ' +
      'takes, names each task turbo runs, counts the cached ones, then starts the stack',
    async () => {
      const run = await start({ DEVSTACK_BUILD_CMD: fakeTurbo('turbo-first-build.txt') });
      try {
        await until(() => run.output().includes('The stack is ready.'), 'the banner', run.output);
      } finally {
        run.child.kill('SIGINT');
      }
      expect(await run.exited).toBe(0);

      const lines = run.lines();
      const first = lines.findIndex((line) => line.startsWith('devstack | building…'));
      expect(first).toBe(0);
      expect(lines[0]).toBe(
        'devstack | building… (the first start builds everything and takes about 2 minutes; later starts rebuild only what changed)',
      );
      expect(
        lines
          .slice(1, 7)
          .map((line) => line.replace(/\[\d+:\d\d\] /, '').replace(/built in \d+:\d\d/, 'built in m:ss')),
      ).toEqual([
        "devstack | generating @msp/hr's database client",
        'devstack | building @msp/http',
        'devstack | building @msp/auth',
        'devstack | building @msp/desk',
        'devstack | building @msp/hr',
        "devstack | built in m:ss: 5 task(s) run, 2 from turbo's cache",
      ]);
      // turbo's own lines (the compiler's echo, Prisma's chatter) are not shown when the build succeeds.
      expect(run.output()).not.toContain('cache miss, executing');
      expect(run.output()).not.toContain('Prisma schema loaded');
      // Then the launcher, as before: the database, the services, the banner; and a clean stop.
      const banner = lines.indexOf('The stack is ready.');
      expect(banner).toBeGreaterThan(lines.findIndex((line) => line.includes('PostgreSQL 18')));
      expect(run.output()).toContain('everything stopped cleanly');
    },
    90_000,
  );

  test("When the build fails, then turbo's output is shown as it was, the failure said, and nothing is started", async () => {
    const run = await start({ DEVSTACK_BUILD_CMD: fakeTurbo('turbo-failed-build.txt'), FAKE_TURBO_EXIT: '2' });
    expect(await run.exited).toBe(2);
    const output = run.output();
    expect(output).toContain(
      "@msp/csv:build: src/index.ts(7,14): error TS2322: Type 'string' is not assignable to type 'number'.",
    );
    expect(output).toContain(' ERROR  run failed: command  exited (2)');
    expect(output).toMatch(
      /devstack \| the build failed after \d+:\d\d \(turbo's output is above\): fix it and run pnpm start again/,
    );
    expect(output).not.toContain('PostgreSQL');
    expect(output).not.toContain('The stack is ready.');
  }, 30_000);
});
