'use strict';
// `pnpm bench:side-by-side [<other checkout>]`: two desks on one database, the same request in
// alternating rounds, and what each costs per request in CPU: the server's own (/proc/<pid>/stat) and the
// whole machine's (/proc/stat: desk, PostgreSQL, Redis and the client together). For a lever worth
// a few per cent, where pnpm bench's req/s scatter by more than that from run to run.
//
// Side A is this checkout's desk; side B the other checkout's (built: `pnpm install && pnpm build`
// there; a `git worktree` of another commit), or this one again when none is given: an A/A run,
// which shows what the machine's noise alone makes of the difference. Both run as pnpm bench runs
// desk (bench/desk-server.js: auth, the Redis rate limit, validation, the request line at info,
// metrics), on the images' Node and flags. Environment (optional):
//   BENCH_PATH        the request (default /api/v1/tickets/:id; `:id` rotates over 1,000 tickets)
//   BENCH_ROUNDS      rounds (default 8); each runs both sides, in turns A B, B A, …
//   BENCH_DURATION    seconds per side and round (default 4), after 4 s of warm-up of each
//   BENCH_TICKETS     tickets of the tenant (default 10,000)
//   BENCH_B_LOG_LEVEL side B's log level (default info): `warn` leaves out the request line
//   BENCH_B_REDIS_URL side B's rate-limit store (default Redis, as A); "" counts in its memory
//   BENCH_B_BASELINE  1: side B is pnpm bench's baseline server instead (node:http and pg running
//                     desk's statements; bench/baseline-server.js): what desk costs beyond them
//   BENCH_DATABASE_URL, BENCH_REDIS_URL as for pnpm bench
const { randomBytes } = require('node:crypto');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const autocannon = require('autocannon');
const { applyMigrations } = require('../packages/db/dist/index.js');
const { seedTenant } = require('./seed');
const { ROOT, clientToken, cpuSeconds, databaseUrlFor, forkServer, withClient } = require('./support');

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PATH = process.env.BENCH_PATH ?? '/api/v1/tickets/:id';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const DURATION = Number(process.env.BENCH_DURATION ?? 4);
const TICKETS = Number(process.env.BENCH_TICKETS ?? 10_000);
const OTHER = path.resolve(process.argv[2] ?? ROOT);
const BASELINE = process.env.BENCH_B_BASELINE === '1';

/** CPU seconds the whole machine has been busy (every CPU, idle and I/O wait left out), from /proc/stat. */
function machineBusySeconds() {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [, , , idle, iowait] = ticks;
  return (ticks.reduce((sum, t) => sum + t, 0) - idle - iowait) / 100;
}

/** One side's load: its own token, the path with `:id` rotating over the seeded tickets. */
async function loadFor(server, ids, issuer = server) {
  const headers = await clientToken(issuer.url, server.credentials.bench.clientId, server.credentials.bench.secret);
  const paths = PATH.includes(':id') ? ids.map((id) => PATH.replace(':id', id)) : [PATH];
  let next = 0;
  return { url: server.url, connections: 10, headers, requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) }] };
}

/** One side for one round: its requests, and the CPU seconds its server and the whole machine used. */
async function measure(side) {
  const server0 = cpuSeconds(side.server.child.pid);
  const machine0 = machineBusySeconds();
  const result = await autocannon({ ...side.load, duration: DURATION });
  if (result.non2xx || result.errors) throw new Error(`side ${side.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const requests = result.requests.total;
  return {
    requests,
    seconds: result.duration,
    server: cpuSeconds(side.server.child.pid) - server0,
    machine: machineBusySeconds() - machine0,
  };
}

const perRequest = (seconds, requests) => ((seconds / requests) * 1e6).toFixed(1);

async function main() {
  const name = `bench_sides_${randomBytes(6).toString('hex')}`;
  const databaseUrl = databaseUrlFor(SERVER_URL, name);
  await withClient(SERVER_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
  const servers = [];
  try {
    await applyMigrations(databaseUrl, path.join(ROOT, 'services/desk/prisma/migrations'));
    const settings = (side) =>
      JSON.stringify({
        databaseUrl,
        redisUrl: (side === 'B' && process.env.BENCH_B_REDIS_URL !== undefined ? process.env.BENCH_B_REDIS_URL : REDIS_URL) || undefined,
        rateLimitPerMinute: 1_000_000_000,
        logLevel: (side === 'B' && process.env.BENCH_B_LOG_LEVEL) || 'info',
        // Both desks' clients belong to one tenant (ensureApiClient finds it by name), so both read its tickets.
        tenants: ['bench'],
      });
    const a = await forkServer('desk-server.js', { BENCH_DESK: settings('A') });
    servers.push(a);
    const b = BASELINE
      ? { ...(await forkServer('baseline-server.js', { BENCH_BASELINE: JSON.stringify({ databaseUrl, tenantId: a.credentials.bench.tenantId }) }, { root: OTHER })), credentials: a.credentials }
      : await forkServer('desk-server.js', { BENCH_DESK: settings('B') }, { root: OTHER });
    servers.push(b);
    if (a.credentials.bench.tenantId !== b.credentials.bench.tenantId) throw new Error('the two desks did not share a tenant');
    await seedTenant(databaseUrl, a.credentials.bench.tenantId, TICKETS);
    await withClient(databaseUrl, (client) => client.query('VACUUM ANALYZE'));
    const ids = (await withClient(databaseUrl, (client) => client.query('SELECT id FROM tickets ORDER BY id LIMIT 1000'))).rows.map((row) => row.id);
    const sides = [
      { name: 'A', server: a, load: await loadFor(a, ids) },
      // The baseline checks no token; it is sent all the same (A's desk issues it), as pnpm bench sends it.
      { name: 'B', server: b, load: await loadFor(b, ids, BASELINE ? a : b) },
    ];
    console.log(`A: ${ROOT}\nB: ${OTHER}${BASELINE ? ', the baseline server' : ''}${process.env.BENCH_B_LOG_LEVEL ? `, log level ${process.env.BENCH_B_LOG_LEVEL}` : ''}${process.env.BENCH_B_REDIS_URL === '' ? ', rate limit in memory' : ''}`);
    console.log(`GET ${PATH}, 10 connections, ${ROUNDS} rounds of ${DURATION} s per side\n`);
    for (const side of sides) await autocannon({ ...side.load, duration: 4 }); // warm-up: the JIT
    const totals = { A: [], B: [] };
    let bCheaper = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      const row = {};
      for (const side of order) {
        row[side.name] = await measure(side);
        totals[side.name].push(row[side.name]);
      }
      if (row.B.server / row.B.requests < row.A.server / row.A.requests) bCheaper++;
      console.log(
        `round ${round + 1}: ` +
          ['A', 'B'].map((s) => `${s} ${Math.round(row[s].requests / row[s].seconds)} req/s, server ${perRequest(row[s].server, row[s].requests)} µs, machine ${perRequest(row[s].machine, row[s].requests)} µs`).join(' | '),
      );
    }
    const sum = (rows, key) => rows.reduce((total, row) => total + row[key], 0);
    const summary = Object.fromEntries(
      ['A', 'B'].map((s) => {
        const rows = totals[s];
        const requests = sum(rows, 'requests');
        return [s, { rps: requests / sum(rows, 'seconds'), server: (sum(rows, 'server') / requests) * 1e6, machine: (sum(rows, 'machine') / requests) * 1e6 }];
      }),
    );
    console.log('');
    for (const s of ['A', 'B']) console.log(`${s}: ${Math.round(summary[s].rps)} req/s, server ${summary[s].server.toFixed(1)} µs per request, machine ${summary[s].machine.toFixed(1)} µs per request`);
    console.log(
      `B ÷ A: req/s ×${(summary.B.rps / summary.A.rps).toFixed(3)}, the server's CPU ×${(summary.B.server / summary.A.server).toFixed(3)}, the machine's ×${(summary.B.machine / summary.A.machine).toFixed(3)}; ` +
        `B's server cheaper in ${bCheaper} of ${ROUNDS} rounds`,
    );
  } finally {
    for (const server of servers) server.child.kill('SIGKILL');
    await withClient(SERVER_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).catch((error) => console.error(`could not drop ${name}: ${error.message}`));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
