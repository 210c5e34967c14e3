#!/usr/bin/env node
// `pnpm tenant:create <slug>`: the platform operator's command against the database `pnpm start`
// uses, unless DESK_DATABASE_URL (desk's database) or DATABASE_URL (a server; its database "desk")
// says otherwise — the same resolution as the launcher; the embedded PostgreSQL is found on the
// port the running `pnpm start` noted in its data folder (EMBEDDED_PG_PORT to name another).
// Builds desk and the launcher if needed, then runs desk's own command
// (services/desk/dist/cli/tenant-create.js, also in desk's image) through the launcher's package.
// stdout carries only the JSON {"tenant_id","client_id","client_secret"}; everything else goes to stderr.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

async function main() {
  // Build output is for people: stderr, never stdout.
  const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' };
  const build = spawnSync(
    'pnpm',
    ['exec', 'turbo', 'run', 'build', '--filter=@msp/desk...', '--filter=@msp/devstack', '--output-logs=errors-only'],
    {
      cwd: root,
      stdio: ['ignore', 2, 2],
      env,
    },
  );
  if (build.status !== 0) {
    process.stderr.write('tenant:create: the build failed (see above)\n');
    return 1;
  }
  const { tenantCreate } = require(path.join(root, 'packages/devstack/dist/index.js'));
  return tenantCreate(process.argv.slice(2), process.env, root, {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  });
}

main().then((code) => {
  process.exitCode = code;
});
