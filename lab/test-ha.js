#!/usr/bin/env node
'use strict';
// The HA fault test (`pnpm test:ha`): builds the services, brings the lab up with them on both app
// hosts, seeds desk, link and hr through HAProxy, and runs a steady load of mixed reads and writes
// while it puts one fault after the other into the lab. After each fault, and at the end, it checks
// through the public API that no acknowledged write was lost, none was applied twice, each SLA
// breach and webhook delivery happened once, and no request was answered 500. Prints the fault
// table, saves it to lab/results/latest.md, exits 1 when a guarantee failed, and removes the lab
// (also on failure and on Ctrl-C) unless --keep.
//
//   node lab/test-ha.js [--keep] [--no-build] [--faults leader-kill,redis-kill,...]
//                       [--rate 30] [--workers 8] [--variant single-redis|no-idempotency]
//
// --variant runs the services without the protection under test, to show the test catches it:
// single-redis points every Redis client at redis1 directly (no Sentinel, no balancer), so the
// Redis master's death takes the idempotency records' store away; no-idempotency points them at a
// replica that is never promoted, which refuses every write: the idempotency store and the rate
// limiter fail open from the start (as the services do when Redis is down).

const fs = require('node:fs');
const path = require('node:path');
const lab = require('./lab.js');
const { run, sleep, seconds, redisCommand } = require('./lib/util');
const { randomUUID } = require('node:crypto');
const { createApi } = require('./ha/api');
const { createLoad } = require('./ha/load');
const { startReceiver } = require('./ha/receiver');
const checks = require('./ha/checks');
const { formatReport } = require('./ha/report');

const repoRoot = path.resolve(__dirname, '..');
const resultsFile = path.join(__dirname, 'results', 'latest.md');
const attemptsFile = path.join(__dirname, 'results', 'latest-attempts.jsonl');

// ------------------------------------------------------------------------------------------------
// Options

function parseArgs(argv) {
  const flags = {};
  for (let i = 0; i < argv.length; i += 1) {
    const [name, inline] = argv[i].replace(/^--/, '').split(/=(.*)/s);
    if (!argv[i].startsWith('--')) throw new Error(`unexpected argument ${argv[i]}`);
    if (inline !== undefined) flags[name] = inline;
    else if (['faults', 'rate', 'workers', 'variant'].includes(name)) flags[name] = argv[(i += 1)];
    else flags[name] = true;
  }
  return flags;
}

const flags = parseArgs(process.argv.slice(2));
const options = {
  keep: Boolean(flags.keep),
  build: !flags['no-build'],
  rate: Number(flags.rate ?? process.env.HA_RATE ?? 30),
  workers: Number(flags.workers ?? process.env.HA_WORKERS ?? 8),
  variant: flags.variant ?? process.env.HA_VARIANT ?? 'ha',
  faults: (flags.faults ?? process.env.HA_FAULTS ?? 'leader-kill,redis-kill,app-isolate,app-kill,rolling,db-partition')
    .split(',')
    .filter(Boolean),
  // The whole test, lab and build included, ends by then whatever happens.
  deadlineMs: Number(process.env.HA_DEADLINE_MS ?? 30 * 60_000),
};
if (!['ha', 'single-redis', 'no-idempotency'].includes(options.variant))
  throw new Error(`unknown variant ${options.variant}`);

const started = Date.now();
const log = (message) =>
  process.stderr.write(`[ha +${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);

// The variable that would let a test run without the protection it checks.
function variantEnv() {
  const redis1 = lab.hosts.redis1.ip;
  if (options.variant === 'single-redis')
    return { REDIS_URL: `redis://${redis1}:6379`, REDIS_SENTINELS: null, REDIS_SENTINEL_NAME: null };
  // A replica answers PING (so the services are ready) and refuses every write (READONLY).
  if (options.variant === 'no-idempotency')
    return { REDIS_URL: `redis://${lab.hosts.redis3.ip}:6379`, REDIS_SENTINELS: null, REDIS_SENTINEL_NAME: null };
  return {};
}

// ------------------------------------------------------------------------------------------------
// Seeding through the public API

async function seed(api, receiverUrl, workers) {
  const must = async (what, promise) => {
    const res = await promise;
    if (!res.ok) throw new Error(`seed: ${what}: ${res.status ?? res.error} ${(res.text || '').slice(0, 400)}`);
    return res.json;
  };
  const opts = (body) => ({ body, phase: 'seed' });
  const always = [{ start: '00:00', end: '24:00' }];
  const calendar = await must(
    'calendar',
    api.call(
      'desk',
      'POST',
      '/calendars',
      opts({
        name: 'ha around the clock',
        time_zone: 'UTC',
        hours: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, always])),
      }),
    ),
  );
  // The shortest targets the API takes: every ticket's first response and resolution are due a
  // minute after it opens, so the breach sweep has work all along the run.
  const minute = { first_response_minutes: 1, resolution_minutes: 1 };
  const policy = await must(
    'SLA policy',
    api.call(
      'desk',
      'POST',
      '/sla-policies',
      opts({
        name: 'ha one minute',
        calendar_id: calendar.id,
        targets: { urgent: minute, high: minute, normal: minute, low: minute },
      }),
    ),
  );
  const clientIds = [];
  for (let i = 1; i <= 3; i += 1)
    clientIds.push(
      (
        await must(
          'client',
          api.call('desk', 'POST', '/clients', opts({ name: `ha seed client ${i}`, sla_policy_id: policy.id })),
        )
      ).id,
    );
  const webhooks = {
    desk: await must(
      'desk webhook',
      api.call(
        'desk',
        'POST',
        '/webhooks',
        opts({ url: `${receiverUrl}/desk`, events: ['ticket.created', 'comment.created', 'ticket.sla_breached'] }),
      ),
    ),
    link: await must(
      'link webhook',
      api.call('link', 'POST', '/webhooks', opts({ url: `${receiverUrl}/link`, events: ['tenant.created'] })),
    ),
    hr: await must(
      'hr webhook',
      api.call('hr', 'POST', '/webhooks', opts({ url: `${receiverUrl}/hr`, events: ['timesheet.created'] })),
    ),
  };
  const seededWorkers = [];
  for (let w = 0; w < workers; w += 1) {
    const userId = randomUUID();
    const employee = await must(
      'employee',
      api.call(
        'hr',
        'POST',
        '/employees',
        opts({
          user_id: userId,
          personnel_number: String(900000 + w),
          name: `ha worker ${w}`,
          employment: { start_date: '2019-01-01' },
        }),
      ),
    );
    await must(
      'contract',
      api.call(
        'hr',
        'POST',
        `/employees/${employee.id}/contracts`,
        opts({
          valid_from: '2019-01-01',
          weekly_minutes: 2400,
          working_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
          vacation_days_per_year: 30,
          state: 'DE-BY',
        }),
      ),
    );
    seededWorkers.push({ userId, employeeId: employee.id });
  }
  // A client of its own for the rate-limit probe: no other request counts against it.
  const probe = await must(
    'probe API client',
    api.call('desk', 'POST', '/api-clients', opts({ name: 'ha rate-limit probe', scopes: ['read:tickets'] })),
  );
  return {
    calendarId: calendar.id,
    policyId: policy.id,
    clientIds,
    webhooks,
    workers: seededWorkers,
    probeClient: { id: probe.client_id ?? probe.id, secret: probe.client_secret ?? probe.secret },
  };
}

// ------------------------------------------------------------------------------------------------
// The faults

/** Waits until each service has had a successful write after `at`. */
async function waitWrites(ledger, at, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const waiting = Object.entries(ledger.writeTimes)
      .filter(([, times]) => !times.length || times[times.length - 1] <= at)
      .map(([s]) => s);
    if (!waiting.length) return;
    if (Date.now() > deadline)
      throw new Error(`no successful write on ${waiting.join(', ')} within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

let pg;
function pgModule() {
  if (!pg) pg = require(require.resolve('pg', { paths: [repoRoot] }));
  return pg;
}

/** Tries a write on one host's PostgreSQL directly (not through the balancer). */
async function directWrite(hostName, note) {
  const { Client } = pgModule();
  const { superuser } = lab.credentials;
  const client = new Client({
    host: lab.hosts[hostName].ip,
    port: 5432,
    user: superuser.username,
    password: superuser.password,
    database: 'postgres',
    connectionTimeoutMillis: 3000,
    query_timeout: 8000,
  });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    return { accepted: false, how: `no connection (${error.message})` };
  }
  try {
    const { rows } = await client.query('SELECT pg_is_in_recovery() AS standby');
    try {
      // No statement_timeout: cancelling a commit that waits for its synchronous standby would
      // answer success for a commit made locally only. The client gives up instead (not acknowledged).
      await client.query('INSERT INTO ha_probe (note) VALUES ($1)', [note]);
      return { accepted: true, standby: rows[0].standby, how: 'INSERT committed' };
    } catch (error) {
      return { accepted: false, standby: rows[0].standby, how: error.message };
    }
  } catch (error) {
    return { accepted: false, how: error.message };
  } finally {
    client.end().catch(() => {});
  }
}

const FAULTS = {
  'leader-kill': {
    title: 'Patroni leader SIGKILLed (PostgreSQL + Patroni)',
    async run({ ledger, note }) {
      const old = await lab.leader();
      await lab.kill(old, { quiet: true });
      note(`killed ${old}`);
      const { leader, ms } = await lab.waitForLeader({ not: old, timeoutMs: 90_000 });
      note(`${leader} primary after ${seconds(ms)}`);
      await waitWrites(ledger, Date.now());
      const healed = await lab.heal(old, { quiet: true, timeoutMs: 180_000 });
      note(`${old} back as replica in ${seconds(healed.ms)}`);
    },
  },
  'redis-kill': {
    title: 'Redis master SIGKILLed',
    async run({ ledger, note }) {
      const { host: old } = await lab.redisMaster();
      await lab.kill(old, { quiet: true });
      note(`killed ${old}`);
      const { master, ms } = await lab.waitForRedisMaster({ not: old, timeoutMs: 90_000 });
      note(`${master} master after ${seconds(ms)}`);
      await waitWrites(ledger, Date.now());
      const healed = await lab.heal(old, { quiet: true, timeoutMs: 180_000 });
      note(`${old} back as replica in ${seconds(healed.ms)}`);
    },
  },
  'app-isolate': {
    title: 'app host cut off (cable down 15 s), then restored',
    async run({ note }) {
      await lab.isolate('app1', { quiet: true });
      note('app1 cable down');
      await sleep(15_000);
      const healed = await lab.heal('app1', { quiet: true, timeoutMs: 180_000 });
      note(`app1 serving again ${seconds(healed.ms)} after the cable came back`);
    },
  },
  'app-kill': {
    title: "app host's services SIGKILLed, started again after 10 s",
    async run({ note }) {
      await lab.kill('app2', { quiet: true });
      note('desk, link, hr on app2 killed');
      await sleep(10_000);
      const healed = await lab.heal('app2', { quiet: true, timeoutMs: 180_000 });
      note(`app2 restarted and ready in ${seconds(healed.ms)}`);
    },
  },
  rolling: {
    title: 'rolling restart of all six app instances',
    mustNotFail: true,
    async run({ note }) {
      const { ms } = await lab.rollingRestart({ quiet: true });
      note(`six instances restarted one by one in ${seconds(ms)}`);
    },
  },
  'db-partition': {
    title: 'Patroni leader partitioned from the other db hosts',
    async run({ ledger, note, results }) {
      const old = await lab.leader();
      await lab.partition(old, { quiet: true });
      note(`partitioned ${old}`);
      const { leader, ms } = await lab.waitForLeader({ not: old, timeoutMs: 90_000 });
      note(`${leader} primary after ${seconds(ms)}`);
      const probeNote = `ha split-brain probe ${Date.now()}`;
      const tried = await directWrite(old, probeNote);
      results.splitBrain = tried.accepted;
      note(
        `write on ${old} directly: ${tried.accepted ? 'ACCEPTED (split brain)' : `refused${tried.standby !== undefined ? ` (in recovery: ${tried.standby})` : ''}: ${tried.how.split('\n')[0]}`}`,
      );
      await waitWrites(ledger, Date.now());
      const healed = await lab.heal(old, { quiet: true, timeoutMs: 180_000 });
      note(`${old} back as replica in ${seconds(healed.ms)}`);
      const kept = await lab
        .psql(`SELECT count(*) FROM ha_probe WHERE note = '${probeNote}'`)
        .catch((error) => `unknown (${error.message})`);
      if (kept !== '0') note(`the probe write on the old leader is in the cluster after the heal: ${kept}`);
      if (kept !== '0' && kept !== undefined) results.splitBrain = results.splitBrain || kept !== '0';
    },
  },
};

// ------------------------------------------------------------------------------------------------
// Figures of a window of time

function windowStats(api, ledger, t0, t1) {
  const inWindow = (a) => a.t1 >= t0 && a.t1 <= t1;
  const load = api.attempts.filter((a) => a.phase === 'load' && inWindow(a));
  const failed = load.filter((a) => a.verdict !== 'ok');
  const calls = api.calls.filter((c) => c.phase === 'load' && inWindow(c));
  const gaveUp = calls.filter((c) => !c.ok);
  // The longest stretch without an acknowledged write that overlaps the window: from the last
  // success before it (or its start) to the next one (or its end).
  const longestGap = (times) => {
    const sorted = [...times].sort((a, b) => a - b);
    const before = sorted.filter((t) => t < t0).pop() ?? t0;
    const inside = sorted.filter((t) => t >= t0 && t <= t1);
    const points = [before, ...inside, ...(inside.length ? [] : [t1])];
    let ms = 0;
    for (let i = 1; i < points.length; i += 1) ms = Math.max(ms, points[i] - points[i - 1]);
    return ms;
  };
  const gapPerService = Object.fromEntries(
    Object.entries(ledger.writeTimes).map(([service, times]) => [service, longestGap(times)]),
  );
  const gap = { ms: longestGap(Object.values(ledger.writeTimes).flat()) };
  const byKind = {};
  for (const a of failed) {
    const kind = a.error ? (/no answer/.test(a.error) ? 'timeout' : a.error) : String(a.status);
    byKind[kind] = (byKind[kind] || 0) + 1;
  }
  return {
    attempts: load.length,
    requests: calls.length,
    failed: failed.length,
    failedKinds: byKind,
    firstFailure: failed.length ? Math.min(...failed.map((a) => a.t1)) : undefined,
    lastFailure: failed.length ? Math.max(...failed.map((a) => a.t1)) : undefined,
    gaveUp: gaveUp.length,
    gaveUpDetail: gaveUp.slice(0, 10),
    longestWithoutWrite: gap,
    gapPerService,
    fiveXX: api.attempts.filter((a) => inWindow(a) && a.status >= 500 && a.status !== 503),
  };
}

// ------------------------------------------------------------------------------------------------
// Checks after a fault

function sampleForReplay(ledger, t0, t1, count = 20) {
  const acked = ledger.creates.filter((c) => c.state === 'acked');
  const during = acked.filter((c) => c.ackAt >= t0 && c.ackAt <= t1);
  const retried = during.filter((c) => c.tries > 1);
  const before = acked.filter((c) => c.ackAt < t0).slice(-5);
  const older = acked.filter((c) => c.ackAt < t0).slice(0, -5);
  const random = Array.from({ length: 5 }, () => older[Math.floor(Math.random() * older.length)]).filter(Boolean);
  const chosen = new Map();
  for (const c of [...retried.slice(0, 8), ...before, ...during.slice(0, 5), ...random])
    if (chosen.size < count) chosen.set(c.key, c);
  return [...chosen.values()];
}

/**
 * The checks after a fault. Every finding lands once in `findings`, with the time of what caused it
 * (`at`: when the write it concerns was acknowledged, or the duty ran) and the check that found it.
 */
function createChecker({ api, probeApi, ledger, seedData, receiver, findings }) {
  const ourTickets = async () => (await checks.listAll(api, 'desk', '/tickets')).filter((t) => checks.keyOf(t.title));
  const known = new Set();
  const createOf = (kind, key) => ledger.creates.find((c) => c.kind === kind && c.key === key);
  return async function check({ label, t0, t1, final = false, slaGraceMs = 30_000 }) {
    const add = (list, id, item) => {
      if (known.has(id)) return;
      known.add(id);
      list.push({ ...item, foundAfter: label });
    };
    const out = {};
    const now = Date.now();
    const readable = await checks.checkReadable(api, ledger);
    out.readable = { checked: readable.checked };
    for (const l of readable.lost)
      add(findings.lost, `lost ${l.id}`, {
        at: now,
        what: `${l.kind} ${l.id} (key ${l.key}, acknowledged ${l.ackAt}) answers 404`,
        detail: l,
      });
    for (const l of readable.changesLost)
      add(findings.lost, `change ${l.id} ${l.problem}`, {
        at: now,
        what: `${l.kind} ${l.id} (key ${l.key}) ${l.problem}`,
        detail: l,
      });
    for (const u of readable.unverifiable)
      add(findings.unverifiable, `unverifiable ${u.id} ${label}`, {
        at: now,
        what: `${u.kind} ${u.id} could not be read back: ${u.status} ${u.body}`,
      });
    const dups = await checks.checkDuplicates(api, ledger, seedData);
    out.counts = dups.counts;
    out.unknown = { creates: dups.unknown, applied: dups.unknownApplied };
    // A key is one finding however it shows: a second row in a list, or a second row the replay
    // probe itself made when the key was not replayed.
    for (const d of dups.duplicates) {
      const entry = createOf(d.kind, d.key);
      add(findings.duplicates, `key ${d.kind} ${d.key}`, {
        at: entry ? (entry.ackAt ?? entry.startedAt) : now,
        what: `${d.kind} key ${d.key} has ${d.ids.length} rows: ${d.ids.join(', ')}`,
        detail: d,
      });
    }
    const sla = await checks.checkSlaEvents(api, ourTickets, { graceMs: slaGraceMs });
    out.sla = { events: sla.events, byCaller: sla.byCaller, expectedSettled: sla.expectedSettled };
    for (const p of sla.problems)
      add(p.twice ? findings.duplicates : findings.skipped, `sla ${p.ticket} ${p.problem}`, {
        at: p.at,
        what: `ticket ${p.ticket} (${p.title}): ${p.problem}`,
        detail: p,
      });
    const hooks = await checks.checkWebhooks(api, receiver.receipts, seedData.webhooks);
    out.hooks = {
      receipts: hooks.receipts,
      deliveries: hooks.deliveries,
      events: hooks.events,
      retriedAfterFailure: hooks.retriedAfterFailure,
    };
    for (const p of hooks.problems)
      add(findings.duplicates, `hook ${p.delivery ?? p.event} ${p.problem}`, {
        at: p.at,
        what: `webhook ${p.event ?? ''} ${p.delivery ?? ''}: ${p.problem}`,
        detail: p,
      });
    const replays = await checks.probeReplays(
      api,
      ledger,
      final ? finalReplaySample(ledger) : sampleForReplay(ledger, t0, t1),
    );
    out.replays = { sent: replays.sent, replayed: replays.replayed };
    for (const r of replays.failures) {
      add(findings.duplicates, `key ${r.kind} ${r.key}`, {
        at: Date.parse(r.acknowledgedAt),
        what: r.duplicate
          ? `${r.kind} key ${r.key} (acknowledged ${r.acknowledgedAt}) sent again created a second ${r.kind} ${r.newId}`
          : `${r.kind} key ${r.key} (acknowledged ${r.acknowledgedAt}) sent again was answered ${r.answer}, not replayed`,
        detail: r,
      });
    }
    out.rateLimit = await checks.probeRateLimit(probeApi);
    if (!out.rateLimit.ok)
      add(findings.rateLimit, `rate ${label}`, {
        at: now,
        what: `after ${label}: X-RateLimit-Remaining ${out.rateLimit.remaining.join(', ')} (not one shared counter)`,
      });
    return out;
  };
}

function finalReplaySample(ledger) {
  const acked = ledger.creates.filter((c) => c.state === 'acked');
  const retried = acked.filter((c) => c.tries > 1).slice(0, 40);
  const step = Math.max(1, Math.floor(acked.length / 30));
  const spread = acked.filter((_, i) => i % step === 0).slice(0, 30);
  return [...new Map([...retried, ...spread].map((c) => [c.key, c])).values()];
}

/**
 * A breach the sweep never recorded: the ticket's clocks as stored, and what holds locks in desk's
 * database (a transaction left open on a row makes the sweep skip it, SKIP LOCKED).
 */
async function diagnoseSla(problems) {
  const ids = problems
    .map((p) => p.ticket)
    .filter((id) => /^[0-9a-f-]{36}$/.test(id))
    .slice(0, 10);
  const out = {};
  const ask = async (name, sql) => {
    out[name] = await lab.psql(sql, { database: 'desk' }).catch((error) => `failed: ${error.message}`);
  };
  if (ids.length)
    await ask(
      'ticket_slas',
      `SELECT row_to_json(s) FROM ticket_slas s WHERE ticket_id IN (${ids.map((id) => `'${id}'`).join(',')})`,
    );
  await ask(
    'activity',
    "SELECT pid, client_addr, state, now() - xact_start AS in_transaction, wait_event_type, left(query, 200) FROM pg_stat_activity WHERE datname = 'desk' AND (state <> 'idle' OR xact_start IS NOT NULL)",
  );
  await ask(
    'locks',
    "SELECT l.pid, l.mode, l.granted, c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname IN ('ticket_slas', 'tickets')",
  );
  return out;
}

// ------------------------------------------------------------------------------------------------
// Main

async function main(state) {
  if (options.build) {
    log('building the services (pnpm exec turbo run build)');
    const t = Date.now();
    await run('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], {
      timeoutMs: 20 * 60_000,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' },
    });
    state.timings.build = Date.now() - t;
  }
  log(`lab up with the apps from ${repoRoot} (variant: ${options.variant})`);
  state.labOwned = true;
  const t = Date.now();
  await lab.up({
    apps: repoRoot,
    quiet: true,
    env: {
      // The load is one API client at ~30 requests per second; the default 600 per minute would
      // make it a rate-limit test.
      RATE_LIMIT_PER_MINUTE: '1000000',
      SLA_SWEEP_INTERVAL_MS: '1000',
      ...variantEnv(),
    },
  });
  state.timings.labUp = Date.now() - t;
  // The replica the no-idempotency variant points at stays one: Sentinel never promotes it.
  if (options.variant === 'no-idempotency')
    await redisCommand(lab.hosts.redis3.ip, 6379, ['CONFIG', 'SET', 'replica-priority', '0']);
  await lab.psql(
    'CREATE TABLE IF NOT EXISTS ha_probe (id serial PRIMARY KEY, note text NOT NULL, at timestamptz NOT NULL DEFAULT now())',
  );

  const receiver = await startReceiver({ host: lab.topology.ROOT_IP });
  state.receiver = receiver;
  const e = lab.endpoints();
  const urls = { desk: e.serviceUrl('desk'), link: e.serviceUrl('link'), hr: e.serviceUrl('hr') };
  const runId = Math.random().toString(36).slice(2, 7);
  const api = createApi({
    urls,
    clientId: lab.credentials.apiClient.clientId,
    clientSecret: lab.credentials.apiClient.clientSecret,
    runId,
  });
  state.api = api;
  await api.fetchToken();
  const seedData = await seed(api, receiver.url, options.workers);
  log(
    `seeded: SLA policy (1-minute targets) on 3 clients, webhooks to ${receiver.url}, ${options.workers} employees with contracts`,
  );
  const probeApi = createApi({
    urls,
    clientId: seedData.probeClient.id,
    clientSecret: seedData.probeClient.secret,
    runId: `${runId}p`,
  });

  const load = createLoad({ api, runId, seed: seedData, workers: options.workers, ratePerSec: options.rate });
  state.load = load;
  state.ledger = load.ledger;
  load.start();
  state.loadStartedAt = Date.now();
  log(`load: ${options.workers} workers, ~${options.rate} requests/s`);
  await sleep(15_000);
  await waitWrites(load.ledger, state.loadStartedAt, 60_000);

  const check = createChecker({ api, probeApi, ledger: load.ledger, seedData, receiver, findings: state.findings });
  for (const id of options.faults) {
    const fault = FAULTS[id];
    if (!fault) throw new Error(`unknown fault ${id} (${Object.keys(FAULTS).join(', ')})`);
    const row = { id, title: fault.title, notes: [], mustNotFail: fault.mustNotFail };
    state.rows.push(row);
    const note = (text) => {
      row.notes.push(`+${seconds(Date.now() - row.t0)} ${text}`);
      log(`${id}: ${text}`);
    };
    row.t0 = Date.now();
    log(`fault ${id}: ${fault.title}`);
    await fault.run({ ledger: load.ledger, note, results: row });
    await lab.waitHealthy({ timeoutMs: 180_000, quiet: true });
    await waitWrites(load.ledger, Date.now());
    await sleep(3000);
    row.t1 = Date.now();
    row.stats = windowStats(api, load.ledger, row.t0, row.t1);
    log(
      `${id}: ${row.stats.failed} failed attempts, longest without a write ${seconds(row.stats.longestWithoutWrite.ms)}; checking`,
    );
    const tc = Date.now();
    row.checks = await check({ label: id, t0: row.t0, t1: row.t1 });
    row.checkMs = Date.now() - tc;
    const found = (list) => list.filter((f) => f.foundAfter === id).length;
    log(
      `${id}: checked ${row.checks.readable.checked} writes in ${seconds(row.checkMs)}: lost ${found(state.findings.lost)}, duplicate effects ${found(state.findings.duplicates)}, replays ${row.checks.replays.replayed}/${row.checks.replays.sent}, rate limit ${row.checks.rateLimit.ok ? 'shared' : 'NOT shared'}`,
    );
  }

  log('stopping the load');
  await load.stop();
  state.loadStoppedAt = Date.now();
  // Every ticket's targets fall due a minute after it opened: wait for the last ones and the sweep.
  const lastTicket = Math.max(
    0,
    ...load.ledger.creates.filter((c) => c.kind === 'ticket' && c.ackAt).map((c) => c.ackAt),
  );
  const waitDue = Math.min(90_000, Math.max(0, lastTicket + 60_000 + 5_000 - Date.now()));
  log(`waiting ${seconds(waitDue)} for the last SLA targets to fall due`);
  await sleep(waitDue);
  const final = { t0: state.loadStartedAt, t1: Date.now() };
  // Duties still catching up get a bounded while: breach events and deliveries that are due.
  const ourTickets = async () => (await checks.listAll(api, 'desk', '/tickets')).filter((t) => checks.keyOf(t.title));
  const missingSla = await checks.settle(
    async () => (await checks.checkSlaEvents(api, ourTickets, { graceMs: 0 })).problems.filter((p) => p.skipped),
    { timeoutMs: 60_000 },
  );
  if (missingSla.length) state.slaDiagnosis = await diagnoseSla(missingSla);
  const missingHooks = await checks.settle(
    async () => checks.missingDeliveries(load.ledger, receiver.receipts, await ourTickets(), { graceMs: 0 }),
    { timeoutMs: 120_000, intervalMs: 5000 },
  );
  // Breaches skipped are what the bounded wait above left: the last check looks for doubles only.
  state.final = await check({ label: 'final', ...final, final: true, slaGraceMs: Number.POSITIVE_INFINITY });
  for (const p of missingSla)
    state.findings.skipped.push({
      at: p.at,
      foundAfter: 'final',
      what: `ticket ${p.ticket} (${p.title}): ${p.problem} — its trail: ${(p.trail || []).join('; ')}`,
      detail: p,
    });
  for (const m of missingHooks)
    state.findings.skipped.push({ at: Date.now(), foundAfter: 'final', what: `never delivered: ${m}` });
  state.final.stats = windowStats(api, load.ledger, state.loadStartedAt, state.loadStoppedAt);
  for (const a of load.ledger.anomalies) {
    const detail = { ...a, what: undefined, at: undefined };
    if (/replay/.test(a.what))
      state.findings.duplicates.push({
        at: a.at,
        foundAfter: 'load',
        what: `${a.what}: ${a.kind} key ${a.key} answered ${a.status} after ${a.tries} attempts`,
        detail,
      });
    else state.findings.unexpected.push({ at: a.at, foundAfter: 'load', what: a.what, detail });
  }
}

function collectLogLines(requestIds) {
  const lines = [];
  const runDir = lab.topology.defaultRunDir();
  for (const host of ['app1', 'app2']) {
    for (const service of ['desk', 'link', 'hr']) {
      const file = path.join(runDir, host, `${service}.log`);
      let text;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      for (const line of text.split('\n'))
        if (requestIds.some((id) => line.includes(id))) lines.push(`${host}/${service}: ${line.slice(0, 1500)}`);
    }
  }
  return lines;
}

async function teardown(state, { failed }) {
  if (state.load && state.load.running) await Promise.race([state.load.stop(), sleep(5000)]);
  if (state.receiver) await state.receiver.close().catch(() => {});
  if (!state.labOwned) return;
  if (options.keep) {
    log('lab kept up (--keep): `node lab/lab.js status`, faults by hand, `node lab/lab.js down` to remove it');
    return;
  }
  log(failed ? `removing the lab; its logs stay in ${lab.topology.defaultRunDir()}` : 'removing the lab');
  await lab.down({ quiet: true, keepLogs: failed }).catch((error) => log(`down failed: ${error.message}`));
}

async function entry() {
  const state = {
    rows: [],
    timings: {},
    options,
    findings: { lost: [], duplicates: [], skipped: [], rateLimit: [], unverifiable: [], unexpected: [] },
  };
  let failed = true;
  let interrupted = false;
  const onSignal = (signal) => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping and removing the lab`);
    teardown(state, { failed: true }).finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const watchdog = setTimeout(
    () => onSignal(`no end after ${options.deadlineMs / 60_000} minutes`),
    options.deadlineMs,
  );
  watchdog.unref();
  let error;
  try {
    await main(state);
  } catch (caught) {
    error = caught;
    log(`FAILED: ${caught.stack || caught.message}`);
  }
  if (interrupted) return;
  try {
    state.totalMs = Date.now() - started;
    const report = formatReport(state, { error, collectLogLines, commit: await gitCommit() });
    process.stdout.write(`\n${report.text}\n`);
    fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
    fs.writeFileSync(resultsFile, `${report.markdown}\n`);
    // Every attempt of the run, for a look at what a figure or a finding stands on (not committed).
    if (state.api) fs.writeFileSync(attemptsFile, `${state.api.attempts.map((a) => JSON.stringify(a)).join('\n')}\n`);
    log(`saved ${path.relative(repoRoot, resultsFile)}`);
    failed = Boolean(error) || !report.passed;
  } catch (caught) {
    log(`report failed: ${caught.stack || caught.message}`);
  }
  await teardown(state, { failed });
  clearTimeout(watchdog);
  log(`${failed ? 'FAILED' : 'passed'} in ${seconds(Date.now() - started)}`);
  // Sockets of the services' keep-alive or a stuck probe must not keep the process alive.
  process.exit(failed ? 1 : 0);
}

async function gitCommit() {
  try {
    const { stdout } = await run('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'], { timeoutMs: 5000 });
    return stdout.trim();
  } catch {
    return 'unknown';
  }
}

entry();
