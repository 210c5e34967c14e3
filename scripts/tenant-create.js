#!/usr/bin/env node
// `pnpm tenant:create <slug>`: the platform operator's command against the database `pnpm start`
// uses, unless DESK_DATABASE_URL (desk's database) or DATABASE_URL (a server; its database "desk")
// says otherwise — the same resolution as the launcher. Builds desk if needed, then runs desk's own
// command (services/desk/dist/cli/tenant-create.js, also in desk's image). stdout carries only the
// JSON {"tenant_id","client_id","client_secret"}; everything else goes to stderr.
const { spawnSync } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function canConnect(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(2000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });
}

async function main() {
  // Build output is for people: stderr, never stdout.
  const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' };
  const build = spawnSync('pnpm', ['exec', 'turbo', 'run', 'build', '--filter=@msp/desk...', '--filter=@msp/devstack', '--output-logs=errors-only'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
    env,
  });
  if (build.status !== 0) {
    process.stderr.write('tenant:create: the build failed (see above)\n');
    return 1;
  }
  const { readDevstackConfig, resolveDatabaseUrls, embeddedServerUrl, ensureDatabases, DevstackError } = require(path.join(root, 'packages/devstack/dist/index.js'));
  let config;
  try {
    config = readDevstackConfig(process.env, root);
  } catch (error) {
    process.stderr.write(`tenant:create: ${error instanceof DevstackError ? error.message : error}\n`);
    return 2;
  }
  const usesEmbedded = !config.databaseUrlOverrides.desk && !config.databaseServerUrl;
  const databaseUrl = resolveDatabaseUrls(config, embeddedServerUrl(config.embeddedPostgresPort)).desk;
  if (usesEmbedded && !(await canConnect('127.0.0.1', config.embeddedPostgresPort))) {
    process.stderr.write(
      `tenant:create: the embedded PostgreSQL of \`pnpm start\` is not running (nothing listens on 127.0.0.1:${config.embeddedPostgresPort}).\n` +
        '  Start the stack in another terminal with `pnpm start` and run this again,\n' +
        '  or point the command at a database: DESK_DATABASE_URL=postgres://…/desk (or DATABASE_URL=postgres://…, whose database "desk" is used).\n',
    );
    return 1;
  }
  try {
    // As `pnpm start` does: desk's database is created on the server when it does not exist yet.
    await ensureDatabases([databaseUrl]);
  } catch (error) {
    process.stderr.write(`tenant:create: ${error.message}\n`);
    return 1;
  }
  const run = spawnSync(process.execPath, [path.join(root, 'services/desk/dist/cli/tenant-create.js'), ...process.argv.slice(2)], {
    cwd: path.join(root, 'services/desk'),
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return run.status ?? 1;
}

main().then((code) => {
  process.exitCode = code;
});
