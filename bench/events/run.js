'use strict';
// The event-stream benchmark (`pnpm bench:events`), issue point 7. Two measurements, each against the
// built desk started as production starts it (`node services/desk/dist/index.js`, here with
// OUTBOUND_ALLOW_LOOPBACK=true so loopback webhook URLs are allowed), on fresh databases of its own:
//   1. Throughput: 1,000 webhooks of one tenant (one per path of a node:http receiver in this
//      process, events: ["ticket.created"]), then BENCH_EVENTS tickets POSTed one after the other as
//      fast as desk answers; from the first POST until the receiver has every one of the
//      BENCH_EVENTS × 1,000 deliveries: events/s, deliveries/s, change → delivery latency, desk's RSS.
//      Once per WEBHOOK_CONCURRENCY of BENCH_CONCURRENCY.
//   2. What the outbox adds to POST /api/v1/tickets: the same autocannon load against the desk of
//      the commit just before events (built in a `git worktree` under /tmp) and the current desk,
//      rounds alternating, no webhooks subscribed.
// Writes bench/results/<date>-events.json and bench/results/latest-events.md. Environment (all optional):
//   BENCH_DATABASE_URL  a database URL of the PostgreSQL server to use (default the local one)
//   BENCH_REDIS_URL     Redis for desk's rate limiter (default redis://127.0.0.1:6379; "" for none)
//   BENCH_EVENTS        tickets per throughput run (default 20), BENCH_ENDPOINTS (default 1000)
//   BENCH_CONCURRENCY   WEBHOOK_CONCURRENCY values to run, comma-separated (default "32,128")
//   BENCH_ROUNDS        alternating rounds of the POST comparison and of each audit case (default 3), BENCH_DURATION s each (default 5)
//   BENCH_BASE_COMMIT   the commit without events (default 5b796f6), BENCH_BASE_DIR its worktree
//                       (default /tmp/msp-bench-base-<commit>; made, installed and built if missing)
//   BENCH_PARTS         which parts to run, comma-separated (default "fanout,outbox,audit")
//   BENCH_AUDIT_SIZES   events of part 3, the audit log's flatness run (default "100000,10000000";
//                       e.g. "10000,100000" to check it works), BENCH_AUDIT_DURATION s per case and tenant (default 6),
//                       BENCH_AUDIT_CONNECTIONS (default 2)
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, writeFileSync } = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const autocannon = require('autocannon');
const { auditFlatness, auditMarkdown } = require('./audit-flatness');
const {
  apiCall,
  ROOT,
  round,
  median,
  percentile,
  clientToken,
  databaseUrlFor,
  withClient,
  startService,
  stopService,
  memory,
  cpuSeconds,
  machineCpu,
  resetPeak,
  machine,
  describeMachine,
} = require('../support');

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 1000);
const CONCURRENCIES = (process.env.BENCH_CONCURRENCY ?? '32,128').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const BASE_COMMIT = process.env.BENCH_BASE_COMMIT ?? '5b796f6';
const BASE_DIR = process.env.BENCH_BASE_DIR ?? `/tmp/msp-bench-base-${BASE_COMMIT}`;
const PARTS = (process.env.BENCH_PARTS ?? 'fanout,outbox,audit').split(',');
const LOG_LEVEL = 'info';
const DELIVERY_TIMEOUT_MS = 180_000;
const RESULTS = path.join(ROOT, 'bench/results');
const CLIENT_ID = 'bench-events';
const CLIENT_SECRET = randomBytes(24).toString('base64url');

const databases = [];
async function freshDatabase(label) {
  const name = `bench_events_${label}_${randomBytes(4).toString('hex')}`;
  await withClient(SERVER_URL, (client) => client.query(`CREATE DATABASE "${name}"`));
  databases.push(name);
  return databaseUrlFor(SERVER_URL, name);
}

/** desk as production starts it (it migrates its database at start), with a bootstrap client of every scope. */
function startDesk(databaseUrl, { root = ROOT, concurrency, env = {} } = {}) {
  return startService(
    'desk',
    {
      NODE_ENV: 'development',
      OUTBOUND_ALLOW_LOOPBACK: 'true',
      DATABASE_URL: databaseUrl,
      ...(REDIS_URL ? { REDIS_URL } : {}),
      RATE_LIMIT_PER_MINUTE: '1000000000',
      BOOTSTRAP_CLIENT_ID: CLIENT_ID,
      BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET,
      BOOTSTRAP_TENANT: 'bench',
      LOG_LEVEL,
      ...(concurrency ? { WEBHOOK_CONCURRENCY: String(concurrency) } : {}),
      ...env,
    },
    { root },
  );
}

const api = (desk, method, urlPath, body) => apiCall(desk, desk.auth, method, urlPath, body);

/** A token of the bootstrap client (every scope, admin:tenant included), and a client to file tickets for. */
async function signIn(desk) {
  desk.auth = await clientToken(desk.url, CLIENT_ID, CLIENT_SECRET);
  desk.clientId = (await api(desk, 'POST', '/clients', { name: 'Benchmark client' })).id;
  return desk;
}

const ticket = (desk) => ({
  title: 'Benchmark ticket',
  description: 'Created by bench/events.',
  priority: 'high',
  category: 'network',
  client_id: desk.clientId,
});

/** The endpoints: one node:http server answering 200 on /hook/0 … /hook/<n-1>; records when each delivery arrived. */
async function startReceiver(endpoints) {
  const state = {
    count: 0,
    perPath: new Uint32Array(endpoints),
    messageIds: new Set(),
    duplicates: 0,
    unsigned: 0,
    arrivals: [],
    waiter: null,
  };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const index = Number(/^\/hook\/(\d+)$/.exec(req.url)?.[1] ?? NaN);
      if (!(index >= 0 && index < endpoints)) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': '0' }).end();
      state.count += 1;
      state.perPath[index] += 1;
      const id = req.headers['webhook-id'];
      if (!id || !req.headers['webhook-signature']) state.unsigned += 1;
      if (state.messageIds.has(id)) state.duplicates += 1;
      state.messageIds.add(id);
      state.arrivals.push({ at, ticketId: JSON.parse(Buffer.concat(chunks).toString()).data.object.id });
      if (state.waiter && state.count >= state.waiter.count) state.waiter.resolve();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    state,
    url: (index) => `http://127.0.0.1:${server.address().port}/hook/${index}`,
    reset() {
      Object.assign(state, {
        count: 0,
        perPath: new Uint32Array(endpoints),
        messageIds: new Set(),
        duplicates: 0,
        unsigned: 0,
        arrivals: [],
        waiter: null,
      });
    },
    until(count, timeoutMs) {
      if (state.count >= count) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        state.waiter = { count, resolve: () => (clearTimeout(timer), resolve(true)) };
      });
    },
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

/**
 * CPU seconds of each PostgreSQL backend serving one database (pid → seconds), from /proc: desk's
 * pool, its LISTEN connection. Not the server's background processes, nor other databases' work.
 */
async function postgresCpu(databaseUrl) {
  const pids = await withClient(databaseUrl, async (client) =>
    (
      await client.query(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
    ).rows.map((r) => r.pid),
  );
  const cpu = new Map();
  for (const pid of pids) {
    try {
      cpu.set(pid, cpuSeconds(pid));
    } catch {
      /* the backend has gone */
    }
  }
  return cpu;
}

/** CPU seconds the backends of `after` used since `before` (a backend new since then counts whole). */
const postgresCpuSince = (before, after) =>
  [...after].reduce((sum, [pid, seconds]) => sum + seconds - (before.get(pid) ?? 0), 0);

/** Where the CPU went between two `cpuSnapshot`s: desk, PostgreSQL, this process (receiver, load), the machine. */
async function cpuSnapshot(pid, databaseUrl) {
  return {
    desk: cpuSeconds(pid),
    postgres: await postgresCpu(databaseUrl),
    bench: process.cpuUsage(),
    machine: machineCpu(),
  };
}
async function cpuSince(before, pid, databaseUrl) {
  const after = await cpuSnapshot(pid, databaseUrl);
  const bench = process.cpuUsage(before.bench);
  const machineTotal = after.machine.total - before.machine.total;
  return {
    desk_s: round(after.desk - before.desk, 1),
    postgres_s: round(postgresCpuSince(before.postgres, after.postgres), 1),
    bench_s: round((bench.user + bench.system) / 1e6, 1),
    machine_busy_pct: round(((after.machine.busy - before.machine.busy) / machineTotal) * 100),
  };
}

/** Transactions PostgreSQL committed in a database so far. */
const commits = (databaseUrl) =>
  withClient(databaseUrl, async (client) =>
    Number(
      (await client.query('SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()')).rows[0]
        .xact_commit,
    ),
  );

/** Point 1: BENCH_EVENTS changes fanned out to ENDPOINTS webhooks, with desk's WEBHOOK_CONCURRENCY = `concurrency`. */
async function throughput(receiver, concurrency) {
  const databaseUrl = await freshDatabase(`fanout${concurrency}`);
  const desk = await startDesk(databaseUrl, { concurrency });
  try {
    const pid = desk.child.pid;
    await signIn(desk);
    // Warm-up before anyone subscribes (a webhook receives only what happens after it was created).
    for (let i = 0; i < 20; i++) await api(desk, 'POST', '/tickets', ticket(desk));
    const subscribeStarted = performance.now();
    const indexes = [...Array(ENDPOINTS).keys()];
    for (let i = 0; i < indexes.length; i += 10) {
      await Promise.all(
        indexes
          .slice(i, i + 10)
          .map((index) => api(desk, 'POST', '/webhooks', { url: receiver.url(index), events: ['ticket.created'] })),
      );
    }
    const subscribeMs = performance.now() - subscribeStarted;
    await new Promise((resolve) => setTimeout(resolve, 1000)); // let desk settle
    receiver.reset();
    const rssStart = memory(pid).rss_mb;
    const peakReset = resetPeak(pid);
    let sampledPeak = rssStart;
    const sampler = setInterval(() => (sampledPeak = Math.max(sampledPeak, memory(pid).rss_mb)), 50);
    const cpuStart = await cpuSnapshot(pid, databaseUrl);
    const commitsStart = await commits(databaseUrl);

    const answered = new Map();
    const started = performance.now();
    for (let i = 0; i < EVENTS; i++) {
      const created = await api(desk, 'POST', '/tickets', ticket(desk));
      answered.set(created.id, performance.now());
    }
    const postsMs = performance.now() - started;
    const expected = EVENTS * ENDPOINTS;
    const complete = await receiver.until(expected, DELIVERY_TIMEOUT_MS);
    const arrivals = receiver.state.arrivals;
    const lastArrival = arrivals.length ? Math.max(...arrivals.map((a) => a.at)) : NaN;
    const cpu = await cpuSince(cpuStart, pid, databaseUrl);
    clearInterval(sampler);
    const rssEnd = memory(pid);

    // Every delivery recorded as succeeded (the record follows the receiver's answer by a moment).
    let statuses = {};
    for (let attempt = 0; attempt < 100; attempt++) {
      statuses = await withClient(databaseUrl, async (client) => {
        const { rows } = await client.query(
          'SELECT status, count(*)::int AS n, max(attempt)::int AS max_attempt FROM webhook_deliveries GROUP BY status',
        );
        return Object.fromEntries(rows.map((r) => [r.status, { n: r.n, max_attempt: r.max_attempt }]));
      });
      if ((statuses.succeeded?.n ?? 0) >= expected || !complete) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const commitsUsed = (await commits(databaseUrl)) - commitsStart;

    const latencies = arrivals.map((a) => a.at - answered.get(a.ticketId)).sort((a, b) => a - b);
    const byTicket = new Map();
    for (const a of arrivals) {
      const t = byTicket.get(a.ticketId) ?? { first: Infinity, last: -Infinity };
      t.first = Math.min(t.first, a.at);
      t.last = Math.max(t.last, a.at);
      byTicket.set(a.ticketId, t);
    }
    const firsts = [...byTicket].map(([id, t]) => t.first - answered.get(id)).sort((a, b) => a - b);
    const lasts = [...byTicket].map(([id, t]) => t.last - answered.get(id)).sort((a, b) => a - b);
    const totalMs = lastArrival - started;
    const row = {
      webhook_concurrency: concurrency,
      events: EVENTS,
      endpoints: ENDPOINTS,
      subscribe_ms: round(subscribeMs),
      posts_ms: round(postsMs),
      deliveries_expected: expected,
      deliveries_received: receiver.state.count,
      complete,
      total_ms: round(totalMs),
      events_per_sec: round(EVENTS / (totalMs / 1000), 2),
      deliveries_per_sec: round(receiver.state.count / (totalMs / 1000)),
      latency_ms: {
        p50: round(percentile(latencies, 0.5)),
        p99: round(percentile(latencies, 0.99)),
        max: round(latencies.at(-1)),
      },
      first_delivery_of_event_ms: { p50: round(percentile(firsts, 0.5)), max: round(firsts.at(-1)) },
      last_delivery_of_event_ms: { p50: round(percentile(lasts, 0.5)), max: round(lasts.at(-1)) },
      every_path_once_per_event: receiver.state.perPath.every((n) => n === EVENTS),
      duplicates: receiver.state.duplicates,
      unsigned: receiver.state.unsigned,
      sql_statuses: statuses,
      all_succeeded_in_sql: statuses.succeeded?.n === expected && Object.keys(statuses).length === 1,
      rss_start_mb: round(rssStart, 1),
      rss_end_mb: round(rssEnd.rss_mb, 1),
      rss_peak_mb: round(peakReset ? Math.max(rssEnd.hwm_mb, sampledPeak) : sampledPeak, 1),
      cpu,
      desk_cpu_ms_per_delivery: round((cpu.desk_s * 1000) / Math.max(1, receiver.state.count), 2),
      postgres_cpu_ms_per_delivery: round((cpu.postgres_s * 1000) / Math.max(1, receiver.state.count), 2),
      pg_commits_per_delivery: round(commitsUsed / Math.max(1, receiver.state.count), 2),
    };
    console.log(
      `  WEBHOOK_CONCURRENCY ${String(concurrency).padStart(4)}: ${row.deliveries_received}/${expected} in ${row.total_ms} ms: ${row.events_per_sec} events/s, ${row.deliveries_per_sec} deliveries/s, latency p50 ${row.latency_ms.p50} ms p99 ${row.latency_ms.p99} ms; RSS ${row.rss_start_mb} → ${row.rss_end_mb} MB; all succeeded in SQL: ${row.all_succeeded_in_sql}`,
    );
    return row;
  } finally {
    await stopService(desk);
  }
}

/** The desk of BASE_COMMIT (before events), in a worktree: made, installed and built unless already there. */
function baseCheckout() {
  const run = (command, args, cwd) =>
    execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (!existsSync(path.join(BASE_DIR, 'package.json'))) {
    console.log(`git worktree ${BASE_DIR} at ${BASE_COMMIT}`);
    run('git', ['-C', ROOT, 'worktree', 'add', '--detach', BASE_DIR, BASE_COMMIT]);
  }
  if (!existsSync(path.join(BASE_DIR, 'node_modules/.modules.yaml'))) {
    try {
      run('pnpm', ['install', '--offline', '--frozen-lockfile'], BASE_DIR);
    } catch {
      run('pnpm', ['install', '--frozen-lockfile'], BASE_DIR);
    }
  }
  run('pnpm', ['-s', 'turbo', 'run', 'build', '--filter=@msp/desk', '--output-logs=errors-only'], BASE_DIR);
  return { root: BASE_DIR, commit: run('git', ['-C', BASE_DIR, 'rev-parse', '--short', 'HEAD']).trim() };
}

async function postLoad(desk, connections, duration) {
  const before = { desk: cpuSeconds(desk.child.pid), postgres: await postgresCpu(desk.databaseUrl) };
  const result = await autocannon({
    url: `${desk.url}/api/v1/tickets`,
    method: 'POST',
    connections,
    duration,
    headers: { ...desk.auth, 'content-type': 'application/json' },
    body: JSON.stringify(ticket(desk)),
  });
  const requests = Math.max(1, result.requests.total);
  return {
    req_per_sec: result.requests.average,
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    mean_ms: result.latency.average,
    requests: result.requests.total,
    bad: result.non2xx + result.errors + result.timeouts,
    desk_cpu_ms_per_request: ((cpuSeconds(desk.child.pid) - before.desk) * 1000) / requests,
    postgres_cpu_ms_per_request:
      (postgresCpuSince(before.postgres, await postgresCpu(desk.databaseUrl)) * 1000) / requests,
  };
}

/** Point 2: the same POST /tickets load against desk without (base) and with (current) the outbox. */
async function outboxLatency() {
  const base = baseCheckout();
  const started = async (databaseUrl, options) =>
    Object.assign(await signIn(await startDesk(databaseUrl, options)), { databaseUrl });
  const desks = {
    base: await started(await freshDatabase('base'), { root: base.root }),
    current: await started(await freshDatabase('current')),
  };
  try {
    for (const name of ['base', 'current']) await postLoad(desks[name], 10, 3); // warm-up: JIT, pools
    const samples = { base: { 1: [], 10: [] }, current: { 1: [], 10: [] } };
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? ['base', 'current'] : ['current', 'base'];
      for (const connections of [1, 10]) {
        for (const name of order) {
          const sample = await postLoad(desks[name], connections, DURATION);
          samples[name][connections].push(sample);
          console.log(
            `  round ${r + 1} ${name.padEnd(7)} ${String(connections).padStart(2)} conn: ${round(sample.req_per_sec)} req/s, p50 ${sample.p50_ms} ms, p99 ${sample.p99_ms} ms, mean ${round(sample.mean_ms, 2)} ms${sample.bad ? ` (!) ${sample.bad} failed` : ''}`,
          );
        }
      }
    }
    const summary = (list) => ({
      req_per_sec: round(median(list.map((s) => s.req_per_sec))),
      p50_ms: median(list.map((s) => s.p50_ms)),
      p99_ms: median(list.map((s) => s.p99_ms)),
      mean_ms: round(median(list.map((s) => s.mean_ms)), 2),
      desk_cpu_ms_per_request: round(median(list.map((s) => s.desk_cpu_ms_per_request)), 2),
      postgres_cpu_ms_per_request: round(median(list.map((s) => s.postgres_cpu_ms_per_request)), 2),
      failed: list.reduce((n, s) => n + s.bad, 0),
    });
    const rows = [1, 10].map((connections) => {
      const b = summary(samples.base[connections]);
      const c = summary(samples.current[connections]);
      return {
        connections,
        base: b,
        current: c,
        diff: {
          req_per_sec: round(c.req_per_sec - b.req_per_sec),
          p50_ms: round(c.p50_ms - b.p50_ms, 2),
          p99_ms: round(c.p99_ms - b.p99_ms, 2),
          mean_ms: round(c.mean_ms - b.mean_ms, 2),
          req_per_sec_pct: round(((c.req_per_sec - b.req_per_sec) / b.req_per_sec) * 100, 1),
        },
      };
    });
    const events = await withClient(
      databaseUrlFor(SERVER_URL, databases.at(-1)),
      async (client) =>
        (
          await client.query(
            'SELECT count(*)::int AS n, count(*) FILTER (WHERE dispatched_at IS NULL)::int AS undispatched FROM events',
          )
        ).rows[0],
    );
    return {
      approach: 'worktree',
      base_commit: base.commit,
      current_commit: execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
      rounds: ROUNDS,
      duration_s: DURATION,
      rows,
      samples,
      current_events: events,
    };
  } finally {
    await stopService(desks.base);
    await stopService(desks.current);
  }
}

function markdown(report) {
  const t = report.throughput;
  const o = report.outbox;
  return [
    '# Event stream benchmark (webhook fan-out and the outbox on a POST)',
    '',
    `Run ${report.date} with \`pnpm bench:events\` (bench/events/run.js) on ${describeMachine(report.machine)}.`,
    `desk: the built app (\`node services/desk/dist/index.js\`) with OUTBOUND_ALLOW_LOOPBACK=true (so loopback webhook URLs are allowed), ES256 tokens, the Redis rate limiter (limit raised so it never answers 429), logging at ${LOG_LEVEL}; a fresh database per desk. Receiver, load generator, desk, PostgreSQL and Redis share the machine's CPUs.`,
    '',
    `## 1. Fan-out: ${report.settings.events} changes × ${report.settings.endpoints.toLocaleString('en')} webhooks of one tenant`,
    '',
    `Load: ${report.settings.endpoints.toLocaleString('en')} webhooks (\`events: ["ticket.created"]\`), one per path of a node:http receiver in the bench process answering 200 with an empty body; then ${report.settings.events} \`POST /api/v1/tickets\`, one after the other as fast as desk answers (a burst: all of them are posted within the first second or so, before most deliveries are sent). Measured from the first POST to the arrival of the last of the ${(report.settings.events * report.settings.endpoints).toLocaleString('en')} deliveries; latency is per delivery, from the POST's answer (the change committed) to its arrival at the receiver, so in a burst it is mostly the wait in the delivery queue.`,
    '',
    '| WEBHOOK_CONCURRENCY | deliveries received | time s | events/s | deliveries/s | latency p50 / p99 ms | first delivery of an event p50 ms | last delivery of an event p50 / max ms | all `succeeded` in SQL | desk RSS start → end (peak) MB | CPU ms / delivery: desk / PostgreSQL | machine CPU busy | PostgreSQL commits / delivery |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ...t.map(
      (r) =>
        `| ${r.webhook_concurrency} | ${r.deliveries_received.toLocaleString('en')} / ${r.deliveries_expected.toLocaleString('en')} | ${round(r.total_ms / 1000, 1)} | ${r.events_per_sec} | ${r.deliveries_per_sec} | ${r.latency_ms.p50} / ${r.latency_ms.p99} | ${r.first_delivery_of_event_ms.p50} | ${r.last_delivery_of_event_ms.p50} / ${r.last_delivery_of_event_ms.max} | ${r.all_succeeded_in_sql ? 'yes' : `**no** ${JSON.stringify(r.sql_statuses)}`} | ${r.rss_start_mb} → ${r.rss_end_mb} (${r.rss_peak_mb}) | ${r.desk_cpu_ms_per_delivery} / ${r.postgres_cpu_ms_per_delivery} | ${r.cpu.machine_busy_pct} % | ${r.pg_commits_per_delivery} |`,
    ),
    '',
    `Every path received each event exactly once: ${t.every((r) => r.every_path_once_per_event && r.duplicates === 0) ? 'yes' : '**no**, see the JSON file'}; every request carried webhook-id and webhook-signature: ${t.every((r) => r.unsigned === 0) ? 'yes' : '**no**'}. Subscribing the ${report.settings.endpoints.toLocaleString('en')} webhooks over HTTP took ${t.map((r) => `${round(r.subscribe_ms / 1000, 1)} s`).join(' and ')}.`,
    "RSS: /proc VmRSS right before the first POST and after the last delivery; peak: VmHWM reset (clear_refs) before the first POST, and 50 ms samples. CPU: utime + stime from /proc over the run, of desk and of the PostgreSQL backends connected to its database; machine busy: /proc/stat over the run, of all CPUs (the rest of the busy time is the bench process: receiver and POSTs). Commits: `pg_stat_database.xact_commit` of desk's database over the run (each statement outside a transaction is one; PostgreSQL publishes these counters with up to a second's delay, so they are approximate).",
    '',
    `## 2. What the outbox adds to \`POST /api/v1/tickets\``,
    '',
    o.approach === 'worktree'
      ? `Approach: the same load against desk built from commit \`${o.base_commit}\` (the last one before events: no \`events\` insert, no NOTIFY, no dispatcher), checked out with \`git worktree\` under /tmp, and desk of \`${o.current_commit}\` (the insert and NOTIFY in the ticket's transaction, and the dispatcher in the process relaying each event, with no webhook subscribed). Both running side by side on databases of the same PostgreSQL server; ${o.rounds} rounds of ${o.duration_s} s per case, the order of the two alternating each round, after a 3 s warm-up each; medians of the rounds. This measures everything the events commit changed on that path (the insert, the NOTIFY, the dispatcher's relay and claim queries in the same process and database server), and also any other change between the two commits on it (there is none to POST /tickets besides the event).`
      : '',
    '',
    '| autocannon connections | without events req/s | p50 / p99 / mean ms | with events req/s | p50 / p99 / mean ms | difference p50 / p99 / mean ms | req/s |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...o.rows.map(
      (r) =>
        `| ${r.connections} | ${r.base.req_per_sec} | ${r.base.p50_ms} / ${r.base.p99_ms} / ${r.base.mean_ms} | ${r.current.req_per_sec} | ${r.current.p50_ms} / ${r.current.p99_ms} / ${r.current.mean_ms} | ${r.diff.p50_ms >= 0 ? '+' : ''}${r.diff.p50_ms} / ${r.diff.p99_ms >= 0 ? '+' : ''}${r.diff.p99_ms} / ${r.diff.mean_ms >= 0 ? '+' : ''}${r.diff.mean_ms} | ${r.diff.req_per_sec_pct >= 0 ? '+' : ''}${r.diff.req_per_sec_pct} % |`,
    ),
    '',
    '| autocannon connections | CPU ms / request without events: desk / PostgreSQL | with events: desk / PostgreSQL |',
    '|---:|---:|---:|',
    ...o.rows.map(
      (r) =>
        `| ${r.connections} | ${r.base.desk_cpu_ms_per_request} / ${r.base.postgres_cpu_ms_per_request} | ${r.current.desk_cpu_ms_per_request} / ${r.current.postgres_cpu_ms_per_request} |`,
    ),
    '',
    'CPU per request: utime + stime from /proc over each load, of the desk process and of the PostgreSQL backends connected to its database, divided by the requests answered (medians of the rounds).',
    '',
    `Every request answered 2xx: ${o.rows.every((r) => r.base.failed === 0 && r.current.failed === 0) ? 'yes' : '**no**'}. Events recorded by the current desk: ${o.current_events.n.toLocaleString('en')}, of them left undispatched: ${o.current_events.undispatched}. autocannon latencies are whole milliseconds, so a difference under 1 ms shows in the mean rather than in p50. Full numbers: \`${report.file}\`.`,
    '',
  ].join('\n');
}

async function main() {
  const startMachine = machine('');
  const postgres = await withClient(
    SERVER_URL,
    async (client) => (await client.query('SHOW server_version')).rows[0].server_version,
  );
  const receiver = await startReceiver(ENDPOINTS);
  const cleanUp = async () => {
    await receiver.close();
    for (const name of databases) {
      await withClient(SERVER_URL, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).catch(
        (error) => console.error(`could not drop ${name}: ${error.message}`),
      );
    }
  };
  process.once('SIGINT', () => cleanUp().finally(() => process.exit(130)));
  try {
    const fanout = [];
    if (PARTS.includes('fanout')) {
      console.log(
        `1. fan-out: ${EVENTS} tickets × ${ENDPOINTS} webhooks, WEBHOOK_CONCURRENCY ${CONCURRENCIES.join(' and ')}`,
      );
      for (const concurrency of CONCURRENCIES) fanout.push(await throughput(receiver, concurrency));
    }
    let outbox = { rows: [] };
    if (PARTS.includes('outbox')) {
      console.log(
        `2. POST /api/v1/tickets without events (${BASE_COMMIT}) and with them (current), ${ROUNDS} rounds of ${DURATION} s`,
      );
      outbox = await outboxLatency();
    }
    let audit;
    if (PARTS.includes('audit')) {
      console.log('3. GET /api/v1/audit-events from the smallest to the largest size, and the retention sweep');
      audit = await auditFlatness({
        freshDatabase,
        startDesk: (databaseUrl, env) => startDesk(databaseUrl, { env }),
        signIn: async (desk) => Object.assign(await signIn(desk), { clientIdOfToken: CLIENT_ID }),
        stopService,
      });
    }

    const date = new Date().toISOString();
    // A run of some parts only writes files of its own (results/latest-events-audit.md for the
    // audit part alone), so it does not overwrite the last full run's.
    const all = ['fanout', 'outbox', 'audit'].every((part) => PARTS.includes(part));
    const suffix = all ? '' : `-${PARTS.join('-')}`;
    const file = `bench/results/${date.slice(0, 10)}-events${suffix}.json`;
    const report = {
      date,
      machine: { ...machine(`PostgreSQL ${postgres}`), load_average_at_start: startMachine.load_average_at_start },
      settings: {
        events: EVENTS,
        endpoints: ENDPOINTS,
        webhook_concurrency: CONCURRENCIES,
        rounds: ROUNDS,
        duration_s: DURATION,
        log_level: LOG_LEVEL,
      },
      parts: PARTS,
      throughput: fanout,
      outbox,
      audit,
      file,
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(ROOT, file), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(
      path.join(RESULTS, `latest-events${suffix}.md`),
      `${PARTS.includes('fanout') && PARTS.includes('outbox') ? markdown(report) : `# Event stream benchmark (parts ${PARTS.join(', ')} only)\n`}${audit ? `\n${auditMarkdown(audit)}` : ''}`,
    );

    console.log(
      '\n| WEBHOOK_CONCURRENCY | events/s | deliveries/s | latency p50 / p99 ms | RSS start → end MB | all succeeded |',
    );
    for (const r of fanout)
      console.log(
        `| ${r.webhook_concurrency} | ${r.events_per_sec} | ${r.deliveries_per_sec} | ${r.latency_ms.p50} / ${r.latency_ms.p99} | ${r.rss_start_mb} → ${r.rss_end_mb} | ${r.all_succeeded_in_sql} |`,
      );
    console.log(
      '\n| POST /tickets, connections | without events req/s, p50 / p99 / mean ms | with events | difference p50 / p99 / mean ms |',
    );
    for (const r of outbox.rows)
      console.log(
        `| ${r.connections} | ${r.base.req_per_sec}, ${r.base.p50_ms} / ${r.base.p99_ms} / ${r.base.mean_ms} | ${r.current.req_per_sec}, ${r.current.p50_ms} / ${r.current.p99_ms} / ${r.current.mean_ms} | ${r.diff.p50_ms} / ${r.diff.p99_ms} / ${r.diff.mean_ms} (${r.diff.req_per_sec_pct} % req/s) |`,
      );
    if (audit) {
      console.log('\n| audit-events case | ratio req/s large / small |');
      for (const [name, ratio] of Object.entries(audit.ratios)) console.log(`| ${name} | ${ratio} |`);
      console.log(`retention sweep: ${JSON.stringify(audit.retention)}`);
    }
    console.log(`\nwrote ${file} and bench/results/latest-events${suffix}.md`);
    const ok =
      fanout.every((r) => r.complete && r.all_succeeded_in_sql && r.every_path_once_per_event) &&
      outbox.rows.every((r) => r.base.failed === 0 && r.current.failed === 0) &&
      (!audit || (audit.retention.exact && Object.values(audit.ratios).every((ratio) => ratio >= 0.8)));
    if (!ok) process.exitCode = 1;
  } finally {
    await cleanUp();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
