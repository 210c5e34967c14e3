'use strict';
// Part 3 of `pnpm bench:events`: GET /audit-events flat from 100k to 10M events (issue 25 point 3),
// and the retention sweep's throughput and longest lock. One desk (retention sweep off:
// EVENTS_RETENTION_INTERVAL_MS=0, so the bench runs it itself) on a fresh database; its bootstrap
// tenant seeded with SQL (seed-audit.js) to each size in turn (a top-up: same shape), then each
// case timed with autocannon: the first page (per_page=25) and its exact total, without a filter
// and with each filter alone, and one deep keyset page. Ratio: req/s at the largest size over
// req/s at the smallest (target ≥ 0.8). Then the sweep (days 400) over the largest size: 30/430
// of the rows are past it.
const path = require('node:path');
const autocannon = require('autocannon');
const { Pool } = require('pg');
const { ROOT, round, withClient } = require('../support');
const { seedAuditEvents, SPAN_DAYS } = require('./seed-audit');

const SIZES = (process.env.BENCH_AUDIT_SIZES ?? '100000,10000000').split(',').map(Number);
const DURATION = Number(process.env.BENCH_AUDIT_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_AUDIT_CONNECTIONS ?? 2);

function cases(params, afterId) {
  const q = (value) => encodeURIComponent(value);
  return [
    ['no filter', '/audit-events?per_page=25'],
    ['resource_type', `/audit-events?per_page=25&resource_type=${q(params.resourceType)}`],
    ['resource_id', `/audit-events?per_page=25&resource_id=${q(params.resourceId)}`],
    ['actor', `/audit-events?per_page=25&actor=${q(params.actor)}`],
    ['from', `/audit-events?per_page=25&from=${q(params.from)}`],
    ['to', `/audit-events?per_page=25&to=${q(params.to)}`],
    ['from + to', `/audit-events?per_page=25&from=${q(params.from)}&to=${q(params.to)}`],
    ['deep keyset page', `/audit-events?per_page=25&after=${afterId}`],
  ];
}

async function timed(desk, urlPath) {
  // Correctness first: 200 with the exact total.
  const response = await fetch(`${desk.url}/api/v1${urlPath}`, { headers: desk.auth });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`${urlPath} answered ${response.status}: ${JSON.stringify(body)}`);
  // A second's warm-up (caches, prepared statements), then the measurement.
  await autocannon({ url: `${desk.url}/api/v1${urlPath}`, headers: desk.auth, connections: CONNECTIONS, duration: 1 });
  const result = await autocannon({ url: `${desk.url}/api/v1${urlPath}`, headers: desk.auth, connections: CONNECTIONS, duration: DURATION });
  return { req_per_sec: round(result.requests.average, 1), p50_ms: result.latency.p50, p99_ms: result.latency.p99, non2xx: result.non2xx, errors: result.errors, total: body.pagination.total };
}

/** Runs the sweep of @msp/events (its build) over its own pool, as a service would; answers its figures. */
async function sweep(databaseUrl) {
  const { createEventsRetention } = require(path.join(ROOT, 'packages/events/dist'));
  const { rawSqlOver } = require(path.join(ROOT, 'packages/db/dist'));
  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    const retention = createEventsRetention({ db: rawSqlOver(pool), logger: quiet, days: 400, intervalMs: 0 });
    const result = await retention.sweep();
    return {
      events_removed: result.events,
      deliveries_removed: result.deliveries,
      batches: result.batches,
      seconds: round(result.ms / 1000, 1),
      events_per_sec: Math.round(result.events / (result.ms / 1000)),
      longest_batch_ms: round(result.longestBatchMs, 1),
    };
  } finally {
    await pool.end();
  }
}

/** `startDesk(databaseUrl, env)` and `signIn(desk)` are run.js's; answers the report's `audit` member. */
async function auditFlatness({ freshDatabase, startDesk, signIn, stopService }) {
  const databaseUrl = await freshDatabase('audit');
  const desk = await signIn(await startDesk(databaseUrl, { EVENTS_RETENTION_INTERVAL_MS: '0' }));
  const tenantId = await withClient(databaseUrl, async (client) => (await client.query('SELECT tenant_id::text FROM api_clients WHERE client_id = $1', [desk.clientIdOfToken])).rows[0].tenant_id);
  const sizes = [];
  try {
    let already = 0;
    for (const size of SIZES) {
      const seeded = await withClient(databaseUrl, (client) => seedAuditEvents(client, tenantId, { total: size, already }));
      already = size;
      console.log(`   ${size.toLocaleString('en')} events seeded in ${round(seeded.seconds, 1)} s`);
      const afterId = await withClient(databaseUrl, async (client) =>
        (await client.query(`SELECT id::text FROM events WHERE tenant_id = $1 ORDER BY occurred_at DESC, seq DESC OFFSET $2 LIMIT 1`, [tenantId, Math.floor(size * 0.9)])).rows[0].id);
      const results = {};
      for (const [name, urlPath] of cases(seeded, afterId)) {
        results[name] = await timed(desk, urlPath);
        console.log(`   ${size.toLocaleString('en')} ${name}: ${results[name].req_per_sec} req/s, p50 ${results[name].p50_ms} ms, total ${results[name].total}`);
      }
      sizes.push({ events: size, seed_seconds: round(seeded.seconds, 1), cases: results });
    }
  } finally {
    await stopService(desk);
  }
  const [small, large] = [sizes[0], sizes[sizes.length - 1]];
  const ratios = Object.fromEntries(Object.keys(small.cases).map((name) => [name, round(large.cases[name].req_per_sec / small.cases[name].req_per_sec, 2)]));
  console.log(`   retention sweep over ${large.events.toLocaleString('en')} events (${SPAN_DAYS - 400} of ${SPAN_DAYS} days past 400)`);
  const retention = await sweep(databaseUrl);
  const exact = await withClient(databaseUrl, async (client) => {
    const counted = Number((await client.query('SELECT count(*) AS c FROM events WHERE tenant_id = $1', [tenantId])).rows[0].c);
    const counter = Number((await client.query(`SELECT count FROM list_counts WHERE tenant_id = $1 AND list = 'audit-events' AND dimension = 'all'`, [tenantId])).rows[0].count);
    return { counted, counter, exact: counted === counter };
  });
  return { sizes, ratios, retention: { ...retention, ...exact }, settings: { sizes: SIZES, duration_s: DURATION, connections: CONNECTIONS } };
}

function auditMarkdown(audit) {
  const names = Object.keys(audit.ratios);
  const [small, large] = [audit.sizes[0], audit.sizes[audit.sizes.length - 1]];
  return [
    `## 3. \`GET /api/v1/audit-events\` from ${small.events.toLocaleString('en')} to ${large.events.toLocaleString('en')} events, and the retention sweep`,
    '',
    `One tenant seeded with SQL (bench/events/seed-audit.js: same fractions per filter value at every size, spread over ${SPAN_DAYS} days; counter triggers off during the bulk insert and the counters rebuilt by one GROUP BY, the migration's backfill statement). autocannon, ${audit.settings.connections} connections, ${audit.settings.duration_s} s per case, first page of 25 with its exact total. Seeding: ${audit.sizes.map((s) => `${s.events.toLocaleString('en')} in ${s.seed_seconds} s`).join(', ')}.`,
    '',
    `| case | req/s at ${small.events.toLocaleString('en')} | p50 ms | req/s at ${large.events.toLocaleString('en')} | p50 ms | ratio (target ≥ 0.8) |`,
    '|---|---:|---:|---:|---:|---:|',
    ...names.map((name) => `| ${name} | ${small.cases[name].req_per_sec} | ${small.cases[name].p50_ms} | ${large.cases[name].req_per_sec} | ${large.cases[name].p50_ms} | ${audit.ratios[name]} |`),
    '',
    `Retention sweep (EVENTS_RETENTION_DAYS=400) over ${large.events.toLocaleString('en')} events: ${audit.retention.events_removed.toLocaleString('en')} removed in ${audit.retention.seconds} s (${audit.retention.events_per_sec.toLocaleString('en')} events/s), ${audit.retention.batches} batches; the longest batch (one statement and transaction: the longest any of its locks was held) ${audit.retention.longest_batch_ms} ms. Counter afterwards ${audit.retention.counter.toLocaleString('en')}, count(*) ${audit.retention.counted.toLocaleString('en')}: ${audit.retention.exact ? 'exact' : '**not exact**'}.`,
    '',
  ].join('\n');
}

module.exports = { auditFlatness, auditMarkdown };
