#!/usr/bin/env node
import { createDevstack } from './devstack';
import { LAUNCHER_VARIABLES, readDevstackConfig } from './devstack-config';
import { isDevstackError } from './devstack-error';
import { findRepoRoot } from './repo-root';

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function printHelp(): void {
  const width = Math.max(...LAUNCHER_VARIABLES.map(([name]) => name.length));
  process.stdout.write(
    [
      'Starts desk, link and hr with a database, for development. Usage: pnpm start',
      '',
      'Environment:',
      ...LAUNCHER_VARIABLES.map(([name, meaning]) => `  ${name.padEnd(width)}  ${meaning}`),
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    printHelp();
    return;
  }
  let config;
  try {
    config = readDevstackConfig(process.env, findRepoRoot(__dirname), process.stdout.isTTY === true);
  } catch (error) {
    process.stderr.write(`devstack: ${isDevstackError(error) ? error.message : String(error)}\n`);
    process.exitCode = 2;
    return;
  }

  const devstack = createDevstack(config, { write: (line) => process.stdout.write(`${line}\n`), env: process.env });
  let signalsSeen = 0;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      signalsSeen += 1;
      devstack.stop(`${signal} received`, { force: signalsSeen > 1 });
    });
  }
  // The children live in their own process groups and would outlive a
  // launcher that dies of a bug; this asks them to stop on the way out.
  process.once('exit', () => devstack.requestStopNow());

  const exitCode = await devstack.run();
  // Nothing else must keep the process alive, but a stray handle in a
  // dependency should not turn a clean stop into a hang.
  process.exit(exitCode);
}

main().catch((error: unknown) => {
  process.stderr.write(`devstack: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
