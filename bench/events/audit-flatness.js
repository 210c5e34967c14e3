'use strict';
// Part 3 of `pnpm bench:events`: is GET /audit-events flat from 100k to 10M events,
// and the retention sweep's throughput and longest lock. One desk (retention sweep off:
// EVENTS_RETENTION_INTERVAL_MS=0, so the bench runs it itself) on a fresh database with two
// tenants of the same shape, seeded with SQL (seed-audit.js): the smallest size and the largest.
// Each case (the first page, per_page=25, and its exact total, without a filter and with each
// filter alone, and one deep keyset page) is timed on both tenants in alternating rounds, as the
// flat lists are (bench/measure.js): measured one size after the other, minutes apart, the two
// halves met different machines (a 2-CPU VM whose host takes CPU from it at times), and the same
// code read ×0.66 in one run and ×1.57 in the next. Ratio: req/s of the large tenant over the
// small one's (target ≥ 0.8). Then the sweep (days 400) over both: 30/430 of the rows are past it.
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Pool } = require('pg');
const { ROOT, clientToken, round, withClient } = require('../support');
const { seedAuditEvents, SPAN_DAYS } = require('./seed-audit');
const { measurePair, ROUNDS } = require('../measure');

const SIZES = (process.env.BENCH_AUDIT_SIZES ?? '100000,10000000').split(',').map(Number);
const DURATION = Number(process.env.BENCH_AUDIT_DURATION ?? 6);
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

/**
 * The case on each tenant: 200 with the exact total first, then measure.js's alternating rounds
 * (a second's warm-up of each, BENCH_ROUNDS rounds of DURATION / rounds seconds; req/s over all
 * rounds, p50 and p99 the median round's), at CONNECTIONS connections.
 */
async function timedPair(desk, tenants, name, pathOf) {
  const url = (tenant) => `${desk.url}/api/v1${pathOf(tenant)}`;
  const totals = [];
  for (const tenant of tenants) {
    const response = await fetch(url(tenant), { headers: tenant.auth });
    const body = await response.json();
    if (response.status !== 200)
      throw new Error(`${pathOf(tenant)} answered ${response.status}: ${JSON.stringify(body)}`);
    totals.push(body.pagination.total);
  }
  const sides = tenants.map((tenant) => ({
    name,
    target: tenant.label,
    url: url(tenant),
    headers: tenant.auth,
    connections: CONNECTIONS,
  }));
  const rows = await measurePair(sides[0], sides[1], { duration: DURATION, warmup: 1 });
  return rows.map((row, i) => ({
    req_per_sec: row.requests_per_sec,
    p50_ms: row.p50_ms,
    p99_ms: row.p99_ms,
    non2xx: row.non_2xx,
    errors: row.errors,
    total: totals[i],
  }));
}

/** A second tenant with an administrator client, made by desk's own operator command; answers its id and a token. */
async function secondTenant(deskUrl, databaseUrl, slug) {
  const out = execFileSync(process.execPath, [path.join(ROOT, 'services/desk/dist/cli/tenant-create.js'), slug], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const created = JSON.parse(out.trim().split('\n').pop());
  return { tenantId: created.tenant_id, auth: await clientToken(deskUrl, created.client_id, created.client_secret) };
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
  const large = {
    label: 'large',
    tenantId: await withClient(
      databaseUrl,
      async (client) =>
        (await client.query('SELECT tenant_id::text FROM api_clients WHERE client_id = $1', [desk.clientIdOfToken]))
          .rows[0].tenant_id,
    ),
    auth: desk.auth,
  };
  const small = { label: 'small', ...(await secondTenant(desk.url, databaseUrl, 'bench-audit-small')) };
  const tenants = [small, large];
  const [smallSize, largeSize] = [SIZES[0], SIZES[SIZES.length - 1]];
  const sizes = [];
  try {
    for (const [tenant, size] of [
      [small, smallSize],
      [large, largeSize],
    ]) {
      const seeded = await withClient(databaseUrl, (client) =>
        seedAuditEvents(client, tenant.tenantId, { total: size }),
      );
      console.log(`   ${size.toLocaleString('en')} events seeded in ${round(seeded.seconds, 1)} s`);
      tenant.seeded = seeded;
      tenant.afterId = await withClient(
        databaseUrl,
        async (client) =>
          (
            await client.query(
              `SELECT id::text FROM events WHERE tenant_id = $1 ORDER BY occurred_at DESC, seq DESC OFFSET $2 LIMIT 1`,
              [tenant.tenantId, Math.floor(size * 0.9)],
            )
          ).rows[0].id,
      );
      sizes.push({ events: size, seed_seconds: round(seeded.seconds, 1), cases: {} });
    }
    const names = cases(small.seeded, small.afterId).map(([name]) => name);
    for (const [index, name] of names.entries()) {
      const results = await timedPair(desk, tenants, name, (tenant) => cases(tenant.seeded, tenant.afterId)[index][1]);
      for (const [i, result] of results.entries()) {
        sizes[i].cases[name] = result;
        console.log(
          `   ${sizes[i].events.toLocaleString('en')} ${name}: ${result.req_per_sec} req/s, p50 ${result.p50_ms} ms, total ${result.total}`,
        );
      }
    }
  } finally {
    await stopService(desk);
  }
  const ratios = Object.fromEntries(
    Object.keys(sizes[0].cases).map((name) => [
      name,
      round(sizes[1].cases[name].req_per_sec / sizes[0].cases[name].req_per_sec, 2),
    ]),
  );
  console.log(
    `   retention sweep over ${(smallSize + largeSize).toLocaleString('en')} events (${SPAN_DAYS - 400} of ${SPAN_DAYS} days past 400)`,
  );
  const retention = await sweep(databaseUrl);
  const exact = await withClient(databaseUrl, async (client) => {
    const counts = { counted: 0, counter: 0 };
    for (const { tenantId } of tenants) {
      counts.counted += Number(
        (await client.query('SELECT count(*) AS c FROM events WHERE tenant_id = $1', [tenantId])).rows[0].c,
      );
      counts.counter += Number(
        (
          await client.query(
            `SELECT count FROM list_counts WHERE tenant_id = $1 AND list = 'audit-events' AND dimension = 'all'`,
            [tenantId],
          )
        ).rows[0].count,
      );
    }
    return { ...counts, exact: counts.counted === counts.counter };
  });
  return {
    sizes,
    ratios,
    retention: { ...retention, ...exact },
    settings: { sizes: [smallSize, largeSize], duration_s: DURATION, rounds: ROUNDS, connections: CONNECTIONS },
  };
}

function auditMarkdown(audit) {
  const names = Object.keys(audit.ratios);
  const [small, large] = [audit.sizes[0], audit.sizes[audit.sizes.length - 1]];
  return [
    `## 3. \`GET /api/v1/audit-events\` from ${small.events.toLocaleString('en')} to ${large.events.toLocaleString('en')} events, and the retention sweep`,
    '',
    `Two tenants of one database seeded with SQL (bench/events/seed-audit.js: same fractions per filter value at every size, spread over ${SPAN_DAYS} days; counter triggers off during the bulk insert and the counters rebuilt by one GROUP BY, the migration's backfill statement; then VACUUM ANALYZE and a CHECKPOINT). autocannon, ${audit.settings.connections} connections, ${audit.settings.duration_s} s per case and tenant in ${audit.settings.rounds} rounds alternating the tenants, first page of 25 with its exact total. Seeding: ${audit.sizes.map((s) => `${s.events.toLocaleString('en')} in ${s.seed_seconds} s`).join(', ')}.`,
    '',
    `| case | req/s at ${small.events.toLocaleString('en')} | p50 ms | req/s at ${large.events.toLocaleString('en')} | p50 ms | ratio (target ≥ 0.8) |`,
    '|---|---:|---:|---:|---:|---:|',
    ...names.map(
      (name) =>
        `| ${name} | ${small.cases[name].req_per_sec} | ${small.cases[name].p50_ms} | ${large.cases[name].req_per_sec} | ${large.cases[name].p50_ms} | ${audit.ratios[name]} |`,
    ),
    '',
    `Retention sweep (EVENTS_RETENTION_DAYS=400) over both tenants' ${(small.events + large.events).toLocaleString('en')} events: ${audit.retention.events_removed.toLocaleString('en')} removed in ${audit.retention.seconds} s (${audit.retention.events_per_sec.toLocaleString('en')} events/s), ${audit.retention.batches} batches; the longest batch (one statement and transaction: the longest any of its locks was held) ${audit.retention.longest_batch_ms} ms. Counter afterwards ${audit.retention.counter.toLocaleString('en')}, count(*) ${audit.retention.counted.toLocaleString('en')}: ${audit.retention.exact ? 'exact' : '**not exact**'}.`,
    '',
  ].join('\n');
}

module.exports = { auditFlatness, auditMarkdown };
