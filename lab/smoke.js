#!/usr/bin/env node
'use strict';
// The lab's own check (not part of `pnpm test`): builds the lab, writes through HAProxy while the
// Patroni leader is SIGKILLed and while the leader is partitioned from the other database hosts,
// writes to Redis while its master is SIGKILLed, and checks that every acknowledged write is
// still there. Prints the measured windows, then removes the lab.
//
//   node lab/smoke.js [--apps] [--strict] [--no-partition] [--keep]
//
// --apps: also runs desk, link and hr from this checkout (built) and waits for them to be ready
// again behind HAProxy after each fault. --keep leaves the lab up afterwards.

const path = require('node:path');
const lab = require('./lab.js');
const { redisCommands, redisCommand, sleep, seconds } = require('./lib/util');

const repoRoot = path.resolve(__dirname, '..');
const args = new Set(process.argv.slice(2));
let pg;
try {
  // The repository's own devDependency (root package.json); the lab itself needs no package.
  pg = require(require.resolve('pg', { paths: [repoRoot] }));
} catch {
  process.stderr.write('smoke: the pg package is missing: run pnpm install at the repository root\n');
  process.exit(2);
}

const log = (message) => process.stderr.write(`[smoke ${new Date().toISOString().slice(11, 23)}] ${message}\n`);

/** Attempts `fn` every intervalMs until stopped; keeps the time of every success and failure. */
function loop(name, fn, intervalMs) {
  const successes = [];
  const failures = [];
  let stopped = false;
  let n = 0;
  const done = (async () => {
    while (!stopped) {
      n += 1;
      const id = n;
      const started = Date.now();
      try {
        const value = await fn(id);
        successes.push({ t: Date.now(), id, value });
      } catch (error) {
        failures.push({ t: Date.now(), id, error: error.message });
      }
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
  })();
  return {
    name,
    successes,
    failures,
    async stop() {
      stopped = true;
      await done;
    },
    /**
     * The longest time without a success around a fault at `at`, until `until` (when the
     * recovery was seen): the largest gap between consecutive successes in that span.
     */
    longestGap(at, until) {
      let longest = 0;
      for (let i = 1; i < successes.length; i += 1) {
        const [previous, next] = [successes[i - 1], successes[i]];
        if (next.t > at && previous.t < until) longest = Math.max(longest, next.t - previous.t);
      }
      return longest;
    },
    firstSuccessAfter(at) {
      return successes.find((s) => s.t > at);
    },
    async waitSuccessAfter(at, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (successes.some((s) => s.t > at)) return;
        await sleep(100);
      }
      throw new Error(
        `${name}: no successful write within ${timeoutMs / 1000} s after the fault (last error: ${failures.at(-1)?.error})`,
      );
    },
  };
}

function pgWriter(endpoint) {
  let client;
  return async (id) => {
    if (!client) {
      const fresh = new pg.Client({
        connectionString: endpoint,
        connectionTimeoutMillis: 2000,
        query_timeout: 5000,
        application_name: 'smoke',
      });
      fresh.on('error', () => {});
      try {
        await fresh.connect();
      } catch (error) {
        fresh.end().catch(() => {});
        throw error;
      }
      client = fresh;
    }
    try {
      await client.query('INSERT INTO writes (id) VALUES ($1)', [id]);
      return id;
    } catch (error) {
      const dead = client;
      client = undefined;
      dead.end().catch(() => {});
      throw error;
    }
  };
}

/** SET then WAIT 1: "acked" once the master answered OK, "replicated" once a replica had it too. */
function redisWriter() {
  let master;
  return async (id) => {
    try {
      if (!master) master = (await lab.redisMaster()).ip;
      if (!master) throw new Error('no master agreed by the Sentinels');
      const [set, replicas] = await redisCommands(
        master,
        6379,
        [
          ['SET', `smoke:${id}`, String(id)],
          ['WAIT', '1', '500'],
        ],
        { timeoutMs: 1500 },
      );
      if (set instanceof Error) throw set;
      return { replicated: Number(replicas) >= 1 };
    } catch (error) {
      master = undefined;
      throw error;
    }
  };
}

async function query(endpoint, sql, params) {
  const client = new pg.Client({ connectionString: endpoint, connectionTimeoutMillis: 3000, query_timeout: 10_000 });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function waitAppsReady(results, label) {
  if (!args.has('--apps')) return;
  const started = Date.now();
  const e = lab.endpoints();
  for (const service of ['desk', 'link', 'hr']) {
    for (;;) {
      try {
        const res = await fetch(`${e.serviceUrl(service)}/readyz`, { signal: AbortSignal.timeout(2000) });
        if (res.status === 200) break;
      } catch {
        // not yet
      }
      if (Date.now() - started > 90_000) throw new Error(`${service} not ready behind HAProxy 90 s after ${label}`);
      await sleep(250);
    }
  }
  results.push({ step: `apps ready behind HAProxy after ${label}`, value: seconds(Date.now() - started) });
}

async function main() {
  const results = [];
  const problems = [];
  const upResult = await lab.up({ strict: args.has('--strict'), apps: args.has('--apps') ? repoRoot : undefined });
  results.push({ step: 'lab up', value: seconds(upResult.ms) });
  const e = lab.endpoints();
  await lab.psql("SELECT 1 FROM pg_database WHERE datname = 'smoke'").then(async (found) => {
    if (found !== '1') await lab.psql('CREATE DATABASE smoke OWNER msp');
  });
  const smokeUrl = e.databaseUrl('smoke');
  await query(
    smokeUrl,
    'CREATE TABLE IF NOT EXISTS writes (id integer PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp())',
  );

  // --- PostgreSQL: the leader SIGKILLed, then partitioned --------------------------------------
  const writes = loop('postgres writes', pgWriter(smokeUrl), 50);
  await sleep(3000);
  if (!writes.successes.length) throw new Error(`no write through HAProxy succeeded: ${writes.failures.at(-1)?.error}`);

  const faults = [['kill', 'SIGKILL of PostgreSQL + Patroni on the leader']];
  if (!args.has('--no-partition')) faults.push(['partition', 'leader partitioned from the other db hosts']);
  for (const [kind, label] of faults) {
    const oldLeader = await lab.leader();
    const at = Date.now();
    await lab[kind](oldLeader, { quiet: true });
    log(`${label} (${oldLeader})`);
    const elected = await lab.waitForLeader({ not: oldLeader, timeoutMs: 60_000 });
    const electedMs = Date.now() - at;
    await writes.waitSuccessAfter(at + electedMs, 60_000);
    const gap = writes.longestGap(at, writes.firstSuccessAfter(at + electedMs).t);
    results.push({
      step: `${label}: new leader`,
      value: `${elected.leader} serving as primary after ${seconds(electedMs)}`,
    });
    results.push({ step: `${label}: no successful write for`, value: seconds(gap) });
    if (kind === 'partition') {
      // No split brain: the old leader, still reachable from the balancer, must not take a write.
      let accepted = false;
      try {
        await query(
          `postgresql://postgres:lab-postgres-password@${lab.hosts[oldLeader].ip}:5432/smoke`,
          'INSERT INTO writes (id) VALUES (-1)',
        );
        accepted = true;
      } catch (error) {
        results.push({ step: `${label}: old leader refuses writes`, value: error.message.split('\n')[0] });
      }
      if (accepted) problems.push(`${oldLeader} accepted a write while partitioned (split brain)`);
    }
    await waitAppsReady(results, label);
    await sleep(2000);
    const healed = await lab.heal(oldLeader, { quiet: true });
    results.push({ step: `${label}: ${oldLeader} back as replica`, value: seconds(healed.ms) });
  }
  await sleep(1000);
  await writes.stop();
  const stored = new Set((await query(smokeUrl, 'SELECT id FROM writes')).map((row) => row.id));
  const lost = writes.successes.filter((s) => !stored.has(s.id));
  results.push({ step: 'postgres: acknowledged writes', value: String(writes.successes.length) });
  results.push({ step: 'postgres: acknowledged writes lost', value: String(lost.length) });
  results.push({ step: 'postgres: failed attempts (retried)', value: String(writes.failures.length) });
  if (lost.length)
    problems.push(
      `${lost.length} acknowledged PostgreSQL writes lost: ${lost
        .slice(0, 10)
        .map((s) => s.id)
        .join(', ')}`,
    );
  if (stored.has(-1)) problems.push('the write to the partitioned old leader is in the table');

  // --- Redis: the master SIGKILLed --------------------------------------------------------------
  const sets = loop('redis writes', redisWriter(), 50);
  await sleep(2000);
  const oldMaster = (await lab.redisMaster()).host;
  const at = Date.now();
  await lab.kill(oldMaster, { quiet: true });
  log(`SIGKILL of the Redis master (${oldMaster})`);
  const promoted = await lab.waitForRedisMaster({ not: oldMaster, timeoutMs: 60_000 });
  const promotedMs = Date.now() - at;
  await sets.waitSuccessAfter(at + promotedMs, 60_000);
  const gap = sets.longestGap(at, sets.firstSuccessAfter(at + promotedMs).t);
  results.push({
    step: 'Redis master killed: Sentinel promoted',
    value: `${promoted.master} after ${seconds(promotedMs)}`,
  });
  results.push({ step: 'Redis master killed: no successful write for', value: seconds(gap) });
  await waitAppsReady(results, 'the Redis failover');
  const healedRedis = await lab.heal(oldMaster, { quiet: true });
  results.push({ step: `Redis: ${oldMaster} back as replica`, value: seconds(healedRedis.ms) });
  await sleep(500);
  await sets.stop();
  const master = lab.hosts[(await lab.redisMaster()).host].ip;
  const keys = new Set(await redisCommand(master, 6379, ['KEYS', 'smoke:*']));
  const replicated = sets.successes.filter((s) => s.value.replicated);
  const lostReplicated = replicated.filter((s) => !keys.has(`smoke:${s.id}`));
  const lostAcked = sets.successes.filter((s) => !keys.has(`smoke:${s.id}`));
  results.push({
    step: 'Redis: writes acknowledged (OK) / also on a replica (WAIT 1)',
    value: `${sets.successes.length} / ${replicated.length}`,
  });
  results.push({
    step: 'Redis: lost, of those acknowledged / of those on a replica',
    value: `${lostAcked.length} / ${lostReplicated.length}`,
  });
  if (lostReplicated.length) problems.push(`${lostReplicated.length} Redis writes confirmed by WAIT were lost`);

  await lab.waitHealthy({ timeoutMs: 120_000 });
  const width = Math.max(...results.map((r) => r.step.length));
  process.stdout.write(`\n${results.map((r) => `${r.step.padEnd(width)}  ${r.value}`).join('\n')}\n`);
  if (problems.length) process.stdout.write(`\nPROBLEMS:\n- ${problems.join('\n- ')}\n`);
  return problems.length === 0;
}

main()
  .then(async (ok) => {
    if (!args.has('--keep')) await lab.down({ quiet: true });
    else log('lab kept up (node lab/lab.js down removes it)');
    process.exitCode = ok ? 0 : 1;
  })
  .catch(async (error) => {
    process.stderr.write(`smoke: ${error.stack || error.message}\n`);
    if (!args.has('--keep')) await lab.down({ keepLogs: true, quiet: true }).catch(() => {});
    process.stderr.write(`smoke: logs kept in ${process.env.LAB_RUN_DIR || '/tmp/msplab'}\n`);
    process.exitCode = 1;
  });
