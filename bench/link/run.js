'use strict';
// The link sync benchmark (`pnpm bench:link`): a SCIM 2.0 directory (SCIMMY behind scimmy-routers,
// the same library the tests use) of 10,000 users and 500 groups, and the built link service as a
// child process exactly as production starts it (NODE_ENV=production, its pg-boss queue, the
// directory allowed through OUTBOUND_ALLOWLIST). Three cases, in one run:
//   first  the first sync, into an empty mirror (10,000 inserts);
//   full   repeat full syncs with nothing changed (the directory's ServiceProviderConfig says
//          filter.supported false meanwhile), alternating with a bare client reading every page of
//          /Users and /Groups as link does: target ≤ 1.3× the bare client;
//   delta  repeat delta syncs with nothing changed (filter.supported true), alternating with a bare
//          client asking the same delta question (ServiceProviderConfig, then /Users and /Groups
//          with the run's own `filter=meta.lastModified gt "<delta_since>"`): target ≤ 1.1×.
// link's time is its run's started_at → finished_at; its peak RSS is measured during each sync.
// Writes bench/results/<date>-link.json and bench/results/latest-link.md. Environment (all optional):
//   BENCH_DATABASE_URL  a database URL of the PostgreSQL server to use (default the local one)
//   BENCH_REDIS_URL     Redis for link's rate limiter (default redis://127.0.0.1:6379; "" for none)
//   BENCH_USERS / BENCH_GROUPS  size of the directory (default 10000 / 500)
//   BENCH_RUNS          measured full syncs (default 3; medians are reported)
//   BENCH_DELTA_RUNS    measured delta syncs (default 9: each takes well under a second, and the
//                       ratio of so short a run needs more samples on a shared machine)
//   BENCH_STRICT        1: a missed target fails the run
const { randomBytes, randomUUID } = require('node:crypto');
const { mkdirSync, writeFileSync } = require('node:fs');
const http = require('node:http');
const { Client } = require('pg');
const os = require('node:os');
const path = require('node:path');
const { ROOT, round, median, databaseUrlFor, withClient, startService, stopService, verifyingServiceEnv, memory, resetPeak } = require('../support');
const LINK = path.join(ROOT, 'services/link');
const { applyMigrations } = require(`${ROOT}/packages/db/dist/index.js`);
const { startTestIssuer } = require(`${ROOT}/packages/testkit/dist/index.js`);
// The directory's libraries are link's dev dependencies (ES modules; Node ≥ 20.19 requires them).
const express = require(require.resolve('express', { paths: [LINK] }));
const scimmyRouters = require(require.resolve('scimmy-routers', { paths: [LINK] }));
const SCIMMYRouters = scimmyRouters.default;
const { SCIMMY } = scimmyRouters;

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const GROUPS = Number(process.env.BENCH_GROUPS ?? 500);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DELTA_RUNS = Number(process.env.BENCH_DELTA_RUNS ?? 9);
const PAGE = 100;
const TARGET = { full: 1.3, delta: 1.1 };
const RESULTS = path.join(ROOT, 'bench/results');

/** The directory: users and groups in memory, SCIMMY doing the protocol. */
async function startDirectory() {
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const users = [];
  const groups = [];
  // Stamped a day ago: a delta (changes since the last run began, less link's 60 s margin) finds none.
  const created = new Date(Date.now() - 24 * 3600_000).toISOString();
  for (let g = 0; g < GROUPS; g++) groups.push({ id: randomUUID(), displayName: `Group ${g}`, members: [], meta: { resourceType: 'Group', created, lastModified: created } });
  for (let u = 0; u < USERS; u++) {
    const user = {
      id: randomUUID(),
      externalId: `ext-${u}`,
      userName: `user${u}@contoso.example`,
      displayName: `User ${u}`,
      name: { givenName: 'User', familyName: String(u) },
      emails: [{ value: `user${u}@contoso.example`, type: 'work', primary: true }],
      active: u % 50 !== 0,
      meta: { resourceType: 'User', created, lastModified: created },
    };
    users.push(user);
    groups[u % GROUPS].members.push({ value: user.id });
  }
  // SCIMMY turns every resource egress returns into a schema instance before it cuts the page:
  // 10,000 users × 100 pages would measure SCIMMY, not link. So the directory cuts the page itself
  // and tells SCIMMY the total (its ListResponse then reports startIndex 1, which link does not read).
  const page = (target, rows) => {
    const { startIndex = 1, count = 20 } = target.constraints ?? {};
    target.constraints = { ...target.constraints, startIndex: 1, totalResults: rows.length };
    return rows.slice(startIndex - 1, startIndex - 1 + count);
  };
  const declare = (resource, store) =>
    SCIMMY.Resources.declare(resource)
      .egress((target) => (target.id ? store.find((row) => row.id === target.id) : page(target, target.filter ? target.filter.match(store) : store)))
      .ingress(() => {
        throw new SCIMMY.Types.Error(403, null, 'read-only directory');
      })
      .degress(() => {
        throw new SCIMMY.Types.Error(403, null, 'read-only directory');
      });
  declare(SCIMMY.Resources.User, users);
  declare(SCIMMY.Resources.Group, groups);

  const app = express();
  // startIndex and count are integers (RFC 7644 §3.4.2.4); SCIMMY ignores the strings Express parses.
  app.use((req, _res, next) => {
    const query = { ...req.query };
    for (const key of ['startIndex', 'count']) if (typeof query[key] === 'string' && /^\d+$/.test(query[key])) query[key] = Number(query[key]);
    Object.defineProperty(req, 'query', { value: query });
    next();
  });
  app.use(
    '/scim/v2',
    new SCIMMYRouters({
      type: 'bearer',
      handler: (req) => {
        if (req.header('Authorization') !== `Bearer ${token}`) throw new Error('Authorization failed');
        return 'bench';
      },
    }),
  );
  const server = http.createServer(app);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/scim/v2`,
    token,
    /** What ServiceProviderConfig says of filter.supported (scimmy-routers says true). */
    setFilterSupported: (supported) => SCIMMY.Config.set('filter', { supported, maxResults: 200 }),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function getJson(directory, pathAndQuery) {
  const response = await fetch(`${directory.baseUrl}${pathAndQuery}`, { headers: { authorization: `Bearer ${directory.token}`, accept: 'application/scim+json' } });
  if (!response.ok) throw new Error(`the directory answered ${pathAndQuery} with ${response.status}`);
  return response.json();
}

/** Every page of an endpoint (optionally filtered), read by a bare client as link pages it. */
async function readPages(directory, endpoint, filter) {
  let startIndex = 1;
  let seen = 0;
  const query = filter ? `&filter=${encodeURIComponent(filter)}` : '';
  for (;;) {
    const page = await getJson(directory, `${endpoint}?startIndex=${startIndex}&count=${PAGE}${query}`);
    const resources = page.Resources ?? [];
    seen += resources.length;
    startIndex += resources.length;
    if (!resources.length || startIndex > page.totalResults) return seen;
  }
}

/** A bare client's full read: every page of /Users and /Groups. */
async function bareFull(directory) {
  const started = process.hrtime.bigint();
  const users = await readPages(directory, '/Users');
  const groups = await readPages(directory, '/Groups');
  return { users, groups, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

/** A bare client's delta question: the requests link makes for a delta, with the same filter. */
async function bareDelta(directory, since) {
  const filter = `meta.lastModified gt ${JSON.stringify(since)}`;
  const started = process.hrtime.bigint();
  await getJson(directory, '/ServiceProviderConfig');
  const users = await readPages(directory, '/Users', filter);
  const groups = await readPages(directory, '/Groups', filter);
  return { users, groups, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

/** link as production runs it: `node services/link/dist/index.js`, configured by environment. */
function startLink(databaseUrl, issuer) {
  return startService('link', {
    ...verifyingServiceEnv({ databaseUrl, redisUrl: REDIS_URL, issuer }),
    CONNECTOR_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // Required in production since webhook secrets are sealed at rest.
    WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // The directory runs on this machine: production refuses loopback unless allowed.
    OUTBOUND_ALLOWLIST: '127.0.0.1',
    OUTBOUND_TIMEOUT_MS: '30000',
    LOG_LEVEL: 'warn',
  });
}

async function api(link, authorization, method, urlPath, body) {
  const response = await fetch(`${link.url}/api/v1${urlPath}`, {
    method,
    headers: { authorization, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = response.status === 204 ? undefined : await response.json();
  if (!response.ok) throw new Error(`${method} ${urlPath} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

/**
 * Starts a sync and waits for its end. The wait asks PostgreSQL (link's sync_runs row), not link:
 * polling link's API would put the bench's own requests on link's event loop and database pool
 * during the run it measures, which the bare client never has to share.
 */
async function syncOnce(link, authorization, connectorId, db) {
  const started = Date.now();
  const run = await api(link, authorization, 'POST', `/connectors/${connectorId}/sync`);
  for (;;) {
    const { rows } = await db.query('SELECT status FROM sync_runs WHERE id = $1', [run.id]);
    if (rows[0]?.status === 'succeeded' || rows[0]?.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const wallMs = Date.now() - started;
  const now = await api(link, authorization, 'GET', `/connectors/${connectorId}/syncs/${run.id}`);
  if (now.status === 'failed') throw new Error(`sync failed: ${now.error}`);
  return { wall_ms: wallMs, run_ms: Date.parse(now.finished_at) - Date.parse(now.started_at), stats: now.stats };
}

function cpuModel() {
  return os.cpus()[0]?.model ?? 'unknown';
}

/** Link's time ÷ the bare client's, from the medians. */
const ratio = (link, bare) => round(link / bare, 2);

async function main() {
  const name = `bench_link_${randomBytes(6).toString('hex')}`;
  await withClient(SERVER_URL, (client) => client.query(`CREATE DATABASE ${name}`));
  const databaseUrl = databaseUrlFor(SERVER_URL, name);
  let directory;
  let issuer;
  let link;
  try {
    await applyMigrations(databaseUrl, path.join(LINK, 'prisma/migrations'));
    const postgres = await withClient(databaseUrl, async (client) => (await client.query('SHOW server_version')).rows[0].server_version);
    directory = await startDirectory();
    console.log(`directory at ${directory.baseUrl}: ${USERS} users, ${GROUPS} groups`);

    issuer = await startTestIssuer();
    link = await startLink(databaseUrl, issuer);
    const pid = link.child.pid;
    const authorization = `Bearer ${issuer.token({ tenant_id: randomUUID(), scope: 'admin:tenant' })}`;
    const tenant = await api(link, authorization, 'POST', '/tenants', { name: 'Contoso', domain: 'contoso.example', client_id: randomUUID() });
    const connector = await api(link, authorization, 'POST', '/connectors', {
      tenant_id: tenant.id,
      type: 'scim',
      name: 'Bench directory',
      config: { base_url: directory.baseUrl, bearer_token: directory.token },
    });
    const idle = memory(pid);
    console.log(`link (pid ${pid}) at ${link.url}, RSS ${round(idle.rss_mb, 1)} MB before the first sync`);

    const poller = new Client({ connectionString: databaseUrl });
    await poller.connect();
    const measure = async (label, mode) => {
      // The kernel's peak (VmHWM, reset before the sync); samples only where it cannot be reset,
      // since sampling every 10 ms runs in the directory's process.
      const reset = resetPeak(pid);
      let sampledPeak = memory(pid).rss_mb;
      const sampler = reset ? undefined : setInterval(() => (sampledPeak = Math.max(sampledPeak, memory(pid).rss_mb)), 10);
      const result = await syncOnce(link, authorization, connector.id, poller).finally(() => clearInterval(sampler));
      if (result.stats.mode !== mode) throw new Error(`${label}: expected a ${mode} sync, link ran ${result.stats.mode} (${result.stats.mode_reason})`);
      const peak = reset ? Math.max(memory(pid).hwm_mb, sampledPeak) : sampledPeak;
      console.log(`${label}: run ${result.run_ms} ms, wall ${result.wall_ms} ms, peak RSS ${round(peak, 1)} MB, stats ${JSON.stringify(result.stats)}`);
      return { ...result, peak_rss_mb: round(peak, 1) };
    };

    // The first sync fills an empty mirror (10,000 inserts), in full.
    directory.setFilterSupported(false);
    const first = await measure('first sync (empty mirror)', 'full');

    // Full syncs with nothing changed, each beside a bare client's full read (alternating, so both
    // see the same drift of a shared machine).
    const fulls = [];
    const bareFulls = [];
    for (let i = 0; i < RUNS; i++) {
      const bare = await bareFull(directory);
      if (bare.users !== USERS || bare.groups !== GROUPS) throw new Error(`the bare client read ${bare.users} users and ${bare.groups} groups`);
      console.log(`bare client, every page: ${round(bare.ms)} ms`);
      bareFulls.push(bare.ms);
      fulls.push(await measure(`full sync ${i + 1}`, 'full'));
    }

    // Delta syncs with nothing changed, each beside a bare client asking the same question.
    directory.setFilterSupported(true);
    // One pair unmeasured: link's first delta compiles its queries and code paths, as the full
    // syncs before did theirs.
    const warm = await measure('delta sync (warm-up, not counted)', 'delta');
    await bareDelta(directory, warm.stats.delta_since);
    const deltas = [];
    const bareDeltas = [];
    for (let i = 0; i < DELTA_RUNS; i++) {
      const run = await measure(`delta sync ${i + 1}`, 'delta');
      if (run.stats.users_seen !== 0) throw new Error(`the delta saw ${run.stats.users_seen} users of an unchanged directory`);
      deltas.push(run);
      const bare = await bareDelta(directory, run.stats.delta_since);
      console.log(`bare client, the delta question since ${run.stats.delta_since}: ${round(bare.ms)} ms (${bare.users} users, ${bare.groups} groups)`);
      bareDeltas.push(bare.ms);
    }

    const summary = (runs, bare, target) => {
      const linkMs = median(runs.map((r) => r.run_ms));
      const bareMs = round(median(bare));
      const r = ratio(linkMs, bareMs);
      return { runs: runs.length, run_ms: linkMs, wall_ms: median(runs.map((x) => x.wall_ms)), bare_ms: bareMs, ratio: r, target, met: r <= target, peak_rss_mb: Math.max(...runs.map((x) => x.peak_rss_mb)), stats: runs[0].stats, all_run_ms: runs.map((x) => x.run_ms), all_bare_ms: bare.map((x) => round(x)) };
    };
    const report = {
      date: new Date().toISOString(),
      machine: { cpu: cpuModel(), cpus: os.cpus().length, load_average_1m: round(os.loadavg()[0], 2), memory_gb: round(os.totalmem() / 1024 ** 3, 1), node: process.version, postgres, platform: `${os.platform()} ${os.release()}` },
      directory: { users: USERS, groups: GROUPS, server: 'SCIMMY 1.x behind scimmy-routers (in the bench process)', page_size_asked: PAGE },
      idle_rss_mb: round(idle.rss_mb, 1),
      first,
      full: summary(fulls, bareFulls, TARGET.full),
      delta: summary(deltas, bareDeltas, TARGET.delta),
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(RESULTS, `${report.date.slice(0, 10)}-link.json`), `${JSON.stringify(report, null, 2)}\n`);
    const m = report.machine;
    const row = (label, c) => `| ${label} | ${c.run_ms} | ${c.bare_ms} | ×${c.ratio} (target ≤ ${c.target}×: ${c.met ? 'met' : 'MISSED'}) | ${c.stats.users_seen} | ${c.stats.groups_seen} | ${c.peak_rss_mb} |`;
    const md = [
      '# link sync benchmark (latest)',
      '',
      `Run ${report.date} with \`pnpm bench:link\` (bench/link/run.js).`,
      '',
      `Machine: ${m.cpu}, ${m.cpus} CPUs, ${m.memory_gb} GB RAM, ${m.platform}, Node ${m.node}, PostgreSQL ${m.postgres}; load average ${m.load_average_1m} when it finished (the machine was shared: times are noisy, so each link sync alternates with its bare client in the same run).`,
      '',
      `Directory: ${USERS.toLocaleString('en')} users and ${GROUPS} groups (every user in one group, all last modified a day ago) served by ${report.directory.server}; link asks for ${PAGE} per page.`,
      'link runs as in production (`node services/link/dist/index.js`, NODE_ENV=production, its pg-boss queue, the directory allowed by OUTBOUND_ALLOWLIST).',
      '',
      `| sync (nothing changed; medians of ${RUNS} full and ${DELTA_RUNS} delta) | link run ms (started_at → finished_at) | bare client ms | link ÷ bare | users_seen | groups_seen | link peak RSS MB |`,
      '|---|---|---|---|---|---|---|',
      row('full (every page of /Users and /Groups)', report.full),
      row('delta (`meta.lastModified gt` the last run\'s start − 60 s)', report.delta),
      '',
      `First sync (empty mirror, ${first.stats.users_added} inserts): run ${first.run_ms} ms, wall ${first.wall_ms} ms, peak RSS ${first.peak_rss_mb} MB.`,
      '',
      'The bare client (in the bench process, `fetch`, no mirror): for `full`, every page of /Users and /Groups; for `delta`, the requests a delta makes (ServiceProviderConfig, then /Users and /Groups with the run\'s own filter).',
      `link's RSS before the first sync: ${report.idle_rss_mb} MB. Peak RSS: VmHWM from /proc, reset (clear_refs) before each sync (10 ms VmRSS samples where it cannot be reset). The bench waits for a run's end by reading its row in PostgreSQL every 20 ms, not through link's API, so nothing but the sync runs in link meanwhile.`,
      '',
    ].join('\n');
    writeFileSync(path.join(RESULTS, 'latest-link.md'), md);
    console.log(md);
    await poller.end();
    if (process.env.BENCH_STRICT === '1' && !(report.full.met && report.delta.met)) process.exitCode = 1;
  } finally {
    await stopService(link);
    await directory?.close();
    await issuer?.close();
    await withClient(SERVER_URL, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
