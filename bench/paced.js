'use strict';
// One side of a comparison at a constant offered load: an open loop, as a service's callers are.
// autocannon's rate options are a quota per connection and second: each connection sends back to
// back until its share of the second is used, then waits for the next second, so half the rate is
// full speed for half of every second; and its coordinated-omission correction assumes 1 ms
// between requests whatever the rate, adding a sample per millisecond of every slower answer. Here
// request i is due at start + i / rate and is sent when due, on a free keep-alive connection or
// after the one it waits for; its latency counts from when it was due, so a stall of the server
// delays every request due during it, as it would a real caller's.
//
// Each round's client runs in a process of its own: a stall of the client delays the requests due
// during it and counts as the server's latency, and the benchmark's own process holds the seeded
// data (ids, tokens, results), whose full collections stalled it in the middle of rounds.
const { fork } = require('node:child_process');
const http = require('node:http');
const { percentile, round } = require('./support');

/**
 * Seconds of pacing before the recorded ones. A round starts on new connections to a server that
 * sat idle while the other side ran: opening them and the server's first answers after a pause
 * queue the first requests behind each other for a fraction of a second, a start-up cost that is
 * not the latency at a steady load (and in a round of a few seconds it would be the whole p99).
 */
const LEAD_IN_S = Number(process.env.BENCH_LEAD_IN ?? 1);

/**
 * `seconds` of requests at `rate` a second over at most `connections` keep-alive connections, after
 * LEAD_IN_S unrecorded; the answer in autocannon's shape where measure.js reads it (requests,
 * latency p50 and p99 in ms to a tenth, duration, non2xx, errors, timeouts).
 */
function pacedRound(options, seconds) {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result;
    child.once('message', (message) => (result = message));
    child.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`the paced round's client exited with code ${code}`)),
    );
    child.send({ options, seconds });
  });
}

/** The round itself, in the client's process. */
function runRound({ url, method = 'GET', headers = {}, body, paths, connections, rate }, seconds) {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const requestHeaders = {
    ...headers,
    ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
  };
  const leadIn = Math.round(rate * LEAD_IN_S);
  const total = leadIn + Math.max(1, Math.round(rate * seconds));
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let sent = 0;
  let settled = 0;
  const start = performance.now();
  const dueAt = (i) => start + (i * 1000) / rate;
  return new Promise((resolve) => {
    const settle = () => {
      if (++settled < total) return;
      const duration = (performance.now() - dueAt(leadIn)) / 1000;
      agent.destroy();
      latencies.sort((a, b) => a - b);
      resolve({
        duration,
        requests: { total: latencies.length, average: latencies.length / duration },
        latency: { p50: round(percentile(latencies, 0.5), 1), p99: round(percentile(latencies, 0.99), 1) },
        non2xx,
        errors,
        timeouts,
      });
    };
    const send = (i) => {
      const due = dueAt(i);
      const recorded = i >= leadIn;
      const path = paths ? paths[i % paths.length] : `${target.pathname}${target.search}`;
      // Each request ends once: answered, failed, or given up after 10 s (autocannon's default).
      let ended = false;
      const end = (outcome) => {
        if (ended) return;
        ended = true;
        if (recorded && outcome === 'error') errors++;
        if (recorded && outcome === 'timeout') timeouts++;
        settle();
      };
      const request = http.request(
        { agent, host: target.hostname, port: target.port, method, path, headers: requestHeaders },
        (response) => {
          const failed = response.statusCode < 200 || response.statusCode > 299;
          response.on('end', () => {
            if (recorded && !ended) {
              latencies.push(performance.now() - due);
              if (failed) non2xx++;
            }
            end('answered');
          });
          response.on('error', () => end('error'));
          response.resume();
        },
      );
      request.setTimeout(10_000, () => {
        end('timeout');
        request.destroy();
      });
      request.on('error', () => end('error'));
      request.end(payload);
    };
    // Timers fire about once a millisecond at best: each tick sends every request due by then.
    const ticker = setInterval(() => {
      const now = performance.now();
      while (sent < total && dueAt(sent) <= now) send(sent++);
      if (sent >= total) clearInterval(ticker);
    }, 1);
  });
}

if (require.main === module) {
  process.once('message', async ({ options, seconds }) => {
    const result = await runRound(options, seconds);
    process.send(result, () => process.disconnect());
  });
}

module.exports = { pacedRound };
