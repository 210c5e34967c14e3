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
//   BENCH_ROUNDS      rounds (default 8); each runs both sides, in turns A B, B A, … (measurePair's `abba`)
//   BENCH_DURATION    seconds per side and round (default 4), after 4 s of warm-up of each
//   BENCH_TICKETS     tickets of the tenant (default 10,000)
//   BENCH_B_LOG_LEVEL side B's log level (default info): `warn` leaves out the request line
//   BENCH_B_REDIS_URL side B's rate-limit store (default Redis, as A); "" counts in its memory
//   BENCH_B_FLAGS     side B's Node flags instead of the images' (e.g. the CMD's flags before a change)
//   BENCH_B_BASELINE  1: side B is pnpm bench's baseline server instead (node:http and pg running
//                     desk's statements; bench/baseline-server.js): what desk costs beyond them
//   BENCH_DATABASE_URL, BENCH_REDIS_URL as for pnpm bench
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const { applyMigrations } = require('../packages/db/dist/index.js');
const { CONNECTIONS, measurePair } = require('./measure');
const { seedTenant } = require('./seed');
const { ROOT, clientToken, databaseUrlFor, forkServer, withClient } = require('./support');

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PATH = process.env.BENCH_PATH ?? '/api/v1/tickets/:id';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const DURATION = Number(process.env.BENCH_DURATION ?? 4);
const TICKETS = Number(process.env.BENCH_TICKETS ?? 10_000);
const OTHER = path.resolve(process.argv[2] ?? ROOT);
const BASELINE = process.env.BENCH_B_BASELINE === '1';
const B_FLAGS =
  process.env.BENCH_B_FLAGS === undefined ? undefined : process.env.BENCH_B_FLAGS.split(/\s+/).filter(Boolean);

/** One side for measurePair: its server, its own token, the path with `:id` rotating over the seeded tickets. */
async function sideOf(target, server, ids, issuer = server) {
  return {
    name: `GET ${PATH}`,
    target,
    url: server.url,
    headers: await clientToken(issuer.url, server.credentials.bench.clientId, server.credentials.bench.secret),
    paths: PATH.includes(':id') ? ids.map((id) => PATH.replace(':id', id)) : [PATH],
    pid: server.child.pid,
  };
}

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
        redisUrl:
          (side === 'B' && process.env.BENCH_B_REDIS_URL !== undefined ? process.env.BENCH_B_REDIS_URL : REDIS_URL) ||
          undefined,
        rateLimitPerMinute: 1_000_000_000,
        logLevel: (side === 'B' && process.env.BENCH_B_LOG_LEVEL) || 'info',
        // Both desks' clients belong to one tenant (ensureApiClient finds it by name), so both read its tickets.
        tenants: ['bench'],
      });
    const a = await forkServer('desk-server.js', { BENCH_DESK: settings('A') });
    servers.push(a);
    const b = BASELINE
      ? {
          ...(await forkServer(
            'baseline-server.js',
            { BENCH_BASELINE: JSON.stringify({ databaseUrl, tenantId: a.credentials.bench.tenantId }) },
            { root: OTHER },
          )),
          credentials: a.credentials,
        }
      : await forkServer(
          'desk-server.js',
          { BENCH_DESK: settings('B') },
          { root: OTHER, ...(B_FLAGS ? { flags: B_FLAGS } : {}) },
        );
    servers.push(b);
    if (a.credentials.bench.tenantId !== b.credentials.bench.tenantId)
      throw new Error('the two desks did not share a tenant');
    await seedTenant(databaseUrl, a.credentials.bench.tenantId, TICKETS);
    await withClient(databaseUrl, (client) => client.query('VACUUM ANALYZE'));
    const ids = (
      await withClient(databaseUrl, (client) => client.query('SELECT id FROM tickets ORDER BY id LIMIT 1000'))
    ).rows.map((row) => row.id);
    // The baseline checks no token; it is sent all the same (A's desk issues it), as pnpm bench sends it.
    const sides = [await sideOf('A', a, ids), await sideOf('B', b, ids, BASELINE ? a : b)];
    console.log(
      `A: ${ROOT}\nB: ${OTHER}${BASELINE ? ', the baseline server' : ''}${process.env.BENCH_B_LOG_LEVEL ? `, log level ${process.env.BENCH_B_LOG_LEVEL}` : ''}${process.env.BENCH_B_REDIS_URL === '' ? ', rate limit in memory' : ''}${B_FLAGS ? `, Node flags ${B_FLAGS.join(' ') || '(none)'}` : ''}`,
    );
    console.log(`GET ${PATH}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per side\n`);
    const [rowA, rowB] = await measurePair(sides[0], sides[1], {
      duration: DURATION * ROUNDS,
      warmup: 4,
      rounds: ROUNDS,
      abba: true,
      cpu: true,
    });
    for (const row of [rowA, rowB])
      if (row.non_2xx || row.errors)
        throw new Error(`side ${row.target}: ${row.non_2xx} non-2xx answers, ${row.errors} errors`);
    for (let round = 0; round < ROUNDS; round++) {
      console.log(
        `round ${round + 1}: ` +
          [rowA, rowB]
            .map(
              (row) =>
                `${row.target} ${row.rounds[round].requests_per_sec} req/s, server ${row.rounds[round].server_cpu_us} µs, machine ${row.rounds[round].machine_cpu_us} µs`,
            )
            .join(' | '),
      );
    }
    const bCheaper = rowB.rounds.filter((round, i) => round.server_cpu_us < rowA.rounds[i].server_cpu_us).length;
    console.log('');
    for (const row of [rowA, rowB])
      console.log(
        `${row.target}: ${row.requests_per_sec} req/s, server ${row.server_cpu_us} µs per request, machine ${row.machine_cpu_us} µs per request`,
      );
    const ratio = (key) => (rowB[key] / rowA[key]).toFixed(3);
    console.log(
      `B ÷ A: req/s ×${ratio('requests_per_sec')}, the server's CPU ×${ratio('server_cpu_us')}, the machine's ×${ratio('machine_cpu_us')}; B's server cheaper in ${bCheaper} of ${ROUNDS} rounds`,
    );
  } finally {
    for (const server of servers) server.child.kill('SIGKILL');
    await withClient(SERVER_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).catch(
      (error) => console.error(`could not drop ${name}: ${error.message}`),
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
