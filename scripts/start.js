#!/usr/bin/env node
// `pnpm start`: builds what changed, then runs the zero-setup launcher. A Node
// wrapper rather than `build && node …` in package.json: Ctrl-C reaches the
// whole terminal process group, and a shell in between would report the
// interrupted script as a failure even when everything stopped cleanly.
const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' };
const build = spawnSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit', env });
if (build.status !== 0) process.exit(build.status ?? 1);

// Its own process group: every signal reaches the launcher exactly once, from
// here, whether it came from the terminal (Ctrl-C) or was sent to this process.
// (A second Ctrl-C means "skip the grace period" to the launcher.)
const launcher = spawn(process.execPath, [path.join(root, 'packages/devstack/dist/cli.js'), ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: process.env,
  detached: true,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => launcher.kill(signal));
launcher.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
