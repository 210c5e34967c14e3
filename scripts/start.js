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

const launcher = spawn(process.execPath, [path.join(root, 'packages/devstack/dist/cli.js'), ...process.argv.slice(2)], { cwd: root, stdio: 'inherit', env: process.env });
// The launcher gets Ctrl-C from the terminal itself and stops everything in
// order; a signal sent to this wrapper alone is passed on to it.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (process.stdin.isTTY && signal === 'SIGINT') return;
    launcher.kill(signal);
  });
}
launcher.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
