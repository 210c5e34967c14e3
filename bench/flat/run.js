'use strict';
// Is every list flat from 10,000 rows of the tenant to a million? Each service's
// module (bench/flat/<service>.js, and events.js for the event lists every service has) seeds two
// tenants of one database with SQL, a small one and a large one of the same shape, and names the
// requests to time: each list without a filter, with each documented filter alone, and a deep
// keyset page. Every request is timed on both tenants in alternating rounds (measure.js), in the
// same process, so the ratio large ÷ small shows the tenant's size and nothing else. Target: ≥ 0.8.
//
//   BENCH_FLAT_ONLY       services to run, comma-separated (default desk,link,hr)
//   BENCH_FLAT_DURATION   seconds per side of a case (default 6, in BENCH_ROUNDS rounds)
//   BENCH_FLAT_SCALE      multiplies every seeded size (default 1; 0.1 for a quick check)
//   BENCH_FLAT_CASES      a regular expression: only the cases whose name ("GET /tickets?per_page=25&q=…") matches
//   BENCH_FLAT_SNAPSHOT   a folder: after each service's cases, a heap snapshot of it there (V8 collects all
//                         garbage first), and its memory's parts before and after: what under load is live
//                         and what is room the collector keeps (the memory bound, docs/performance.md "Memory")
//   (with fewer services or cases, another scale or desk's row settings a run is partial: it prints, writes no results)
const { randomBytes, randomUUID } = require('node:crypto');
const { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const {
  clientToken,
  databaseUrlFor,
  describeMachine,
  describeMemoryParts,
  forkServer,
  machine,
  memory,
  memoryParts,
  startService,
  stopService,
  verifyingServiceEnv,
  withClient,
  ROOT,
} = require('../support');
const { measurePair, ROUNDS, CONNECTIONS } = require('../measure');
const { explainTicketPage } = require('../desk-plans');
const { applyMigrations } = require(`${ROOT}/packages/db/dist/index.js`);
const { startTestIssuer } = require(`${ROOT}/packages/testkit/dist/index.js`);

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ONLY = (process.env.BENCH_FLAT_ONLY ?? 'desk,link,hr')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const DURATION = Number(process.env.BENCH_FLAT_DURATION ?? 6);
const SCALE = Number(process.env.BENCH_FLAT_SCALE ?? 1);
const CASES = process.env.BENCH_FLAT_CASES ? new RegExp(process.env.BENCH_FLAT_CASES) : null;
const SNAPSHOT = process.env.BENCH_FLAT_SNAPSHOT ? path.resolve(process.env.BENCH_FLAT_SNAPSHOT) : null;
// The services inherit it: Node writes a heap snapshot into the folder on SIGUSR2.
if (SNAPSHOT)
  process.env.NODE_OPTIONS =
    `${process.env.NODE_OPTIONS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${SNAPSHOT}`.trim();
const TARGET = 0.8;
const RATE_LIMIT = 1_000_000_000;
const RESULTS = path.join(ROOT, 'bench', 'results');

const admin = (sql) => withClient(SERVER_URL, (client) => client.query(sql));
const ratio = (a, b) => Math.round((a / b) * 100) / 100;
/** A case's name: its path with ids as {id}, so the small and the large tenant's requests share it. */
const nameOf = (route) =>
  `GET ${route.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '{id}')}`;

/** The modules that seed and name the lists of `service`: its own, and events.js wherever it names that service. */
function modulesOf(service) {
  const dir = __dirname;
  const mods = [];
  for (const file of ['desk.js', 'link.js', 'hr.js', 'events.js']) {
    if (!existsSync(path.join(dir, file))) continue;
    const mod = require(path.join(dir, file));
    if (mod.service === service) mods.push({ file, ...mod });
  }
  return mods;
}

/** Starts `service` on a fresh, migrated database: desk as bench/desk-server.js (it issues its own tokens), link and hr as production starts them. */
async function startFor(service, { databaseUrl, issuer, scope }) {
  if (service === 'desk') {
    const desk = await forkServer('desk-server.js', {
      BENCH_DESK: JSON.stringify({
        databaseUrl,
        redisUrl: REDIS_URL || undefined,
        rateLimitPerMinute: RATE_LIMIT,
        logLevel: 'info',
        tenants: ['flat-small', 'flat-large'],
      }),
    });
    const tenants = {};
    for (const [size, name] of [
      ['small', 'flat-small'],
      ['large', 'flat-large'],
    ]) {
      const c = desk.credentials[name];
      tenants[size] = { tenantId: c.tenantId, headers: await clientToken(desk.url, c.clientId, c.secret) };
    }
    const stop = () =>
      new Promise((resolve) => {
        if (desk.child.exitCode !== null) return resolve();
        desk.child.once('exit', resolve);
        desk.child.disconnect();
      });
    return { url: desk.url, pid: desk.child.pid, tenants, stop };
  }
  const env = { ...verifyingServiceEnv({ databaseUrl, redisUrl: REDIS_URL || undefined, issuer }), LOG_LEVEL: 'info' };
  if (service === 'link') env.CONNECTOR_ENCRYPTION_KEY = randomBytes(32).toString('base64');
  const started = await startService(service, env);
  const tenants = {};
  for (const size of ['small', 'large']) {
    const tenantId = randomUUID();
    tenants[size] = {
      tenantId,
      headers: {
        authorization: `Bearer ${issuer.token({ tenant_id: tenantId, scope, sub: `bench-flat-${service}` }, { expiresInSec: 4 * 3600 })}`,
      },
    };
  }
  return { url: started.url, pid: started.child.pid, tenants, stop: () => stopService(started) };
}

/** One GET, checked: a 200 with a page; answers its total (what the case times must exist on both sides). */
async function probe(url, headers) {
  const response = await fetch(url, { headers });
  const body = await response.json().catch(() => null);
  if (response.status !== 200 || !Array.isArray(body?.data))
    throw new Error(`${url}: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body.pagination?.total ?? null;
}

/** A heap snapshot of `pid` into SNAPSHOT, with its memory's parts before and after (the snapshot's full collection). */
async function snapshotOf(service, pid) {
  mkdirSync(SNAPSHOT, { recursive: true });
  const files = () =>
    readdirSync(SNAPSHOT).filter((file) => file.endsWith('.heapsnapshot') && file.includes(`.${pid}.`));
  const before = files().length;
  console.log(
    `${service} before its heap snapshot: RSS ${Math.round(memory(pid).rss_mb)} MB (${describeMemoryParts(memoryParts(pid))} MB)`,
  );
  process.kill(pid, 'SIGUSR2');
  // The file appears when Node starts writing it: done once its size stops changing.
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let waited = 0; files().length === before; waited += 500) {
    if (waited > 120_000) throw new Error(`${service} wrote no heap snapshot into ${SNAPSHOT} in 2 minutes`);
    await sleep(500);
  }
  const file = path.join(SNAPSHOT, files().at(-1));
  for (let size = -1; size !== statSync(file).size; await sleep(1000)) size = statSync(file).size;
  await sleep(2000);
  console.log(
    `${service} after its heap snapshot (${file}): RSS ${Math.round(memory(pid).rss_mb)} MB (${describeMemoryParts(memoryParts(pid))} MB)`,
  );
}

async function runService(service, issuer) {
  const mods = modulesOf(service);
  if (!mods.length) {
    console.log(`${service}: no bench/flat module, skipped`);
    return [];
  }
  const database = `bench_flat_${service}_${randomBytes(5).toString('hex')}`;
  const databaseUrl = databaseUrlFor(SERVER_URL, database);
  await admin(`CREATE DATABASE "${database}"`);
  let running;
  try {
    await applyMigrations(databaseUrl, path.join(ROOT, 'services', service, 'prisma/migrations'));
    const scope = [...new Set(mods.flatMap((m) => m.scope.split(' ')))].join(' ');
    running = await startFor(service, { databaseUrl, issuer, scope });
    const params = {};
    for (const mod of mods) {
      params[mod.file] = {};
      for (const size of ['small', 'large']) {
        const began = Date.now();
        params[mod.file][size] = await withClient(databaseUrl, (client) =>
          mod.seed(client, running.tenants[size].tenantId, { large: size === 'large', scale: SCALE }),
        );
        console.log(
          `${service}: ${mod.file} seeded the ${size} tenant in ${((Date.now() - began) / 1000).toFixed(1)} s`,
        );
      }
    }
    await withClient(databaseUrl, (client) => client.query('VACUUM ANALYZE'));
    await admin('CHECKPOINT').catch(() => undefined);
    const rows = [];
    for (const mod of mods) {
      const small = mod.cases(params[mod.file].small);
      const large = mod.cases(params[mod.file].large);
      if (small.length !== large.length)
        throw new Error(
          `${mod.file}: cases() answers ${small.length} requests for the small tenant, ${large.length} for the large`,
        );
      for (let i = 0; i < small.length; i++) {
        const name = nameOf(large[i]);
        if (CASES && !CASES.test(name)) continue;
        const side = (size, route) => ({
          name: `${name} (${size})`,
          target: service,
          url: `${running.url}/api/v1${route}`,
          headers: running.tenants[size].headers,
          pid: running.pid,
        });
        const totals = {
          small: await probe(side('small', small[i]).url, running.tenants.small.headers),
          large: await probe(side('large', large[i]).url, running.tenants.large.headers),
        };
        const [bigRow, smallRow] = await measurePair(side('large', large[i]), side('small', small[i]), {
          duration: DURATION,
          warmup: 1,
        });
        const row = {
          service,
          name,
          totals,
          small: smallRow,
          large: bigRow,
          rps_ratio: ratio(bigRow.requests_per_sec, smallRow.requests_per_sec),
          rss_end_mb: Math.round(memory(running.pid).rss_mb),
        };
        row.met = row.rps_ratio >= TARGET && bigRow.non_2xx === 0 && smallRow.non_2xx === 0;
        // A search's cost follows the rows its plan reads: desk's own statement EXPLAINed at both sizes.
        const q =
          service === 'desk' && large[i].startsWith('/tickets?') && new URL(large[i], 'http://x').searchParams.get('q');
        if (q)
          row.plans = await withClient(databaseUrl, async (client) => ({
            small: await explainTicketPage(client, running.tenants.small.tenantId, { q }),
            large: await explainTicketPage(client, running.tenants.large.tenantId, { q }),
          }));
        rows.push(row);
        if (row.plans)
          console.log(
            `  plan small: ${JSON.stringify(row.plans.small)}\n  plan large: ${JSON.stringify(row.plans.large)}`,
          );
        // Where the memory is after each case, against the memory bound: a part that grows names its cause.
        console.log(
          `${service} ${name}: ×${row.rps_ratio}, RSS ${row.rss_end_mb} MB (${describeMemoryParts(memoryParts(running.pid))} MB)`,
        );
      }
    }
    if (SNAPSHOT) await snapshotOf(service, running.pid);
    return rows;
  } finally {
    await running?.stop().catch((error) => console.error(error.message));
    await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch((error) =>
      console.error(`could not drop ${database}: ${error.message}`),
    );
  }
}

function markdown(report) {
  const lines = [
    '# Lists by tenant size (`pnpm bench`, issue 25)',
    '',
    `Run ${report.date} on ${describeMachine(report.machine)}.`,
    '',
    `Each list's first page (\`per_page=25\`) and its exact \`total\`, without a filter, with each documented filter alone, and a deep keyset page (\`after\`), on a small and a large tenant of the same shape in one database (bench/flat/<service>.js say what they seed). autocannon, ${report.settings.connections} connections, ${report.settings.duration_s} s per side in ${report.settings.rounds} rounds alternating large and small, after 1 s of warm-up of each; seeded sizes ×${report.settings.scale}. Target: req/s large ÷ small ≥ ${TARGET}.`,
    '',
    '| service | case | total small | total large | small req/s | small p50 / p99 ms | large req/s | large p50 / p99 ms | large ÷ small | met | RSS after MB |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|',
    ...report.rows.map(
      (r) =>
        `| ${r.service} | ${r.name.replace(/\|/g, '\\|')} | ${r.totals.small} | ${r.totals.large} | ${r.small.requests_per_sec} | ${r.small.p50_ms} / ${r.small.p99_ms} | ${r.large.requests_per_sec} | ${r.large.p50_ms} / ${r.large.p99_ms} | ${r.rps_ratio} | ${r.met ? 'yes' : 'no'} | ${r.rss_end_mb} |`,
    ),
    '',
    report.missed.length ? `Missed: ${report.missed.join('; ')}.` : 'Every case met its target.',
    '',
    "The searches' page statement as desk sends it, `EXPLAIN (ANALYZE, BUFFERS)` after the case:",
    '',
    '| case | indexes small / large | buffers small / large | execution ms small / large |',
    '|---|---|---:|---:|',
    ...report.rows
      .filter((r) => r.plans)
      .map(
        (r) =>
          `| ${r.name} | ${r.plans.small.scan} / ${r.plans.large.scan} | ${r.plans.small.buffers} / ${r.plans.large.buffers} | ${r.plans.small.execution_ms} / ${r.plans.large.execution_ms} |`,
      ),
    '',
    `Full numbers: \`${report.file}\`.`,
    '',
  ];
  return lines.join('\n');
}

async function main() {
  const startMachine = machine('');
  const issuer = await startTestIssuer();
  const rows = [];
  try {
    for (const service of ONLY) rows.push(...(await runService(service, issuer)));
  } finally {
    await issuer.close();
  }
  const postgres = await withClient(
    SERVER_URL,
    async (c) => (await c.query('SHOW server_version')).rows[0].server_version,
  );
  const date = new Date().toISOString();
  const file = `bench/results/${date.slice(0, 10)}-flat.json`;
  const report = {
    date,
    machine: { ...machine(`PostgreSQL ${postgres}`), load_average_at_start: startMachine.load_average_at_start },
    settings: {
      connections: CONNECTIONS,
      duration_s: DURATION,
      rounds: ROUNDS,
      scale: SCALE,
      target: TARGET,
      services: ONLY,
    },
    rows,
    missed: rows.filter((r) => !r.met).map((r) => `${r.service} ${r.name} ×${r.rps_ratio}`),
    file,
  };
  // A partial run (some services, smaller seeds) is a check, not the record: it prints only.
  const partial =
    SCALE !== 1 ||
    SNAPSHOT ||
    ONLY.length < 3 ||
    CASES ||
    process.env.BENCH_FLAT_DESK_ROWS ||
    process.env.BENCH_FLAT_DESK_BIG_ROWS;
  if (!partial) {
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(ROOT, file), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(RESULTS, 'latest-flat.md'), markdown(report));
  }
  console.log('\nlarge ÷ small');
  for (const r of rows)
    console.log(
      `  ${r.service.padEnd(5)} ${r.name.padEnd(70)} ×${r.rps_ratio} (${r.totals.small} vs ${r.totals.large})  ${r.met ? 'met' : 'NOT met'}`,
    );
  console.log(
    `\n${report.missed.length ? `NOT met: ${report.missed.length} of ${rows.length}` : 'every case met'}; ${partial ? 'a partial run: no results written' : `wrote ${file} and bench/results/latest-flat.md`}`,
  );
  if (
    rows.some((r) => r.small.non_2xx || r.large.non_2xx || r.small.errors || r.large.errors) ||
    (process.env.BENCH_STRICT === '1' && report.missed.length)
  )
    process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
