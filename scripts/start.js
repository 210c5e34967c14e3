#!/usr/bin/env node
// `pnpm start`: builds what changed, then runs the zero-setup launcher. A Node
// wrapper rather than `build && node …` in package.json: Ctrl-C reaches the
// whole terminal process group, and a shell in between would report the
// interrupted script as a failure even when everything stopped cleanly.
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { createBuildProgress } = require('./build-progress');

const root = path.resolve(__dirname, '..');
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' };
// The launcher's own prefix, so the build reads as its first step.
const say = (message) => process.stdout.write(`devstack | ${message}\n`);

/**
 * turbo's build, condensed (build-progress.js): a first build takes minutes and should not pass in
 * silence. `new-only` makes turbo name each task it runs; the tasks' own output (compilers say
 * nothing when they succeed) is shown only if the build fails. DEVSTACK_BUILD_CMD replaces the
 * command (for tests).
 */
function build() {
  const custom = process.env.DEVSTACK_BUILD_CMD?.trim();
  const [command, ...args] = custom
    ? custom.split(/\s+/)
    : ['pnpm', 'exec', 'turbo', 'run', 'build', '--output-logs=new-only'];
  const progress = createBuildProgress({ write: say, echo: (line) => process.stdout.write(`${line}\n`) });
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
  for (const stream of [child.stdout, child.stderr])
    readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => progress.line(line));
  // A stop asked for during the build stops the build (a Ctrl-C reaches turbo from the terminal as
  // well), and nothing is started afterwards.
  let interrupted;
  const stop = (signal) => {
    interrupted = signal;
    child.kill(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, stop);
  return new Promise((resolve) => {
    child.once('error', (error) => {
      progress.line(`could not run ${command}: ${error.message}`);
      resolve(progress.finish(1) ? 0 : 1);
    });
    child.once('close', (code, signal) => {
      for (const name of ['SIGINT', 'SIGTERM']) process.off(name, stop);
      if (interrupted) {
        progress.interrupted(interrupted);
        resolve(130);
        return;
      }
      resolve(progress.finish(code ?? (signal ? 1 : 0)) ? 0 : code || 1);
    });
  });
}

function launch() {
  // Its own process group: every signal reaches the launcher exactly once, from
  // here, whether it came from the terminal (Ctrl-C) or was sent to this process.
  // (A second Ctrl-C means "skip the grace period" to the launcher.)
  const launcher = spawn(
    process.execPath,
    [path.join(root, 'packages/devstack/dist/cli.js'), ...process.argv.slice(2)],
    {
      cwd: root,
      stdio: 'inherit',
      env: process.env,
      detached: true,
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => launcher.kill(signal));
  launcher.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

build().then((code) => {
  if (code !== 0) process.exit(code);
  launch();
});
