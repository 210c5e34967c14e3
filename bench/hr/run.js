'use strict';
// The hr payroll export benchmark (`pnpm bench:hr`): seeds two tenants, 10,000 and 100,000 employees
// with a month of timesheets each (about 220,000 and 2.2 million sheets), runs the built hr service
// as a child process exactly as production starts it, and measures GET /exports/payroll (time to
// last byte, and the hr process's peak RSS) beside PostgreSQL's own COPY (<the same query>) TO STDOUT
// (FORMAT csv) of the same rows, in the same run. Writes bench/results/<date>-hr.json and
// bench/results/latest-hr.md. Environment (all optional):
//   BENCH_DATABASE_URL  a database URL of the PostgreSQL server to use (default the local one)
//   BENCH_REDIS_URL     Redis for hr's rate limiter (default redis://127.0.0.1:6379; "" for none)
//   BENCH_RUNS          measured runs per case (default 3; the median is reported)
//   BENCH_LARGE / BENCH_SMALL  employees of the two tenants (default 100000 / 10000)
//   BENCH_RECORD_EMPLOYEES  employees of the third tenant, one of them with five years of sheets and leaves,
//                       whose working-time record, overtime account and leave account are measured (default 2000)
//   BENCH_RECORD_REQUESTS  requests per record case, one at a time (default 200; p50 and p99 reported)
const { spawn } = require('node:child_process');
const { randomBytes, randomUUID } = require('node:crypto');
const { mkdirSync, writeFileSync } = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const {
  ROOT,
  round,
  median,
  databaseUrlFor,
  withClient,
  startService,
  verifyingServiceEnv,
  memory,
  memoryParts,
  describeMemoryParts,
  serviceMetrics,
  resetPeak,
  machine,
  describeMachine,
} = require('../support');
const { applyMigrations, openDatabase } = require(`${ROOT}/packages/db/dist/index.js`);
const { startTestIssuer } = require(`${ROOT}/packages/testkit/dist/index.js`);
const { payrollRowsInOrder } = require(`${ROOT}/services/hr/dist/exports/payroll-export.repository.js`);
const { periodOf } = require(`${ROOT}/services/hr/dist/exports/payroll-row.js`);
const { DEFAULT_WAGE_TYPES } = require(`${ROOT}/services/hr/dist/payroll/payroll-settings.schemas.js`);

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LARGE = Number(process.env.BENCH_LARGE ?? 100_000);
const SMALL = Number(process.env.BENCH_SMALL ?? 10_000);
const PERIOD = '2026-10';
const RECORD_EMPLOYEES = Number(process.env.BENCH_RECORD_EMPLOYEES ?? 2000);
// The employee whose record is read: five years of sheets (2022–2026) under one contract since 2022.
const RECORD_YEARS = { from: '2022-01-01', to: '2026-12-31' };
const RECORD_CASES = [
  { name: 'working-time record, a year (JSON)', path: 'working-time?from=2026-01-01&to=2026-12-31' },
  { name: 'working-time record, a year (CSV)', path: 'working-time?from=2026-01-01&to=2026-12-31&format=csv' },
  { name: 'overtime account, the 60th month', path: 'time-account?period=2026-12' },
  { name: 'leave account, the fifth year', path: 'leave-account?year=2026' },
];
// Requests per record case, one at a time, after a tenth as many unmeasured (p50 and p99 of these).
const RECORD_REQUESTS = Number(process.env.BENCH_RECORD_REQUESTS ?? 200);
const MIGRATIONS = path.join(ROOT, 'services/hr/prisma/migrations');
const RESULTS = path.join(ROOT, 'bench/results');
/** V8's young and old generation (MB committed, and the old one's used) as a service's /metrics gives them. */
async function heapSpaces(serviceUrl) {
  const value = await serviceMetrics(serviceUrl);
  const mb = (name, space) => round(value(name, { space }) / 1048576, 1);
  return {
    new_space_mb: mb('nodejs_heap_space_size_total_bytes', 'new'),
    old_space_mb: mb('nodejs_heap_space_size_total_bytes', 'old'),
    old_space_used_mb: mb('nodejs_heap_space_size_used_bytes', 'old'),
  };
}

/** memoryParts rounded to 0.1 MB. */
const roundParts = (parts) => Object.fromEntries(Object.entries(parts).map(([part, mb]) => [part, round(mb, 1)]));

// Targets: within 3× of COPY; peak RSS under TARGET_RSS_MB and no larger at 10× the data.
const TARGET_RATIO = 3;
const TARGET_RSS_MB = 150;

/**
 * One tenant's month, by SQL (no HTTP: seeding is not what is measured). Every employee works
 * Monday–Friday of October 2026 (22 days), 08:00–12:00 and 12:30–16:30 normal; every 4th also an hour
 * of overtime, every 9th two hours on call on Saturdays and every 13th a training hour on Wednesdays.
 * Every 10th has an approved vacation week, every 17th two approved sick days, every 23rd a requested
 * (unpaid) leave, and every 50th a vacation from 29 October to 3 November (clipped to October).
 */
async function seedTenant(client, tenantId, employees) {
  await client.query(
    `INSERT INTO employees (tenant_id, user_id, personnel_number, name)
     SELECT $1, gen_random_uuid(), n::text, 'Employee ' || n FROM generate_series(1, $2::int) AS n`,
    [tenantId, employees],
  );
  // 10,000 employees' month a statement: the list_counts triggers hold a statement's new rows in
  // memory (as arrays), which a single statement of 2.2 million sheets would make large.
  for (let first = 1; first <= employees; first += 10_000) {
    await client.query(
      `INSERT INTO timesheets (tenant_id, user_id, date, worked_minutes, break_minutes, warnings)
       SELECT $1, e.user_id, d::date, 480, 30, '[]'
         FROM employees e CROSS JOIN generate_series('2026-10-01'::date, '2026-10-31'::date, interval '1 day') AS d
        WHERE e.tenant_id = $1 AND e.personnel_number::int BETWEEN $2 AND $3
          AND (extract(isodow FROM d) < 6 OR (e.personnel_number::int % 9 = 0 AND extract(isodow FROM d) = 6))`,
      [tenantId, first, first + 9_999],
    );
  }
  await client.query(
    `INSERT INTO timesheet_entries (timesheet_id, position, start_minute, end_minute, minutes, category)
     SELECT t.id, v.position, v.start_minute, v.end_minute, v.end_minute - v.start_minute, v.category
       FROM timesheets t
       JOIN employees e ON e.tenant_id = t.tenant_id AND e.user_id = t.user_id
       CROSS JOIN (VALUES (0, 480, 720, 'normal', 'weekday'), (1, 750, 990, 'normal', 'weekday'), (2, 990, 1050, 'overtime', 'every4'),
                          (2, 990, 1050, 'training', 'every13'), (0, 600, 720, 'on_call', 'saturday'))
         AS v(position, start_minute, end_minute, category, rule)
      WHERE t.tenant_id = $1
        AND CASE v.rule
              WHEN 'weekday' THEN extract(isodow FROM t.date) < 6
              WHEN 'every4' THEN extract(isodow FROM t.date) < 6 AND e.personnel_number::int % 4 = 0 AND extract(isodow FROM t.date) <> 3
              WHEN 'every13' THEN extract(isodow FROM t.date) = 3 AND e.personnel_number::int % 13 = 0
              ELSE extract(isodow FROM t.date) = 6
            END`,
    [tenantId],
  );
  await client.query(
    `INSERT INTO leaves (tenant_id, user_id, type, status, start_date, end_date, working_days)
     SELECT $1, e.user_id, l.type, l.status, l.start_date, l.end_date, l.working_days
       FROM employees e
       CROSS JOIN (VALUES ('vacation', 'approved', '2026-10-12'::date, '2026-10-16'::date, 5, 10),
                          ('sick', 'approved', '2026-10-20'::date, '2026-10-21'::date, 2, 17),
                          ('unpaid', 'requested', '2026-10-26'::date, '2026-10-26'::date, 1, 23),
                          ('vacation', 'approved', '2026-10-29'::date, '2026-11-03'::date, 4, 50))
         AS l(type, status, start_date, end_date, working_days, every)
      WHERE e.tenant_id = $1 AND e.personnel_number::int % l.every = 0`,
    [tenantId],
  );
  // Each leave's working days, as hr stores them beside the leave (what leave accounts count).
  await client.query(
    `INSERT INTO leave_days (leave_id, tenant_id, user_id, day)
     SELECT l.id, l.tenant_id, l.user_id, d::date
       FROM leaves l CROSS JOIN generate_series(l.start_date, l.end_date, interval '1 day') AS d
      WHERE l.tenant_id = $1 AND extract(isodow FROM d) < 6`,
    [tenantId],
  );
  const { rows } = await client.query('SELECT count(*)::int AS sheets FROM timesheets WHERE tenant_id = $1', [
    tenantId,
  ]);
  return rows[0].sheets;
}

/**
 * The third tenant: a month for everyone (seedTenant), and for personnel number 1 every weekday of
 * five years and every third week's weekend, employment since 2022 and two contracts (Berlin, 40 h on
 * five days, 30 vacation days; from July 2024 28), so the leave account spreads a year over two.
 * Leaves of the five years: an approved vacation week starting the 1st of every other month (the
 * one of December 2026 planned, after today), a sick leave in March every year and one on two days of
 * each August vacation (those days return to the account, §9 BUrlG), a requested vacation week in
 * November 2026, and an adjustment a year. Answers that employee's id.
 */
async function seedRecordTenant(client, tenantId, employees) {
  const sheets = await seedTenant(client, tenantId, employees);
  const { rows } = await client.query(
    `UPDATE employees SET employment_start = $2::date WHERE tenant_id = $1 AND personnel_number = '1' RETURNING id, user_id`,
    [tenantId, RECORD_YEARS.from],
  );
  const [{ id, user_id: userId }] = rows;
  await client.query(
    `INSERT INTO contracts (tenant_id, employee_id, valid_from, weekly_minutes, working_days, vacation_days_per_year, state)
     VALUES ($1, $2, $3::date, 2400, ARRAY['mon','tue','wed','thu','fri'], 30, 'DE-BE'),
            ($1, $2, '2024-07-01', 2400, ARRAY['mon','tue','wed','thu','fri'], 28, 'DE-BE')`,
    [tenantId, id, RECORD_YEARS.from],
  );
  await client.query(
    `INSERT INTO leave_adjustments (tenant_id, employee_id, year, days, reason)
     SELECT $1, $2, y, 1.5, 'bench: agreed extra days' FROM generate_series(extract(year FROM $3::date)::int, extract(year FROM $4::date)::int) AS y`,
    [tenantId, id, RECORD_YEARS.from, RECORD_YEARS.to],
  );
  const added = await client.query(
    `INSERT INTO timesheets (tenant_id, user_id, date, worked_minutes, break_minutes, warnings)
     SELECT $1, $2, d::date, 480 + (extract(doy FROM d)::int % 7) * 10, 30, '[]'
       FROM generate_series($3::date, $4::date, interval '1 day') AS d
      WHERE (extract(isodow FROM d) < 6 OR extract(week FROM d)::int % 3 = 0)
        AND NOT (d >= '2026-10-01' AND d < '2026-11-01')`,
    [tenantId, userId, RECORD_YEARS.from, RECORD_YEARS.to],
  );
  await client.query(
    `INSERT INTO timesheet_entries (timesheet_id, position, start_minute, end_minute, minutes, category)
     SELECT t.id, 0, 480, 480 + t.worked_minutes, t.worked_minutes, 'normal'
       FROM timesheets t WHERE t.tenant_id = $1 AND t.user_id = $2 AND NOT EXISTS (SELECT 1 FROM timesheet_entries e WHERE e.timesheet_id = t.id)`,
    [tenantId, userId],
  );
  await client.query(
    `WITH l AS (
       INSERT INTO leaves (tenant_id, user_id, type, status, start_date, end_date, working_days)
       SELECT $1, $2, v.type, v.status, v.start_date, v.end_date,
              (SELECT count(*)::int FROM generate_series(v.start_date, v.end_date, interval '1 day') AS w WHERE extract(isodow FROM w) < 6)
         FROM (SELECT 'vacation' AS type, 'approved' AS status, s::date AS start_date, s::date + 4 AS end_date
                 FROM generate_series($3::date, $4::date, interval '1 month') AS s WHERE extract(month FROM s)::int % 2 = 0
               UNION ALL
               SELECT 'sick', 'approved', make_date(y, 3, 10), make_date(y, 3, 12)
                 FROM generate_series(extract(year FROM $3::date)::int, extract(year FROM $4::date)::int) AS y
               UNION ALL
               SELECT 'sick', 'approved', make_date(y, 8, 3), make_date(y, 8, 4)
                 FROM generate_series(extract(year FROM $3::date)::int, extract(year FROM $4::date)::int) AS y
               UNION ALL
               SELECT 'vacation', 'requested', '2026-11-16'::date, '2026-11-20'::date) AS v
       RETURNING id, start_date, end_date)
     INSERT INTO leave_days (leave_id, tenant_id, user_id, day)
     SELECT l.id, $1, $2, d::date FROM l CROSS JOIN generate_series(l.start_date, l.end_date, interval '1 day') AS d WHERE extract(isodow FROM d) < 6`,
    [tenantId, userId, RECORD_YEARS.from, RECORD_YEARS.to],
  );
  const { rows: days } = await client.query(
    'SELECT count(*)::int AS n FROM leave_days WHERE tenant_id = $1 AND user_id = $2',
    [tenantId, userId],
  );
  return { sheets: sheets + added.rowCount, leaveDays: days[0].n, employeeId: id };
}

/** Nearest rank: the smallest sample at or above the fraction `p` of the ascending `sorted`. */
function percentile(sorted, p) {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}

/** One request's time to last byte (the body is read, not kept). */
async function timed(url, authorization) {
  const started = process.hrtime.bigint();
  const response = await fetch(url, { headers: { authorization } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** The export's own SQL with its parameters written in, since COPY takes no parameters. */
function inlined(sql, params) {
  const literal = (value) =>
    Array.isArray(value) ? `ARRAY[${value.map(literal).join(', ')}]` : `'${String(value).replace(/'/g, "''")}'`;
  return sql.replace(/\$(\d+)/g, (_, index) => literal(params[Number(index) - 1]));
}

/** hr as production runs it: `node services/hr/dist/index.js`, configured by environment. */
function startHr(databaseUrl, issuer) {
  // Production requires the key that seals webhook secrets (none are used here).
  return startService('hr', {
    ...verifyingServiceEnv({ databaseUrl, redisUrl: REDIS_URL, issuer }),
    LOG_LEVEL: 'info',
    WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  });
}

/** Downloads the export; time to last byte, bytes and lines. The body is counted, not kept. */
function download(url, authorization) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let bytes = 0;
    let lines = 0;
    let tail = Buffer.alloc(0);
    http
      .get(url, { headers: { authorization }, agent: false }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
        res.on('data', (chunk) => {
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
          tail = Buffer.concat([tail, chunk]).subarray(-200);
        });
        res.on('end', () =>
          resolve({
            ms: Number(process.hrtime.bigint() - started) / 1e6,
            bytes,
            lines,
            last: tail.toString().trimEnd().split('\r\n').at(-1),
          }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** PostgreSQL writing the same rows as CSV itself: `psql -c "COPY (...) TO STDOUT (FORMAT csv)"`. */
function copy(databaseUrl, sql) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let bytes = 0;
    let lines = 0;
    const psql = spawn(
      'psql',
      ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', databaseUrl, '-c', `COPY (${sql}) TO STDOUT (FORMAT csv)`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    psql.stdout.on('data', (chunk) => {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
    });
    psql.on('error', reject);
    psql.on('close', (code) =>
      code === 0
        ? resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, bytes, lines })
        : reject(new Error(`psql exited with ${code}`)),
    );
  });
}

function markdown(report) {
  const m = report.machine;
  const verdict = (ok) => (ok ? 'yes' : '**no**');
  return [
    '# hr payroll export benchmark',
    '',
    `Run ${report.date} on ${describeMachine(m)}.`,
    `\`GET /exports/payroll?period=${PERIOD}\` (CSV) from the built hr service (\`node services/hr/dist/index.js\`, NODE_ENV=production, ES256 token, rate limiter, request logging at info), one request at a time; ${report.settings.runs} measured runs per case after one unmeasured, median reported.`,
    "Baseline: PostgreSQL's own `COPY (<the export's query, parameters written in>) TO STDOUT (FORMAT csv)` through `psql`, same rows, same run.",
    "Peak RSS: the hr process's VmHWM from /proc, reset (clear_refs) before each size, so it is the peak while that size was exported; both sizes are exported once, unmeasured, before either is measured.",
    '',
    '| tenant | employees | sheets | rows | hr time to last byte ms | COPY ms | hr ÷ COPY | hr MB sent | hr peak RSS MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...report.sizes.map(
      (s) =>
        `| ${s.tenant} | ${s.employees.toLocaleString('en')} | ${s.sheets.toLocaleString('en')} | ${s.rows.toLocaleString('en')} | ${s.hr_ms} | ${s.copy_ms} | ${s.ratio} | ${s.hr_mb} | ${s.peak_rss_mb} |`,
    ),
    '',
    `hr's RSS before any export: ${report.idle_rss_mb} MB right after start, ${report.warm_rss_mb} MB after one ordinary request (GET /payroll/settings: token verification, rate limiter, Prisma's first query). The export's own share is the peak minus that.`,
    '',
    ...report.warm_up.map(
      (w) =>
        `After the unmeasured ${w.after} export: RSS ${w.rss_mb} MB (${describeMemoryParts(w.parts_mb)} MB; V8's new space ${w.heap.new_space_mb} MB, old space ${w.heap.old_space_mb} MB of which ${w.heap.old_space_used_mb} used).`,
    ),
    '',
    `- Within ${TARGET_RATIO}× of COPY: ${verdict(report.targets.within_ratio)} (${report.sizes.map((s) => `×${s.ratio}`).join(', ')}).`,
    `- Peak RSS under ${TARGET_RSS_MB} MB: ${verdict(report.targets.rss_under_limit)}; no larger at 10× the data: ${verdict(report.targets.rss_flat)} (${report.sizes.map((s) => `${s.peak_rss_mb} MB`).join(' vs ')}).`,
    `- hr sent the same number of rows as COPY in every run: ${verdict(report.targets.same_rows)}.`,
    '',
    `Working-time record, overtime account and leave account of one employee with five years of sheets and leaves (${RECORD_YEARS.from} – ${RECORD_YEARS.to}, two contracts) in a tenant of ${report.records.employees.toLocaleString('en')} employees (${report.records.sheets.toLocaleString('en')} sheets; the employee's leave days: ${report.records.leave_days.toLocaleString('en')}), time to last byte, ${report.records.requests} requests one at a time after ${report.records.warmup} unmeasured:`,
    '',
    '| case | request | p50 ms | p99 ms | max ms |',
    '|---|---|---:|---:|---:|',
    ...report.records.cases.map(
      (c) => `| ${c.case} | \`GET /employees/:id/${c.path}\` | ${c.p50_ms} | ${c.p99_ms} | ${c.max_ms} |`,
    ),
    '',
    `Full numbers: \`${report.file}\`.`,
    '',
  ].join('\n');
}

async function main() {
  const startLoad = machine('');
  const name = `bench_hr_${randomBytes(6).toString('hex')}`;
  const databaseUrl = databaseUrlFor(SERVER_URL, name);
  let hr;
  let issuer;
  await withClient(SERVER_URL, (c) => c.query(`CREATE DATABASE "${name}"`));
  const cleanUp = async () => {
    if (hr && hr.child.exitCode === null) {
      await new Promise((resolve) => {
        const timer = setTimeout(() => hr.child.kill('SIGKILL'), 10_000);
        hr.child.once('exit', () => (clearTimeout(timer), resolve()));
        hr.child.kill('SIGTERM');
      });
    }
    await issuer?.close();
    await withClient(SERVER_URL, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).catch((error) =>
      console.error(`could not drop ${name}: ${error.message}`),
    );
  };
  process.once('SIGINT', () => cleanUp().finally(() => process.exit(130)));
  try {
    console.log(`database ${name}: migrating`);
    await applyMigrations(databaseUrl, MIGRATIONS);
    const tenants = [
      { tenant: 'small', employees: SMALL, tenantId: randomUUID() },
      { tenant: 'large', employees: LARGE, tenantId: randomUUID() },
    ];
    const recordTenant = { tenantId: randomUUID() };
    const postgres = await withClient(databaseUrl, async (client) => {
      for (const t of tenants) {
        const started = Date.now();
        t.sheets = await seedTenant(client, t.tenantId, t.employees);
        console.log(
          `seeded ${t.tenant}: ${t.employees} employees, ${t.sheets} timesheets in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      }
      const started = Date.now();
      recordTenant.seeded = await seedRecordTenant(client, recordTenant.tenantId, RECORD_EMPLOYEES);
      console.log(
        `seeded records: ${RECORD_EMPLOYEES} employees, ${recordTenant.seeded.sheets} timesheets in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      await client.query('VACUUM ANALYZE');
      return (await client.query('SHOW server_version')).rows[0].server_version;
    });

    issuer = await startTestIssuer();
    hr = await startHr(databaseUrl, issuer);
    const pid = hr.child.pid;
    const idle = memory(pid);
    // One ordinary request first (token verification, the rate limiter, Prisma's first query, which
    // loads its query compiler): what the process holds before any export.
    const settings = await fetch(`${hr.url}/api/v1/payroll/settings`, {
      headers: { authorization: `Bearer ${issuer.token({ tenant_id: tenants[0].tenantId, scope: 'read:payroll' })}` },
    });
    if (!settings.ok) throw new Error(`GET /payroll/settings answered ${settings.status}`);
    const warm = memory(pid);
    console.log(
      `hr (pid ${pid}) at ${hr.url}, RSS ${round(idle.rss_mb, 1)} MB idle, ${round(warm.rss_mb, 1)} MB after a first request`,
    );

    const url = `${hr.url}/api/v1/exports/payroll?period=${PERIOD}`;
    const authorizationOf = (t) => `Bearer ${issuer.token({ tenant_id: t.tenantId, scope: 'read:payroll' })}`;
    // hr's own statement, compiled by its query builder (no connection is opened for that).
    const compiler = openDatabase(databaseUrl);
    const sqlOf = (t) => {
      const { sql, parameters } = payrollRowsInOrder(
        compiler.db,
        t.tenantId,
        periodOf(PERIOD),
        DEFAULT_WAGE_TYPES,
      ).compile();
      return inlined(sql, parameters);
    };
    // Unmeasured first passes of both sizes before either is measured: PostgreSQL's cache, hr's
    // JIT, and V8's heap. How high V8 lets the old generation run before a full collection varies
    // from run to run, and the first long export can leave it higher (V8's pages grew in the large
    // size's first pass when it came after the small size's measured runs, and its measured runs
    // then added nothing; the next run grew far less). Measured the old way, that
    // step landed in the large size's peak alone; now both sizes are measured on the same heap, and
    // the parts printed here show where each one's memory is.
    const warmUp = [];
    for (const t of tenants) {
      await download(url, authorizationOf(t));
      await copy(databaseUrl, sqlOf(t));
      warmUp.push({
        after: t.tenant,
        rss_mb: round(memory(pid).rss_mb, 1),
        parts_mb: roundParts(memoryParts(pid)),
        heap: await heapSpaces(hr.url),
      });
      const last = warmUp.at(-1);
      console.log(
        `after the unmeasured ${t.tenant} export: RSS ${last.rss_mb} MB (${describeMemoryParts(last.parts_mb)}; V8 new space ${last.heap.new_space_mb}, old space ${last.heap.old_space_mb} of which used ${last.heap.old_space_used_mb} MB)`,
      );
    }

    const sizes = [];
    for (const t of tenants) {
      const authorization = authorizationOf(t);
      const sql = sqlOf(t);
      const reset = resetPeak(pid);
      let sampledPeak = memory(pid).rss_mb;
      const partsBefore = memoryParts(pid);
      // Where the memory is at the highest sample (smaps read again at each new high).
      let partsAtPeak = partsBefore;
      const sampler = setInterval(() => {
        const rss = memory(pid).rss_mb;
        if (rss > sampledPeak) [sampledPeak, partsAtPeak] = [rss, memoryParts(pid)];
      }, 10);
      const hrRuns = [];
      const copyRuns = [];
      for (let run = 0; run < RUNS; run++) {
        hrRuns.push(await download(url, authorization));
        copyRuns.push(await copy(databaseUrl, sql));
      }
      clearInterval(sampler);
      const peak = reset ? Math.max(memory(pid).hwm_mb, sampledPeak) : sampledPeak;
      const row = {
        tenant: t.tenant,
        employees: t.employees,
        sheets: t.sheets,
        rows: copyRuns[0].lines,
        hr_ms: round(median(hrRuns.map((r) => r.ms))),
        copy_ms: round(median(copyRuns.map((r) => r.ms))),
        hr_mb: round(hrRuns[0].bytes / 1024 ** 2, 1),
        copy_mb: round(copyRuns[0].bytes / 1024 ** 2, 1),
        peak_rss_mb: round(peak, 1),
        peak_from: reset ? 'VmHWM after clear_refs (and 10 ms VmRSS samples)' : '10 ms VmRSS samples',
        memory_parts_mb: {
          before: roundParts(partsBefore),
          at_highest_sample: roundParts(partsAtPeak),
          after: roundParts(memoryParts(pid)),
        },
        heap_after: await heapSpaces(hr.url),
        // hr writes a header line; COPY does not.
        same_rows:
          hrRuns.every((r) => r.lines - 1 === copyRuns[0].lines) &&
          copyRuns.every((r) => r.lines === copyRuns[0].lines),
        last_line: hrRuns[0].last,
        hr_runs_ms: hrRuns.map((r) => round(r.ms)),
        copy_runs_ms: copyRuns.map((r) => round(r.ms)),
      };
      row.ratio = round(row.hr_ms / row.copy_ms, 2);
      sizes.push(row);
      console.log(
        `${t.tenant}: ${row.rows} rows, hr ${row.hr_ms} ms (${row.hr_mb} MB), COPY ${row.copy_ms} ms, ×${row.ratio}, hr peak RSS ${row.peak_rss_mb} MB`,
      );
      for (const [when, parts] of Object.entries(row.memory_parts_mb))
        console.log(`  hr's memory ${when.replaceAll('_', ' ')}: ${describeMemoryParts(parts)} MB`);
      console.log(
        `  V8 after: new space ${row.heap_after.new_space_mb}, old space ${row.heap_after.old_space_mb} of which used ${row.heap_after.old_space_used_mb} MB`,
      );
    }

    const records = [];
    const recordWarmup = Math.max(1, Math.ceil(RECORD_REQUESTS / 10));
    const recordAuth = `Bearer ${issuer.token({ tenant_id: recordTenant.tenantId, scope: 'read:hr' })}`;
    for (const c of RECORD_CASES) {
      const url = `${hr.url}/api/v1/employees/${recordTenant.seeded.employeeId}/${c.path}`;
      for (let run = 0; run < recordWarmup; run++) await timed(url, recordAuth); // unmeasured: cache, JIT
      const runs = [];
      for (let run = 0; run < RECORD_REQUESTS; run++) runs.push(await timed(url, recordAuth));
      const sorted = [...runs].sort((a, b) => a - b);
      const row = {
        case: c.name,
        path: c.path,
        p50_ms: round(percentile(sorted, 0.5)),
        p99_ms: round(percentile(sorted, 0.99)),
        max_ms: round(sorted.at(-1)),
        mean_ms: round(runs.reduce((a, b) => a + b, 0) / runs.length),
      };
      if (c.path.startsWith('leave-account')) {
        // What the account came to (taken, returned, carried over…): the seeding did give it work.
        row.answer = await (await fetch(url, { headers: { authorization: recordAuth } })).json();
      }
      records.push(row);
      console.log(`${c.name}: p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms, max ${row.max_ms} ms`);
    }

    const date = new Date().toISOString();
    const file = `bench/results/${date.slice(0, 10)}-hr.json`;
    const report = {
      date,
      machine: { ...machine(`PostgreSQL ${postgres}`), load_average_at_start: startLoad.load_average_at_start },
      settings: {
        runs: RUNS,
        period: PERIOD,
        employees_small: SMALL,
        employees_large: LARGE,
        redis: Boolean(REDIS_URL),
      },
      idle_rss_mb: round(idle.rss_mb, 1),
      warm_up: warmUp,
      warm_rss_mb: round(warm.rss_mb, 1),
      sizes,
      records: {
        employees: RECORD_EMPLOYEES,
        sheets: recordTenant.seeded.sheets,
        leave_days: recordTenant.seeded.leaveDays,
        years: RECORD_YEARS,
        requests: RECORD_REQUESTS,
        warmup: recordWarmup,
        cases: records,
      },
      targets: {
        within_ratio: sizes.every((s) => s.ratio <= TARGET_RATIO),
        rss_under_limit: sizes.every((s) => s.peak_rss_mb < TARGET_RSS_MB),
        // "No larger": within 5% (the allocator's and the JIT's own noise).
        rss_flat: sizes[1].peak_rss_mb <= sizes[0].peak_rss_mb * 1.05,
        same_rows: sizes.every((s) => s.same_rows),
      },
      file,
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(ROOT, file), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(RESULTS, 'latest-hr.md'), markdown(report));
    console.log(`\nwrote ${file} and bench/results/latest-hr.md`);
    if (!report.targets.same_rows) process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

module.exports = { seedTenant, seedRecordTenant, inlined };
