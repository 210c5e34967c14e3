'use strict';
// What the service benchmarks share: databases on the benchmark's PostgreSQL server, a service
// started as production starts it (`node services/<name>/dist/index.js`), and its memory from /proc.
const { randomBytes } = require('node:crypto');
const { fork, spawn } = require('node:child_process');
const { readFileSync, writeFileSync } = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { serverNode } = require('./server-node');

const ROOT = path.resolve(__dirname, '..');

const round = (value, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** The nearest-rank `p` quantile (0 < p ≤ 1) of ascending `sorted`; undefined when it is empty. */
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];

/** The URL of database `name` on the server of `serverUrl`. */
function databaseUrlFor(serverUrl, name) {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withClient(url, work) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });

/**
 * A service as production runs it, on a free port; resolves when its /readyz answers. `root`: the
 * checkout whose build to start (default this one; e.g. a `git worktree` of an older commit).
 */
async function startService(name, env, { root = ROOT } = {}) {
  const port = await freePort();
  const child = spawn(serverNode().path, [...serverNode().flags, path.join(root, 'services', name, 'dist/index.js')], {
    env: { ...process.env, ...serverNode().env, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} before it was ready`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { child, url };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${name} did not become ready in 30 s`);
}

/**
 * Starts a bench server script (desk-server.js, baseline-server.js) in a process of its own and
 * resolves with its first IPC message. BENCH_PROFILE=<dir> (or `profileDir`) makes it write a V8
 * CPU profile there when it exits cleanly (disconnect it). `flags`: Node's flags, the images' unless given.
 * `root`: the checkout whose script (and so whose build) to start, this one unless given.
 */
function forkServer(
  script,
  env,
  { profileDir = process.env.BENCH_PROFILE, flags = serverNode().flags, root = ROOT } = {},
) {
  const execArgv = [...flags, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
  const child = fork(path.join(root, 'bench', script), {
    execPath: serverNode().path,
    env: { ...process.env, ...serverNode().env, ...env },
    execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve({ child, ...message }));
    child.once('exit', (code) => reject(new Error(`${script} exited with code ${code} before it was ready`)));
  });
}

/**
 * The environment of a token-verifying service (link, hr) in a benchmark: its database, Redis when
 * given, the test issuer's tokens, a rate limit high enough never to answer 429 (it still runs), and
 * a webhook encryption key (production refuses to start without one).
 */
function verifyingServiceEnv({ databaseUrl, redisUrl, issuer }) {
  return {
    DATABASE_URL: databaseUrl,
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    AUTH_ISSUER: issuer.issuer,
    AUTH_AUDIENCE: issuer.audience,
    AUTH_JWKS_URL: issuer.jwksUrl,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    // Production requires the key that seals webhook secrets; the benchmark makes one per run.
    WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
}

/** A JSON call to a service's API (`/api/v1` + `urlPath`) with `headers`; a non-2xx answer throws, naming it. */
async function apiCall(service, headers, method, urlPath, body) {
  const response = await fetch(`${service.url}/api/v1${urlPath}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = response.status === 204 ? undefined : await response.json();
  if (!response.ok) throw new Error(`${method} ${urlPath} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

/** `Authorization` headers of a client-credentials token from desk's token endpoint. */
async function clientToken(deskUrl, clientId, secret) {
  const response = await fetch(`${deskUrl}/api/v1/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  if (!response.ok) throw new Error(`token: ${response.status} ${await response.text()}`);
  return { authorization: `Bearer ${(await response.json()).access_token}` };
}

/** Memory of a process from /proc: the current resident set and its peak (VmHWM), in MB. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss_mb: kb('VmRSS') / 1024, hwm_mb: kb('VmHWM') / 1024 };
}

/**
 * Where a process's resident memory is, MB per part, from its smaps: V8's heap pages (anonymous,
 * exactly 256 KiB; pooled ones too), the node binary, other files, glibc's main arena ([heap]),
 * and the rest of anonymous memory (other threads' arenas, V8's code range, WebAssembly, large
 * objects and Buffers above the mmap threshold).
 */
function memoryParts(pid) {
  const parts = { 'V8 256 KiB pages': 0, 'node binary': 0, 'other files': 0, 'main arena': 0, 'other anonymous': 0 };
  let part = null;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (range) {
      const [, from, to, file] = range;
      if (file === '[heap]') part = 'main arena';
      else if (file.endsWith('/bin/node')) part = 'node binary';
      else if (file.startsWith('/')) part = 'other files';
      else if (!file && parseInt(to, 16) - parseInt(from, 16) === 256 * 1024) part = 'V8 256 KiB pages';
      else part = 'other anonymous';
    } else if (part && line.startsWith('Rss:')) parts[part] += Number(line.split(/\s+/)[1]) / 1024;
  }
  return parts;
}

/**
 * A service's Prometheus metrics (`GET /metrics`), read once: `value(name, labels)` is the first
 * sample of `name` whose labels include `labels` (NaN when there is none).
 */
async function serviceMetrics(serviceUrl) {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  return (name, labels = {}) => {
    const wanted = Object.entries(labels).map(([label, v]) => `${label}="${v}"`);
    for (const line of text.split('\n')) {
      const sample = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
      if (sample && sample[1] === name && wanted.every((pair) => sample[2].split(',').includes(pair)))
        return Number(sample[3]);
    }
    return NaN;
  };
}

/** memoryParts as one line: `V8 256 KiB pages 56, node binary 57, ...` (MB). */
const describeMemoryParts = (parts) =>
  Object.entries(parts)
    .map(([part, mb]) => `${part} ${Math.round(mb)}`)
    .join(', ');

/** CPU seconds a process has used (user + system), from /proc/<pid>/stat. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** Busy and total CPU seconds of the whole machine so far (every CPU), from /proc/stat. */
function machineCpu() {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy / 100, total: (busy + idle + iowait) / 100 };
}

/** Resets the kernel's peak-RSS counter of a process (Linux: "5" to clear_refs), so VmHWM is what follows. */
function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The machine a result was measured on, as the result files state it. */
function machine(postgres) {
  return {
    nproc: os.availableParallelism(),
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    memory_gb: round(os.totalmem() / 1024 ** 3, 1),
    // Services and baselines run on serverNode() (the production images' Node); the client on this one.
    node: [
      ...Object.entries(serverNode().env).map(([name, value]) => `${name}=${value}`),
      serverNode().version,
      ...serverNode().flags,
    ].join(' '),
    node_source: serverNode().source,
    client_node: process.version,
    postgres,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    // Client, servers and PostgreSQL share these CPUs; other work on the machine shows here.
    load_average_at_start: os.loadavg().map((l) => round(l, 2)),
  };
}

/** One line of a result file: "2 CPUs (model), 23.5 GB, Node …, PostgreSQL …, Linux …; load average … at the start". */
const describeMachine = (m) =>
  `${m.nproc} CPUs (${m.cpu_model}), ${m.memory_gb} GB, Node ${m.node} for services and baselines (${m.node_source}), the client on Node ${m.client_node}, ${m.postgres}, ${m.os}; load average ${m.load_average_at_start.join(' / ')} at the start`;

/** Stops a started service and waits for it. */
async function stopService(service) {
  if (!service) return;
  service.child.kill('SIGTERM');
  if (service.child.exitCode === null) await new Promise((resolve) => service.child.once('exit', resolve));
}

/** The ticket `pnpm bench` creates with POST /tickets (and `pnpm bench:profile` with BENCH_METHOD=POST). */
const newTicket = (clientId) => ({
  title: 'Benchmark ticket',
  description: 'Created by autocannon.',
  priority: 'high',
  category: 'network',
  client_id: clientId,
});

module.exports = {
  ROOT,
  serverNode,
  newTicket,
  forkServer,
  apiCall,
  clientToken,
  verifyingServiceEnv,
  round,
  median,
  percentile,
  databaseUrlFor,
  withClient,
  freePort,
  startService,
  stopService,
  memory,
  memoryParts,
  describeMemoryParts,
  serviceMetrics,
  cpuSeconds,
  machineCpu,
  resetPeak,
  machine,
  describeMachine,
};
