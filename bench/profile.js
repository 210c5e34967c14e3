'use strict';
// `pnpm bench:profile`: where desk's CPU goes under the list load: profile before optimising.
// Starts the built desk (bench/desk-server.js: auth, Redis rate limit, validation, logging, Prisma,
// exactly as `pnpm bench` runs it) with V8's --cpu-prof, seeds a tenant, drives
// `GET /api/v1/tickets?per_page=25` with autocannon, stops desk cleanly so it writes its profile,
// and sums the profile's self time by where the code lives (package, Node internals, our
// packages, GC). Prints the table and writes bench/results/latest-profile.md; the .cpuprofile
// stays under bench/results/profile/ for Chrome DevTools or speedscope. Environment (optional):
//   BENCH_DATABASE_URL, BENCH_REDIS_URL (as for `pnpm bench`), BENCH_DURATION (default 20 s),
//   BENCH_CONNECTIONS (default 10), BENCH_TICKETS (default 10000), BENCH_PATH (default the list; `:id` stands for a seeded ticket's id)
//   BENCH_METHOD=POST with BENCH_PATH=/api/v1/tickets: creates tickets (pnpm bench's body)
//   BENCH_SIDE=baseline profiles pnpm bench's baseline server (bench/baseline-server.js) under the
//   same load instead, so where the two spend differently can be read side by side
const { randomBytes } = require('node:crypto');
const { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const autocannon = require('autocannon');
const { applyMigrations } = require('../packages/db/dist/index.js');
const { seedTenant } = require('./seed');
const {
  clientToken,
  databaseUrlFor,
  forkServer,
  machine,
  describeMachine,
  newTicket,
  withClient,
} = require('./support');

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DURATION = Number(process.env.BENCH_DURATION ?? 20);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TICKETS = Number(process.env.BENCH_TICKETS ?? 10_000);
const PATH = process.env.BENCH_PATH ?? '/api/v1/tickets?per_page=25';
// POST: PATH is given pnpm bench's new ticket (BENCH_PATH=/api/v1/tickets BENCH_METHOD=POST).
const METHOD = process.env.BENCH_METHOD ?? 'GET';
const SIDE = process.env.BENCH_SIDE === 'baseline' ? 'baseline' : 'desk';
const RESULTS = path.join(__dirname, 'results');
const PROFILE_DIR = path.join(RESULTS, 'profile');
const MIGRATIONS = path.resolve(__dirname, '../services/desk/prisma/migrations');

/** Where a profile node's code lives, in words a reader can act on. */
function categoryOf({ functionName, url }) {
  if (!url) {
    if (functionName === '(garbage collector)') return 'V8: garbage collection';
    if (functionName === '(program)') return 'V8: program (compiling, native code)';
    if (functionName === '(idle)') return 'idle';
    return `native: ${functionName || '(anonymous)'}`;
  }
  const pkg =
    /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url) ??
    /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const ours = /\/(packages|services)\/([^/]+)\//.exec(url);
  if (ours) return ours[1] === 'packages' ? `@msp/${ours[2]}` : `services/${ours[2]}`;
  if (url.startsWith('node:')) {
    const module = url.slice('node:'.length).replace(/^internal\//, '');
    return `node: ${module
      .split('/')
      .slice(0, module.startsWith('deps/') ? 2 : 1)
      .join('/')}`;
  }
  return url;
}

/** Self time per category and per function, in % of the busy (non-idle) time. */
function summarise(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const categories = new Map();
  const functions = new Map();
  let busy = 0;
  for (const [id, micros] of self) {
    const frame = byId.get(id).callFrame;
    const category = categoryOf(frame);
    if (category === 'idle') continue;
    busy += micros;
    categories.set(category, (categories.get(category) ?? 0) + micros);
    const name = `${frame.functionName || '(anonymous)'} — ${category}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  }
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, micros]) => ({
        name,
        percent: Math.round((micros / busy) * 1000) / 10,
        ms: Math.round(micros / 1000),
      }));
  return { busy_ms: Math.round(busy / 1000), categories: top(categories, 20), functions: top(functions, 15) };
}

async function main() {
  const name = `bench_profile_${randomBytes(6).toString('hex')}`;
  const databaseUrl = databaseUrlFor(SERVER_URL, name);
  await withClient(SERVER_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
  rmSync(PROFILE_DIR, { recursive: true, force: true });
  mkdirSync(PROFILE_DIR, { recursive: true });
  let desk;
  let profiled;
  try {
    await applyMigrations(databaseUrl, MIGRATIONS);
    desk = await forkServer(
      'desk-server.js',
      {
        BENCH_DESK: JSON.stringify({
          databaseUrl,
          redisUrl: REDIS_URL || undefined,
          rateLimitPerMinute: 1_000_000_000,
          logLevel: 'info',
          tenants: ['large'],
        }),
      },
      SIDE === 'desk' ? { profileDir: PROFILE_DIR } : {},
    );
    profiled =
      SIDE === 'desk'
        ? desk
        : await forkServer(
            'baseline-server.js',
            { BENCH_BASELINE: JSON.stringify({ databaseUrl, tenantId: desk.credentials.large.tenantId }) },
            { profileDir: PROFILE_DIR },
          );
    await seedTenant(databaseUrl, desk.credentials.large.tenantId, TICKETS);
    await withClient(databaseUrl, (client) => client.query('VACUUM ANALYZE'));
    const headers = await clientToken(desk.url, desk.credentials.large.clientId, desk.credentials.large.secret);
    // `:id` in BENCH_PATH stands for a seeded ticket's id (e.g. /api/v1/tickets/:id).
    const seeded = await withClient(databaseUrl, (client) => client.query('SELECT id, client_id FROM tickets LIMIT 1'));
    const { id, client_id } = seeded.rows[0];
    const options = {
      url: `${profiled.url}${PATH.replace(':id', id)}`,
      connections: CONNECTIONS,
      method: METHOD,
      ...(METHOD === 'POST'
        ? { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(newTicket(client_id)) }
        : { headers }),
    };
    await autocannon({ ...options, duration: 3 }); // warm-up: the JIT; part of the profile, as in production
    const result = await autocannon({ ...options, duration: DURATION });
    if (result.non2xx || result.errors)
      throw new Error(`not every request answered 2xx: ${result.non2xx} non-2xx, ${result.errors} errors`);
    await new Promise((resolve) => {
      profiled.child.once('exit', resolve);
      profiled.child.disconnect(); // the server closes and exits: V8 writes the profile
    });
    const file = readdirSync(PROFILE_DIR).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error(`${SIDE} wrote no profile`);
    const summary = summarise(JSON.parse(readFileSync(path.join(PROFILE_DIR, file), 'utf8')));
    const version = await withClient(
      SERVER_URL,
      async (client) => (await client.query('SHOW server_version')).rows[0].server_version,
    );
    const m = machine(`PostgreSQL ${version}`);
    const lines = [
      `# Where ${SIDE === 'desk' ? 'desk' : 'the baseline server'}'s CPU goes under load (\`pnpm bench:profile\`)`,
      '',
      `Run ${new Date().toISOString()} on ${describeMachine(m)}.`,
      `\`${METHOD === 'GET' ? '' : `${METHOD} `}${PATH.replace('/api/v1', '')}\`, autocannon ${CONNECTIONS} connections for ${DURATION} s after 3 s of warm-up: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; ${TICKETS.toLocaleString('en')} tickets; ${SIDE === 'desk' ? 'desk as `pnpm bench` runs it (auth, Redis rate limit, validation, logging at info, Prisma)' : "the baseline as `pnpm bench` runs it (node:http and pg running desk's statements)"}.`,
      `Self time from V8's sampling profiler (\`--cpu-prof\`), summed by where the code lives, in % of ${SIDE === 'desk' ? 'desk' : 'the baseline'}'s busy time (${summary.busy_ms.toLocaleString('en')} ms; idle left out). The profile: \`bench/results/profile/${file}\` (not committed; open it in Chrome DevTools or speedscope).`,
      '',
      '| where | % of CPU | ms |',
      '|---|---:|---:|',
      ...summary.categories.map((c) => `| ${c.name} | ${c.percent} | ${c.ms} |`),
      '',
      'Top functions by self time:',
      '',
      '| function — where | % of CPU |',
      '|---|---:|',
      ...summary.functions.map((f) => `| ${f.name.replace(/\|/g, '\\|')} | ${f.percent} |`),
      '',
    ];
    writeFileSync(path.join(RESULTS, 'latest-profile.md'), lines.join('\n'));
    console.log(lines.join('\n'));
  } finally {
    for (const server of new Set([desk, profiled]))
      if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await withClient(SERVER_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).catch(
      (error) => console.error(`could not drop ${name}: ${error.message}`),
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
