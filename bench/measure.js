'use strict';
// How the benchmarks time one comparison: two sides (a service and its baseline, or one service on
// two tenants) under autocannon, in alternating rounds.
const autocannon = require('autocannon');
const { pacedRound } = require('./paced');
const { cpuSeconds, machineCpu, median, memory, serviceMetrics } = require('./support');

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

/** autocannon's options for one side of a case at full speed (a closed loop). */
function loadOf({ url, method = 'GET', headers = {}, body, paths, connections = CONNECTIONS }) {
  let next = 0;
  return {
    url,
    method,
    connections,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body && JSON.stringify(body),
    // Rotate through many ids, so one cached row does not stand for all.
    ...(paths
      ? { requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) }] }
      : {}),
  };
}

/** µs of CPU per request: `cpu` seconds over `requests`. */
const microsPerRequest = (seconds, requests) => Math.round((seconds / requests) * 1e7) / 10;

/**
 * The rounds of one side as one row: req/s over all rounds, p50 and p99 the median round's; with
 * `cpu`, the CPU per request of the side's server and of the whole machine, over all rounds and per
 * round; for a side whose service serves /metrics, the full collections it made during the rounds.
 */
function rowOf({ name, target, pid }, rounds, rss) {
  const seconds = rounds.reduce((sum, r) => sum + r.duration, 0);
  const requests = rounds.reduce((sum, r) => sum + r.requests.total, 0);
  const cpu = rounds[0].cpu
    ? {
        server_cpu_us: microsPerRequest(
          rounds.reduce((sum, r) => sum + r.cpu.server, 0),
          requests,
        ),
        machine_cpu_us: microsPerRequest(
          rounds.reduce((sum, r) => sum + r.cpu.machine, 0),
          requests,
        ),
      }
    : {};
  const row = {
    name,
    target,
    requests_per_sec: Math.round(requests / seconds),
    p50_ms: median(rounds.map((r) => r.latency.p50)),
    p99_ms: median(rounds.map((r) => r.latency.p99)),
    requests,
    ...cpu,
    ...(rounds[0].fullCollections === undefined
      ? {}
      : { full_collections: rounds.reduce((sum, r) => sum + r.fullCollections, 0) }),
    rounds: rounds.map((r) => ({
      requests_per_sec: Math.round(r.requests.average),
      p50_ms: r.latency.p50,
      p99_ms: r.latency.p99,
      ...(r.cpu
        ? {
            server_cpu_us: microsPerRequest(r.cpu.server, r.requests.total),
            machine_cpu_us: microsPerRequest(r.cpu.machine, r.requests.total),
          }
        : {}),
    })),
    non_2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    errors: rounds.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    ...(pid ? { rss_start_mb: Math.round(rss.start), rss_end_mb: Math.round(rss.end) } : {}),
  };
  console.log(
    `  ${target.padEnd(8)} ${name.padEnd(44)}${pid ? ` RSS ${row.rss_start_mb} → ${row.rss_end_mb} MB ` : ' '} ${String(row.requests_per_sec).padStart(7)} req/s  p50 ${row.p50_ms} ms  p99 ${row.p99_ms} ms  (rounds: ${row.rounds.map((r) => r.requests_per_sec).join(', ')} req/s)${row.non_2xx || row.errors ? `  (!) ${row.non_2xx} non-2xx, ${row.errors} errors` : ''}`,
  );
  return row;
}

/**
 * `seconds` of load on one side: at full speed under autocannon, or, for a side with a `rate`, at
 * that constant offered load (paced.js).
 */
function loadFor(s, seconds) {
  if (s.side.rate) return pacedRound({ connections: CONNECTIONS, ...s.side }, seconds);
  return autocannon({ ...s.load, duration: seconds });
}

/**
 * The full (mark-compact) collections a service has made since it started: prom-client's GC
 * histogram on its /metrics. Each stops or slows every request in flight, so they make the tail.
 */
async function fullCollections(url) {
  return (await serviceMetrics(new URL(url).origin))('nodejs_gc_duration_seconds_count', { kind: 'major' });
}

/**
 * One round of one side; with `cpu`, the CPU seconds its server (`pid`) and the whole machine used
 * meanwhile; for a side with `metrics` (its service serves /metrics), its full collections meanwhile.
 */
async function roundOf(s, seconds, cpu) {
  const collections = s.side.metrics ? await fullCollections(s.side.url) : undefined;
  const server = cpu ? cpuSeconds(s.side.pid) : 0;
  const machine = cpu ? machineCpu().busy : 0;
  const result = await loadFor(s, seconds);
  return {
    ...result,
    ...(cpu ? { cpu: { server: cpuSeconds(s.side.pid) - server, machine: machineCpu().busy - machine } } : {}),
    ...(collections === undefined ? {} : { fullCollections: (await fullCollections(s.side.url)) - collections }),
  };
}

/**
 * Measures two sides of a comparison (a service and its baseline, or two tenants) in alternating
 * rounds: after a 2 s warm-up of each, ROUNDS rounds of DURATION / ROUNDS seconds, A then B. The
 * machine's speed drifts by more than the differences measured (a shared 2-CPU VM), and
 * alternating puts both sides under the same drift, where measuring one whole side after the
 * other did not. The RSS of a side with a pid is read before its first round and after its last.
 * `rounds` other than ROUNDS; `abba`: every other round B then A, so neither side always follows
 * the other; `cpu`: each side's CPU per request, its server's (`pid`) and the machine's.
 */
async function measurePair(a, b, { duration = DURATION, warmup = 2, rounds = ROUNDS, abba = false, cpu = false } = {}) {
  const sides = [a, b].map((side) => ({ side, load: loadOf(side), rounds: [], rss: {} }));
  for (const s of sides) await loadFor(s, warmup); // warm-up: JIT, pools, PostgreSQL's cache
  for (const s of sides) if (s.side.pid) s.rss.start = memory(s.side.pid).rss_mb;
  for (let round = 0; round < rounds; round++) {
    for (const s of abba && round % 2 === 1 ? [...sides].reverse() : sides)
      s.rounds.push(await roundOf(s, duration / rounds, cpu));
  }
  for (const s of sides) if (s.side.pid) s.rss.end = memory(s.side.pid).rss_mb;
  return sides.map((s) => rowOf(s.side, s.rounds, s.rss));
}

module.exports = { measurePair, loadOf, ROUNDS, DURATION, CONNECTIONS };
