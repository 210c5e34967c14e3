'use strict';
// `pnpm bench:floor`: what Express 5 itself costs per request, before any of the services' code.
// The same handler (a fixed ticket as JSON, no database, no middleware) served by node:http, by an
// Express app as the services create it (express(), no x-powered-by, strong ETags: the version
// packages/http uses) on a plain node:http server, as startServer serves it, each in a process
// of its own, under the load of `pnpm bench` (10 connections) in alternating rounds. Reports each server's CPU time per request (utime + stime
// from /proc/<pid>/stat) and req/s, and writes bench/results/latest-floor.md. Environment
// (optional): BENCH_DURATION (seconds per server, default 12), BENCH_ROUNDS (default 3),
// BENCH_CONNECTIONS (default 10), BENCH_RATE (req/s for both servers alike instead of as many as
// each answers: the same pace makes the kernel's share of a socket write alike too).
const { fork } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const path = require('node:path');
const autocannon = require('autocannon');
const { cpuSeconds, describeMachine, machine, median, round, serverNode } = require('./support');

const DURATION = Number(process.env.BENCH_DURATION ?? 12);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 0);
const TICKET = {
  id: '5f0c4e7e-8a51-4c1e-9d0e-3b2a1c4d5e6f',
  number: 4711,
  title: 'Printer on floor 3 is jammed',
  description: 'Paper jam in tray 2.',
  priority: 'high',
  category: 'hardware',
  status: 'open',
  client_id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  assignee_id: null,
  created_at: '2026-11-24T08:00:00.000Z',
  updated_at: '2026-11-24T08:00:00.000Z',
  resolved_at: null,
  closed_at: null,
};

/** The child: one server, `node` or `express`, answering GET /api/v1/tickets/:id with TICKET. */
function serve(kind) {
  const http = require('node:http');
  let handler;
  if (kind !== 'node') {
    const express = require(require.resolve('express', { paths: [path.resolve(__dirname, '../packages/http')] }));
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', 'strong');
    app.get('/api/v1/tickets/:id', (_req, res) => {
      res.json(TICKET);
    });
    handler = app;
  } else {
    handler = (_req, res) => {
      const json = JSON.stringify(TICKET);
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(json),
      });
      res.end(json);
    };
  }
  const server = http.createServer(handler).listen(0, '127.0.0.1', () => process.send(server.address().port));
  process.on('disconnect', () => process.exit(0));
}

async function main() {
  const servers = [];
  try {
    for (const kind of ['node', 'express']) {
      const child = fork(__filename, ['serve', kind], {
        execPath: serverNode().path,
        execArgv: serverNode().flags,
        env: { ...process.env, ...serverNode().env },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      const port = await new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`${kind} exited with code ${code}`)));
      });
      servers.push({ kind, child, url: `http://127.0.0.1:${port}/api/v1/tickets/${TICKET.id}`, rounds: [] });
    }
    for (const s of servers) await autocannon({ url: s.url, connections: CONNECTIONS, duration: 3 }); // warm-up: the JIT
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of servers) {
        const before = cpuSeconds(s.child.pid) * 1e6;
        const result = await autocannon({
          url: s.url,
          connections: CONNECTIONS,
          duration: DURATION / ROUNDS,
          ...(RATE ? { overallRate: RATE } : {}),
        });
        if (result.non2xx || result.errors)
          throw new Error(`${s.kind}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        s.rounds.push({
          cpu_us_per_request: round((cpuSeconds(s.child.pid) * 1e6 - before) / result.requests.total),
          requests_per_sec: Math.round(result.requests.average),
        });
      }
    }
    const rows = servers.map((s) => ({
      kind: s.kind,
      cpu_us_per_request: median(s.rounds.map((r) => r.cpu_us_per_request)),
      requests_per_sec: median(s.rounds.map((r) => r.requests_per_sec)),
      rounds: s.rounds,
    }));
    const [node, express] = rows;
    const label = { node: 'node:http', express: 'Express 5 on a plain node:http server' };
    const lines = [
      '# What Express 5 costs per request (`pnpm bench:floor`)',
      '',
      `Run ${new Date().toISOString()} on ${describeMachine(machine(''))}.`,
      `The same handler (one ticket as JSON, no database, no middleware) on node:http and on an Express 5 app as the services create it; autocannon, ${CONNECTIONS} connections${RATE ? ` at ${RATE} req/s` : ''}, ${DURATION} s per server in ${ROUNDS} alternating rounds after 3 s of warm-up; medians of the rounds. CPU: the server process's utime + stime per request.`,
      '',
      '| server | CPU µs per request | req/s |',
      '|---|---:|---:|',
      ...rows.map((r) => `| ${label[r.kind]} | ${r.cpu_us_per_request} | ${r.requests_per_sec} |`),
      '',
      `On a plain server Express adds ${round(express.cpu_us_per_request - node.cpu_us_per_request)} µs of CPU to every request (×${round(express.cpu_us_per_request / node.cpu_us_per_request, 1)} node:http's) before a service runs any code of its own.`,
      '',
    ];
    writeFileSync(path.join(__dirname, 'results', 'latest-floor.md'), lines.join('\n'));
    console.log(lines.join('\n'));
  } finally {
    for (const s of servers) if (s.child.connected) s.child.disconnect();
  }
}

if (process.argv[2] === 'serve') serve(process.argv[3]);
else
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
