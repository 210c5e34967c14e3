'use strict';
// `pnpm bench:heap`: what the images' heap bound (--max-old-space-size, the Dockerfile's CMD)
// costs and buys. Two desks on one database, the images' Node and flags, one
// of them without the bound (Node then sizes the old generation from the host's memory, far more
// than a pod's limit allows). The same cases in alternating rounds
// (measure.js), RSS before and after each, and at the end where each one's memory is. Prints a
// table; writes nothing. Environment (optional): BENCH_DATABASE_URL, BENCH_REDIS_URL,
// BENCH_DURATION (default 10 s per side), BENCH_LARGE (tickets, default 100000), BENCH_HEAP_FLAGS
// (the other desk's Node flags instead of the images' without the bound, as
// '--max-semi-space-size=4 --max-old-space-size=256': to weigh another young generation the same way),
// BENCH_HEAP_ENV (JSON: environment for the other desk over the images', as '{"LD_PRELOAD":""}' for
// glibc's malloc instead of the images' jemalloc; the flags then default to the images' own).
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const { applyMigrations } = require('../packages/db/dist/index.js');
const { seedTenant } = require('./seed');
const {
  clientToken,
  databaseUrlFor,
  describeMemoryParts,
  forkServer,
  memory,
  memoryParts,
  newTicket,
  serverNode,
  serviceMetrics,
  withClient,
} = require('./support');
const { measurePair } = require('./measure');
const path = require('node:path');

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const LARGE = Number(process.env.BENCH_LARGE ?? 100_000);
const BOUND = serverNode().flags.find((flag) => flag.startsWith('--max-old-space-size='));
const FLAGS_GIVEN = process.env.BENCH_HEAP_FLAGS
  ? process.env.BENCH_HEAP_FLAGS.split(/\s+/).filter(Boolean)
  : undefined;
const OTHER_ENV = JSON.parse(process.env.BENCH_HEAP_ENV ?? '{}');
// The other desk runs on the flags given; else, when only its environment differs, on the images'
// own; else on the images' without the bound.
const OTHER_FLAGS =
  FLAGS_GIVEN ??
  (process.env.BENCH_HEAP_ENV ? serverNode().flags : serverNode().flags.filter((flag) => flag !== BOUND));
const OTHER = [FLAGS_GIVEN?.join(' '), process.env.BENCH_HEAP_ENV].filter(Boolean).join(' ') || 'unbounded';

/** Where a process's resident memory is: V8's heap pages (256 KiB mappings, pooled ones too) and the rest, with V8's own view from /metrics. */
async function detail(pid, url) {
  const parts = memoryParts(pid);
  const v8Pages = parts['V8 256 KiB pages'];
  const value = await serviceMetrics(url);
  const metric = (name) => Math.round(value(name) / 1048576);
  const gcs = ['minor', 'major', 'incremental']
    .map(
      (kind) =>
        `${kind} ${value('nodejs_gc_duration_seconds_count', { kind }) || 0} in ${(value('nodejs_gc_duration_seconds_sum', { kind }) || 0).toFixed(2)} s`,
    )
    .join(', ');
  return `RSS ${memory(pid).rss_mb} MB (${describeMemoryParts(parts)}): V8 256 KiB pages resident ${Math.round(v8Pages)} MB; V8 heapTotal ${metric('nodejs_heap_size_total_bytes')}, heapUsed ${metric('nodejs_heap_size_used_bytes')}, external ${metric('nodejs_external_memory_bytes')} MB; GC since start: ${gcs}`;
}

const admin = (sql) => withClient(SERVER_URL, (client) => client.query(sql));

async function main() {
  const name = `bench_heap_${randomBytes(6).toString('hex')}`;
  const databaseUrl = databaseUrlFor(SERVER_URL, name);
  await admin(`CREATE DATABASE "${name}"`);
  const children = [];
  try {
    await applyMigrations(databaseUrl, path.resolve(__dirname, '../services/desk/prisma/migrations'));
    const config = (tenant) => ({
      BENCH_DESK: JSON.stringify({
        databaseUrl,
        redisUrl: REDIS_URL || undefined,
        rateLimitPerMinute: 1_000_000_000,
        logLevel: 'info',
        tenants: [tenant],
      }),
    });
    if (!BOUND) throw new Error("the Dockerfile's CMD sets no --max-old-space-size: nothing to compare");
    const open = await forkServer('desk-server.js', { ...config('large'), ...OTHER_ENV }, { flags: OTHER_FLAGS });
    const bounded = await forkServer('desk-server.js', config('large'));
    children.push(open.child, bounded.child);
    const seeded = await seedTenant(databaseUrl, open.credentials.large.tenantId, LARGE);
    const vacuum = new Client({ connectionString: databaseUrl });
    await vacuum.connect();
    await vacuum.query('VACUUM ANALYZE');
    await vacuum.end();
    const sides = [
      {
        label: OTHER,
        server: open,
        headers: await clientToken(open.url, open.credentials.large.clientId, open.credentials.large.secret),
      },
      {
        label: "the images' flags",
        server: bounded,
        headers: await clientToken(bounded.url, bounded.credentials.large.clientId, bounded.credentials.large.secret),
      },
    ];
    console.log(
      `RSS after start: ${OTHER} ${memory(open.child.pid).rss_mb} MB, the images' flags (${serverNode().flags.join(' ')}) ${memory(bounded.child.pid).rss_mb} MB`,
    );
    const cases = [
      { name: 'GET /tickets?per_page=25', path: '/api/v1/tickets?per_page=25' },
      { name: 'GET /tickets?status=open', path: '/api/v1/tickets?per_page=25&status=open' },
      { name: 'GET /tickets?q=printer netw', path: '/api/v1/tickets?per_page=25&q=printer%20netw' },
      { name: 'GET /tickets/:id', paths: seeded.ticketIds.map((id) => `/api/v1/tickets/${id}`) },
      { name: 'GET /tickets?per_page=100', path: '/api/v1/tickets?per_page=100' },
      { name: 'POST /tickets', path: '/api/v1/tickets', method: 'POST', body: newTicket(seeded.clientIds[0]) },
    ];
    const rows = [];
    for (const c of cases) {
      const side = (s) => ({
        name: c.name,
        target: s === sides[0] ? 'other' : 'images',
        url: `${s.server.url}${c.path ?? ''}`,
        method: c.method,
        body: c.body,
        headers: s.headers,
        paths: c.paths,
        pid: s.server.child.pid,
      });
      const [a, b] = await measurePair(side(sides[0]), side(sides[1]));
      rows.push({ name: c.name, a, b });
    }
    console.log(
      `\n| case | req/s ${OTHER} | req/s the images' flags | ratio | p99 ms ${OTHER} / the images' | RSS end MB ${OTHER} / the images' |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const { name: n, a, b } of rows) {
      console.log(
        `| ${n} | ${a.requests_per_sec} | ${b.requests_per_sec} | ×${Math.round((b.requests_per_sec / a.requests_per_sec) * 100) / 100} | ${a.p99_ms} / ${b.p99_ms} | ${a.rss_end_mb} / ${b.rss_end_mb} |`,
      );
    }
    for (const s of sides) console.log(`${s.label}: ${await detail(s.server.child.pid, s.server.url)}`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
