'use strict';
// The link sync benchmark (`pnpm bench:link`): a SCIM 2.0 directory (SCIMMY behind scimmy-routers,
// the same library the tests use) of 10,000 users and 500 groups, and the built link service as a
// child process exactly as production starts it (NODE_ENV=production, its pg-boss queue, the
// directory allowed through OUTBOUND_ALLOWLIST). Measures a full sync (POST /connectors/:id/sync
// until the run finished: its started_at → finished_at, and the wall time from the request) and
// link's peak RSS while it ran; beside it, the time the directory alone needs to serve every page
// to a bare client, so link's own share is visible. Writes bench/results/<date>-link.json and
// bench/results/latest-link.md. Environment (all optional):
//   BENCH_DATABASE_URL  a database URL of the PostgreSQL server to use (default the local one)
//   BENCH_REDIS_URL     Redis for link's rate limiter (default redis://127.0.0.1:6379; "" for none)
//   BENCH_USERS / BENCH_GROUPS  size of the directory (default 10000 / 500)
//   BENCH_RUNS          measured syncs (default 3; the median is reported; the first changes nothing after the unmeasured one)
const { randomBytes, randomUUID } = require('node:crypto');
const { mkdirSync, writeFileSync } = require('node:fs');
const http = require('node:http');
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
const RESULTS = path.join(ROOT, 'bench/results');

/** The directory: users and groups in memory, SCIMMY doing the protocol. */
async function startDirectory() {
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const users = [];
  const groups = [];
  const created = new Date().toISOString();
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
  return { baseUrl: `http://127.0.0.1:${server.address().port}/scim/v2`, token, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Every page of an endpoint, read by a bare client: what the directory alone costs. */
async function readDirectly(directory, endpoint, pageSize) {
  const started = process.hrtime.bigint();
  let startIndex = 1;
  let seen = 0;
  for (;;) {
    const response = await fetch(`${directory.baseUrl}${endpoint}?startIndex=${startIndex}&count=${pageSize}`, { headers: { authorization: `Bearer ${directory.token}` } });
    const page = await response.json();
    seen += page.Resources.length;
    startIndex += page.Resources.length;
    if (!page.Resources.length || startIndex > page.totalResults) break;
  }
  return { seen, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

/** link as production runs it: `node services/link/dist/index.js`, configured by environment. */
function startLink(databaseUrl, issuer) {
  return startService('link', {
    ...verifyingServiceEnv({ databaseUrl, redisUrl: REDIS_URL, issuer }),
    CONNECTOR_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
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

async function syncOnce(link, authorization, connectorId) {
  const started = Date.now();
  const run = await api(link, authorization, 'POST', `/connectors/${connectorId}/sync`);
  for (;;) {
    const now = await api(link, authorization, 'GET', `/connectors/${connectorId}/syncs/${run.id}`);
    if (now.status === 'succeeded' || now.status === 'failed') {
      if (now.status === 'failed') throw new Error(`sync failed: ${now.error}`);
      return { wall_ms: Date.now() - started, run_ms: Date.parse(now.finished_at) - Date.parse(now.started_at), stats: now.stats };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function cpuModel() {
  return os.cpus()[0]?.model ?? 'unknown';
}

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
    const direct = { users: await readDirectly(directory, '/Users', 100), groups: await readDirectly(directory, '/Groups', 100) };
    console.log(`the directory alone serves every page in ${round(direct.users.ms + direct.groups.ms)} ms (users ${round(direct.users.ms)}, groups ${round(direct.groups.ms)})`);

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

    const measure = async (label) => {
      const reset = resetPeak(pid);
      let sampledPeak = memory(pid).rss_mb;
      const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, memory(pid).rss_mb)), 10);
      const result = await syncOnce(link, authorization, connector.id);
      clearInterval(sampler);
      const peak = reset ? Math.max(memory(pid).hwm_mb, sampledPeak) : sampledPeak;
      console.log(`${label}: run ${result.run_ms} ms, wall ${result.wall_ms} ms, peak RSS ${round(peak, 1)} MB, stats ${JSON.stringify(result.stats)}`);
      return { ...result, peak_rss_mb: round(peak, 1) };
    };
    // The first sync fills an empty mirror (10,000 inserts); the later ones compare and change nothing.
    const first = await measure('first sync (empty mirror)');
    const repeats = [];
    for (let i = 0; i < RUNS; i++) repeats.push(await measure(`repeat ${i + 1}`));

    const report = {
      date: new Date().toISOString(),
      machine: { cpu: cpuModel(), cpus: os.cpus().length, load_average_1m: round(os.loadavg()[0], 2), memory_gb: round(os.totalmem() / 1024 ** 3, 1), node: process.version, postgres, platform: `${os.platform()} ${os.release()}` },
      directory: { users: USERS, groups: GROUPS, server: 'SCIMMY 1.x behind scimmy-routers (in the bench process)', page_size_asked: 100 },
      direct_read_ms: round(direct.users.ms + direct.groups.ms),
      idle_rss_mb: round(idle.rss_mb, 1),
      first,
      repeat: { runs: RUNS, run_ms: median(repeats.map((r) => r.run_ms)), wall_ms: median(repeats.map((r) => r.wall_ms)), peak_rss_mb: Math.max(...repeats.map((r) => r.peak_rss_mb)), stats: repeats[0].stats },
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(RESULTS, `${report.date.slice(0, 10)}-link.json`), `${JSON.stringify(report, null, 2)}\n`);
    const m = report.machine;
    const md = [
      '# link sync benchmark (latest)',
      '',
      `Run ${report.date} with \`pnpm bench:link\` (bench/link/run.js).`,
      '',
      `Machine: ${m.cpu}, ${m.cpus} CPUs, ${m.memory_gb} GB RAM, ${m.platform}, Node ${m.node}, PostgreSQL ${m.postgres}; load average ${m.load_average_1m} when it finished (the machine was shared: times are noisy, the directory-alone time beside them is measured in the same run).`,
      '',
      `Directory: ${USERS.toLocaleString('en')} users and ${GROUPS} groups (every user in one group) served by ${report.directory.server}; link asks for ${report.directory.page_size_asked} per page.`,
      'link runs as in production (`node services/link/dist/index.js`, NODE_ENV=production, its pg-boss queue, the directory allowed by OUTBOUND_ALLOWLIST).',
      '',
      '| sync | run (started_at → finished_at) ms | wall ms (POST → finished, 50 ms polling) | users_seen | users_added | groups_seen | link peak RSS MB |',
      '|---|---|---|---|---|---|---|',
      `| first (empty mirror) | ${first.run_ms} | ${first.wall_ms} | ${first.stats.users_seen} | ${first.stats.users_added} | ${first.stats.groups_seen} | ${first.peak_rss_mb} |`,
      `| repeat (median of ${RUNS}, nothing changed) | ${report.repeat.run_ms} | ${report.repeat.wall_ms} | ${report.repeat.stats.users_seen} | ${report.repeat.stats.users_added} | ${report.repeat.stats.groups_seen} | ${report.repeat.peak_rss_mb} |`,
      '',
      `The directory alone (a bare client reading every page of /Users and /Groups, 100 per page): ${report.direct_read_ms} ms; the rest of a run is link's (SCIM client, diff, mirror writes).`,
      `link's RSS before the first sync: ${report.idle_rss_mb} MB. Peak RSS: VmHWM from /proc, reset (clear_refs) before each sync, and 10 ms VmRSS samples.`,
      '',
    ].join('\n');
    writeFileSync(path.join(RESULTS, 'latest-link.md'), md);
    console.log(md);
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
