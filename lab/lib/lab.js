'use strict';
// The lab's API: up, down, status, faults and heals, the apps. Every function reads the lab's
// state from its run directory, so a test and the CLI can act on the same lab in turns.

const fs = require('node:fs');
const path = require('node:path');
const { randomBytes, generateKeyPairSync } = require('node:crypto');
const topology = require('./topology');
const netns = require('./netns');
const procs = require('./procs');
const configs = require('./configs');
const { imageFlags } = require('../../scripts/docker/image-flags');
const {
  run,
  waitFor,
  httpGet,
  redisCommand,
  parseInfo,
  pairs,
  haproxySocket,
  sleep,
  seconds,
  LabError,
} = require('./util');

const {
  HOSTS,
  hostsOf,
  PORTS,
  SERVICES,
  CREDENTIALS,
  PATRONI_SCOPE,
  SENTINEL_MASTER,
  SYSTEM_PATH,
  PG_BIN,
  NS_PREFIX,
  SWITCH_NS,
} = topology;

const STATE_FILE = 'state.json';

// ---------------------------------------------------------------------------------------------
// State and logging

function runDirOf(options = {}) {
  return path.resolve(options.runDir || topology.defaultRunDir());
}

function readState(runDir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(runDir, STATE_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

function writeState(runDir, state) {
  const file = path.join(runDir, STATE_FILE);
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

/** The state of a running lab, or a clear error when there is none. */
function requireState(options) {
  const runDir = runDirOf(options);
  const state = readState(runDir);
  if (!state)
    throw new LabError(
      `no lab in ${runDir} (run \`node lab/lab.js up\` first, or set LAB_RUN_DIR to the run directory of yours)`,
    );
  return { runDir, state };
}

function makeLog(options = {}) {
  if (typeof options.log === 'function') return options.log;
  if (options.quiet) return () => {};
  const started = Date.now();
  return (message) => process.stderr.write(`[lab +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
}

function hostByName(name) {
  const host = HOSTS[name];
  if (!host)
    throw new LabError(
      `unknown host "${name}" (hosts: ${Object.keys(HOSTS).join(', ')}; aliases: leader, replica, redis-master)`,
    );
  return host;
}

/** A host name, or an alias resolved against the running lab: leader, replica, redis-master. */
async function resolveTarget(target) {
  if (target === 'leader' || target === 'primary') {
    const leader = await currentLeader();
    if (!leader) throw new LabError('no Patroni leader right now');
    return HOSTS[leader];
  }
  if (target === 'replica') {
    const leader = await currentLeader();
    return hostsOf('db').find((db) => db.name !== leader);
  }
  if (target === 'redis-master' || target === 'master') {
    const master = await currentRedisMaster();
    if (!master.host) throw new LabError('the Sentinels agree on no Redis master right now');
    return HOSTS[master.host];
  }
  return hostByName(target);
}

/** Patroni's rule: a leader must be able to retry etcd within its TTL. */
function checkTiming(timing) {
  for (const key of ['ttl', 'loopWait', 'retryTimeout']) {
    if (!Number.isInteger(timing[key]) || timing[key] < 1)
      throw new LabError(`timing.${key} must be a whole number of seconds (got ${timing[key]})`);
  }
  if (timing.loopWait + 2 * timing.retryTimeout > timing.ttl) {
    throw new LabError(
      `Patroni needs loop_wait + 2 * retry_timeout <= ttl (got ${timing.loopWait} + 2 * ${timing.retryTimeout} > ${timing.ttl})`,
    );
  }
  return timing;
}

function postgresUid() {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new LabError('no "postgres" system user (install postgresql-15)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

// ---------------------------------------------------------------------------------------------
// Starting each kind of process

const baseEnv = () => ({ PATH: SYSTEM_PATH, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' });

function hostDir(runDir, host) {
  return path.join(runDir, host.name);
}

async function startEtcd(runDir, state, host) {
  return procs.spawnIn(host, configs.etcdArgs(host, runDir, state.etcdToken, state.timing), {
    env: { ...baseEnv(), HOME: hostDir(runDir, host) },
    logFile: path.join(hostDir(runDir, host), 'etcd.log'),
    role: 'etcd',
  });
}

async function startPatroni(runDir, state, host) {
  const dir = hostDir(runDir, host);
  const file = path.join(dir, 'patroni.yml');
  fs.writeFileSync(
    file,
    JSON.stringify(configs.patroniConfig(host, runDir, { strict: state.strict, timing: state.timing }), null, 2),
  );
  const { uid, gid } = postgresUid();
  fs.chownSync(file, uid, gid);
  return procs.spawnIn(host, ['/usr/bin/patroni', file], {
    env: { ...baseEnv(), HOME: dir },
    logFile: path.join(dir, 'patroni.log'),
    user: 'postgres',
    cwd: dir,
    role: 'patroni',
  });
}

async function startRedis(runDir, state, host, masterIp) {
  const dir = hostDir(runDir, host);
  const file = path.join(dir, 'redis.conf');
  fs.writeFileSync(file, configs.redisConfig(host, runDir, { masterIp, minReplicasToWrite: state.minReplicasToWrite }));
  return procs.spawnIn(host, ['redis-server', file], {
    env: baseEnv(),
    logFile: path.join(dir, 'redis.log'),
    cwd: dir,
    role: 'redis',
  });
}

async function startSentinel(runDir, state, host, masterIp) {
  const dir = hostDir(runDir, host);
  const file = path.join(dir, 'sentinel.conf');
  // Sentinel rewrites its file with what it learnt (the current master, the other Sentinels):
  // a restarted Sentinel resumes from it.
  if (!fs.existsSync(file))
    fs.writeFileSync(file, configs.sentinelConfig(host, runDir, { masterIp, timing: state.timing }));
  return procs.spawnIn(host, ['redis-sentinel', file], {
    env: baseEnv(),
    logFile: path.join(dir, 'sentinel.log'),
    cwd: dir,
    role: 'sentinel',
  });
}

async function startHaproxy(runDir) {
  const host = HOSTS.lb;
  const dir = hostDir(runDir, host);
  const file = path.join(dir, 'haproxy.cfg');
  fs.mkdirSync(path.join(dir, 'errors'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'errors', '503.http'), configs.haproxyUnavailableResponse());
  fs.writeFileSync(file, configs.haproxyConfig(runDir));
  await run('haproxy', ['-c', '-q', '-f', file]);
  return procs.spawnIn(host, ['haproxy', '-db', '-f', file], {
    env: baseEnv(),
    logFile: path.join(dir, 'haproxy.log'),
    cwd: dir,
    role: 'haproxy',
  });
}

/** Fails a wait early, with the log's tail, when the process it waits for has died. */
function diedCheck(host, role, logFile) {
  const since = Date.now();
  return async () => {
    // A process just spawned is still `ip`, in the root namespace, until it has entered the host's.
    if (Date.now() - since < 1500) return undefined;
    const alive = (await procs.processesIn(host.ns)).some((proc) => proc.role === role);
    return alive
      ? undefined
      : `${role} on ${host.name} is not running; last lines of ${logFile}:\n${procs.tail(logFile)}`;
  };
}

// ---------------------------------------------------------------------------------------------
// Probes: what Patroni, etcd, Sentinel and HAProxy say

async function patroniMember(host, timeoutMs = 1500) {
  const { json } = await httpGet(`http://${host.ip}:${PORTS.patroni}/patroni`, { timeoutMs });
  if (!json) throw new Error(`${host.name}: no JSON from Patroni`);
  return json;
}

/** /cluster from the leader etcd's majority names when there is one: a node cut off reports a stale view. */
async function patroniCluster(timeoutMs = 1500) {
  const leader = await currentLeader().catch(() => undefined);
  const order = hostsOf('db').sort((a, b) => (b.name === leader) - (a.name === leader));
  for (const db of order) {
    try {
      const { json } = await httpGet(`http://${db.ip}:${PORTS.patroni}/cluster`, { timeoutMs });
      if (json && Array.isArray(json.members)) return { from: db.name, ...json };
    } catch {
      // next member
    }
  }
  throw new Error('no Patroni REST API answers');
}

/**
 * The leader as etcd's majority knows it: a quorum read of Patroni's leader key, which a member
 * cut off from the others cannot answer. Undefined when no leader holds the key.
 */
async function currentLeader() {
  let lastError;
  for (const db of hostsOf('db')) {
    try {
      const { status, json } = await httpGet(
        `http://${db.ip}:${PORTS.etcdClient}/v2/keys/service/${PATRONI_SCOPE}/leader?quorum=true`,
        { timeoutMs: 1500 },
      );
      if (status === 404) return undefined;
      if (status === 200 && json?.node) return json.node.value || undefined;
      lastError = new Error(`etcd ${db.name}: ${status}`);
    } catch (error) {
      lastError = error;
    }
  }
  throw new LabError(`no etcd member answers a quorum read (${lastError?.message})`);
}

/** What each Sentinel names as master, and the master a majority (2 of 3) agrees on. */
async function currentRedisMaster() {
  const views = {};
  await Promise.all(
    hostsOf('redis').map(async (host) => {
      try {
        const [ip] = await redisCommand(
          host.ip,
          PORTS.sentinel,
          ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER],
          { timeoutMs: 1500 },
        );
        views[host.name] = hostsOf('redis').find((candidate) => candidate.ip === ip)?.name ?? ip;
      } catch (error) {
        views[host.name] = `unreachable (${error.message})`;
      }
    }),
  );
  const ordered = Object.fromEntries(hostsOf('redis').map((host) => [host.name, views[host.name]]));
  const counts = {};
  for (const name of Object.values(ordered)) counts[name] = (counts[name] || 0) + 1;
  const agreed = Object.keys(counts).find((name) => counts[name] >= 2 && HOSTS[name]);
  return { host: agreed, ip: agreed ? HOSTS[agreed].ip : undefined, sentinels: ordered };
}

async function redisRole(host) {
  const info = parseInfo(await redisCommand(host.ip, PORTS.redis, ['INFO', 'replication'], { timeoutMs: 1500 }));
  return info;
}

/** HAProxy's view: backend -> server -> status (UP, DOWN, DRAIN, MAINT, no check). */
async function haproxyStatus(runDir) {
  const csv = await haproxySocket(path.join(runDir, 'lb', 'haproxy.sock'), 'show stat');
  const lines = csv.split('\n').filter(Boolean);
  const header = lines.shift().replace(/^# /, '').split(',');
  const col = (name) => header.indexOf(name);
  const out = {};
  for (const line of lines) {
    const fields = line.split(',');
    const [backend, server] = [fields[col('pxname')], fields[col('svname')]];
    if (server === 'FRONTEND' || server === 'BACKEND') continue;
    out[backend] = out[backend] || {};
    out[backend][server] = { status: fields[col('status')], sessions: Number(fields[col('scur')]) };
  }
  return out;
}

async function appReady(host, service, timeoutMs = 1500) {
  const { status, json } = await httpGet(`http://${host.ip}:${service.port}/readyz`, { timeoutMs });
  return { ok: status === 200, status, detail: json?.status ?? String(status) };
}

// ---------------------------------------------------------------------------------------------
// Waits used by up, heal and callers

async function waitEtcd(log, timeoutMs = 30_000) {
  await waitFor(
    'a healthy 3-member etcd cluster',
    async () => {
      const healthy = await Promise.all(
        hostsOf('db').map(async (db) => {
          const { json } = await httpGet(`http://${db.ip}:${PORTS.etcdClient}/health`, { timeoutMs: 1000 });
          return json?.health === 'true' || json?.health === true;
        }),
      );
      return healthy.every(Boolean) || { why: `health ${healthy.join(',')}` };
    },
    { timeoutMs },
  );
  log('etcd: 3 members healthy');
}

/**
 * The database cluster is whole: a leader, the two others replicating (one of them the
 * synchronous standby), and HAProxy's 5000 on the leader.
 */
async function waitPatroniHealthy({ timeoutMs = 90_000, runDir } = {}) {
  return waitFor(
    'Patroni: a leader, two replicas streaming from it (one synchronous), HAProxy routing 5000 to the leader',
    async () => {
      const leader = await currentLeader();
      if (!leader) return { why: 'no leader key in etcd' };
      const member = await patroniMember(HOSTS[leader]);
      if (member.state !== 'running' || !['master', 'primary'].includes(member.role))
        return { why: `${leader}: ${member.role} ${member.state}` };
      const streaming = (member.replication || []).filter((r) => r.state === 'streaming');
      if (streaming.length < 2) return { why: `${streaming.length} replicas streaming from ${leader}` };
      if (!streaming.some((r) => r.sync_state === 'sync')) return { why: `no synchronous standby of ${leader} yet` };
      if (runDir) {
        const stats = await haproxyStatus(runDir);
        const up = Object.entries(stats.postgres_rw || {}).filter(([, s]) => s.status === 'UP');
        if (up.length !== 1 || up[0][0] !== leader)
          return { why: `HAProxy postgres_rw UP: ${up.map(([n]) => n).join(',') || 'none'}` };
      }
      return { leader };
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/** Resolves with the new leader once etcd names one (other than `not`) and it serves as primary. */
async function waitForLeader({ not, timeoutMs = 60_000 } = {}) {
  const started = Date.now();
  const leader = await waitFor(
    `a Patroni leader${not ? ` other than ${not}` : ''}`,
    async () => {
      const name = await currentLeader();
      if (!name || name === not) return { why: `leader key: ${name ?? 'none'}` };
      const { status } = await httpGet(`http://${HOSTS[name].ip}:${PORTS.patroni}/primary`, { timeoutMs: 1000 });
      return status === 200 ? name : { why: `${name} holds the key, /primary answers ${status}` };
    },
    { timeoutMs, intervalMs: 200 },
  );
  return { leader, ms: Date.now() - started };
}

/** Resolves once a majority of Sentinels names a master (other than `not`) that says it is one. */
async function waitForRedisMaster({ not, timeoutMs = 60_000 } = {}) {
  const started = Date.now();
  const master = await waitFor(
    `a Redis master${not ? ` other than ${not}` : ''} agreed by the Sentinels`,
    async () => {
      const view = await currentRedisMaster();
      if (!view.host || view.host === not) return { why: JSON.stringify(view.sentinels) };
      const info = await redisRole(HOSTS[view.host]);
      return info.role === 'master' ? view.host : { why: `${view.host} reports role ${info.role}` };
    },
    { timeoutMs, intervalMs: 200 },
  );
  return { master, ms: Date.now() - started };
}

async function waitRedisHealthy({ timeoutMs = 60_000 } = {}) {
  return waitFor(
    'Redis: one master with two replicas in sync, three Sentinels agreeing on it and seeing each other',
    async () => {
      const view = await currentRedisMaster();
      const agreeing = Object.values(view.sentinels).filter((name) => name === view.host).length;
      if (!view.host || agreeing < 3) return { why: `sentinels: ${JSON.stringify(view.sentinels)}` };
      const info = await redisRole(HOSTS[view.host]);
      const online = Object.keys(info).filter((key) => /^slave\d+$/.test(key) && info[key].includes('state=online'));
      if (info.role !== 'master' || online.length < 2)
        return { why: `${view.host}: role ${info.role}, ${online.length} replicas online` };
      for (const host of hostsOf('redis')) {
        const master = pairs(
          await redisCommand(host.ip, PORTS.sentinel, ['SENTINEL', 'MASTER', SENTINEL_MASTER], { timeoutMs: 1500 }),
        );
        if (Number(master['num-other-sentinels']) < 2 || Number(master['num-slaves']) < 2) {
          return {
            why: `sentinel ${host.name}: ${master['num-other-sentinels']} other sentinels, ${master['num-slaves']} replicas`,
          };
        }
      }
      return { master: view.host };
    },
    { timeoutMs, intervalMs: 300 },
  );
}

// ---------------------------------------------------------------------------------------------
// psql through the balancer

async function psql(
  sql,
  { database = 'postgres', port = PORTS.pgRw, user = CREDENTIALS.superuser, timeoutMs = 20_000 } = {},
) {
  const { stdout } = await run(
    path.join(PG_BIN, 'psql'),
    [
      '-X',
      '-v',
      'ON_ERROR_STOP=1',
      '-At',
      '-c',
      sql,
      `host=${HOSTS.lb.ip} port=${port} user=${user.username} dbname=${database} connect_timeout=3`,
    ],
    { env: { ...baseEnv(), PGPASSWORD: user.password, PGAPPNAME: 'lab' }, timeoutMs },
  );
  return stdout.trim();
}

/** The services' role and databases, created when missing (up runs this; it is idempotent). */
async function createDatabases(log) {
  const { app } = CREDENTIALS;
  await psql(
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${app.username}') THEN
         CREATE ROLE ${app.username} LOGIN PASSWORD '${app.password}';
       END IF;
     END $$`,
  );
  const existing = (await psql('SELECT datname FROM pg_database')).split('\n');
  for (const service of SERVICES) {
    if (!existing.includes(service.database)) await psql(`CREATE DATABASE ${service.database} OWNER ${app.username}`);
  }
  log(`postgres: role ${app.username} and databases ${SERVICES.map((s) => s.database).join(', ')} ready`);
}

// ---------------------------------------------------------------------------------------------
// up / down

async function leftovers(runDir) {
  const namespaces = await netns.listLabNamespaces();
  const rootLink = await netns.rootLinkExists();
  const stateFile = fs.existsSync(path.join(runDir, STATE_FILE));
  return { namespaces, rootLink, stateFile, any: namespaces.length > 0 || rootLink || stateFile };
}

/**
 * Removes everything a lab (this one or one that crashed half-way) left: every process in a
 * namespace of the lab (SIGKILL), the namespaces, the switch with its bridge and cables, the
 * root namespace's cable, and the run directory (its logs kept with keepLogs). Safe to repeat.
 */
async function down(options = {}) {
  const log = makeLog(options);
  const runDir = runDirOf(options);
  const started = Date.now();
  const namespaces = await netns.listLabNamespaces();
  // Processes first, all namespaces at once: a namespace is only gone once nothing runs in it.
  const signalled = await Promise.all(namespaces.map((ns) => procs.signalRoles(ns, '*', { signal: 'SIGKILL' })));
  const killed = signalled.reduce((sum, list) => sum + list.length, 0);
  const hostNamespaces = namespaces.filter((ns) => ns !== SWITCH_NS);
  await Promise.all(hostNamespaces.map((ns) => netns.deleteNamespace(ns)));
  if (namespaces.includes(SWITCH_NS)) await netns.deleteNamespace(SWITCH_NS);
  if (await netns.rootLinkExists()) await netns.ip(['link', 'del', topology.ROOT_LINK], { allowFail: true });
  if (fs.existsSync(runDir)) {
    if (options.keepLogs) {
      removeAllButLogs(runDir);
    } else {
      fs.rmSync(runDir, { recursive: true, force: true });
    }
  }
  const left = await leftovers(runDir);
  if (left.namespaces.length || left.rootLink) {
    throw new LabError(
      `down could not remove: ${[...left.namespaces, left.rootLink ? topology.ROOT_LINK : ''].filter(Boolean).join(', ')}`,
    );
  }
  if (namespaces.length || killed)
    log(
      `down: ${killed} processes killed, ${namespaces.length} namespaces removed in ${seconds(Date.now() - started)}`,
    );
  return { killed, namespaces, ms: Date.now() - started };
}

function removeAllButLogs(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (['data', 'etcd', 'socket'].includes(entry.name) || entry.name.endsWith('-data'))
        fs.rmSync(full, { recursive: true, force: true });
      else removeAllButLogs(full);
    } else if (!/\.log$|\.json$|\.ya?ml$|\.conf$|\.cfg$/.test(entry.name)) {
      fs.rmSync(full, { force: true });
    }
  }
}

/**
 * Builds the lab and returns once every part is healthy: etcd, Patroni (leader, sync standby,
 * replica), HAProxy routing, Redis with Sentinel, the services' databases; and with `apps` (a
 * checkout with built dist/), desk, link and hr on both app hosts, ready behind HAProxy.
 * A lab left by an earlier run (crashed or not) is removed first.
 *
 * options: runDir, strict (synchronous_mode_strict), apps (checkout dir), appCmd, env
 * (variables for every service), serviceEnv ({desk: {...}}), minReplicasToWrite, timing, log, quiet.
 */
async function up(options = {}) {
  const log = makeLog(options);
  const runDir = runDirOf(options);
  const started = Date.now();
  const timings = {};
  const step = async (name, fn) => {
    const t = Date.now();
    const result = await fn();
    timings[name] = Date.now() - t;
    return result;
  };
  if (process.getuid && process.getuid() !== 0)
    throw new LabError('the lab needs root (network namespaces, veth, setpriv)');

  const state = {
    version: 1,
    startedAt: new Date().toISOString(),
    runDir,
    subnet: topology.SUBNET,
    strict: Boolean(options.strict),
    minReplicasToWrite: options.minReplicasToWrite ?? 1,
    timing: checkTiming({ ...configs.DEFAULT_TIMING, ...(options.timing || {}) }),
    etcdToken: `msplab-${randomBytes(4).toString('hex')}`,
    secrets: {
      webhookKey: randomBytes(32).toString('base64'),
      connectorKey: randomBytes(32).toString('base64'),
    },
    apps: undefined,
    status: 'starting',
  };

  const previous = await leftovers(runDir);
  if (previous.any) {
    log(
      `removing what an earlier lab left (${[previous.namespaces.length ? `${previous.namespaces.length} namespaces` : '', previous.rootLink ? topology.ROOT_LINK : '', previous.stateFile ? 'state file' : ''].filter(Boolean).join(', ')})`,
    );
    await step('cleanup', () => down({ runDir, log }));
  }

  try {
    fs.mkdirSync(runDir, { recursive: true });
    const { uid, gid } = postgresUid();
    for (const host of Object.values(HOSTS)) {
      const dir = hostDir(runDir, host);
      fs.mkdirSync(dir, { recursive: true });
      if (host.kind === 'db') {
        for (const sub of ['socket', 'pglog']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
        for (const sub of ['', 'socket', 'pglog']) fs.chownSync(path.join(dir, sub), uid, gid);
        fs.chmodSync(dir, 0o700);
      }
    }
    fs.mkdirSync(path.join(runDir, 'shared'), { recursive: true });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    fs.writeFileSync(
      path.join(runDir, 'shared', 'jwt-private-key.pem'),
      privateKey.export({ type: 'pkcs8', format: 'pem' }),
      { mode: 0o600 },
    );
    writeState(runDir, state);

    await step('network', () => netns.createNetwork());
    log(`network: ${Object.keys(HOSTS).length} hosts on ${topology.SUBNET}.0/24, this machine at ${topology.ROOT_IP}`);

    const redisMaster = HOSTS.redis1;
    await step('start processes', async () => {
      await Promise.all([
        ...hostsOf('db').map((db) => startEtcd(runDir, state, db)),
        ...hostsOf('redis').map((host) => startRedis(runDir, state, host, redisMaster.ip)),
        startHaproxy(runDir),
      ]);
    });

    await step('etcd', () => waitEtcd(log));
    await step('patroni start', () => Promise.all(hostsOf('db').map((db) => startPatroni(runDir, state, db))));

    await step('redis', async () => {
      await waitFor(
        'Redis replication (two replicas online on redis1)',
        async () => {
          const info = await redisRole(redisMaster);
          const online = Object.keys(info).filter(
            (key) => /^slave\d+$/.test(key) && info[key].includes('state=online'),
          );
          return online.length >= 2 || { why: `${online.length} replicas online` };
        },
        {
          timeoutMs: 30_000,
          fail: diedCheck(redisMaster, 'redis', path.join(hostDir(runDir, redisMaster), 'redis.log')),
        },
      );
      await Promise.all(hostsOf('redis').map((host) => startSentinel(runDir, state, host, redisMaster.ip)));
      await waitRedisHealthy({ timeoutMs: 30_000 });
      log(`redis: master ${redisMaster.name}, 2 replicas, 3 Sentinels (quorum 2, master name ${SENTINEL_MASTER})`);
    });

    const { leader } = await step('patroni', () => waitPatroniHealthy({ timeoutMs: 100_000, runDir }));
    log(
      `postgres: leader ${leader}, synchronous standby and replica streaming (synchronous_mode${state.strict ? '_strict' : ''}); HAProxy 5000 -> ${leader}`,
    );
    await step('databases', () => createDatabases(log));
    await step('haproxy read-only', () =>
      waitFor(
        'HAProxy 5001 on a replica',
        async () =>
          (await psql('SELECT pg_is_in_recovery()', { port: PORTS.pgRo })) === 't' ? true : { why: 'not a replica' },
        { timeoutMs: 20_000 },
      ),
    );

    await step('haproxy settled', () => waitHostHealthy(HOSTS.lb, { runDir, state, timeoutMs: 20_000 }));

    state.status = 'up';
    state.upMs = Date.now() - started;
    state.timings = timings;
    writeState(runDir, state);
    log(`lab up in ${seconds(state.upMs)} (run dir ${runDir})`);

    if (options.apps) {
      await step('apps', () =>
        startApps(options.apps, options.env || {}, {
          runDir,
          log,
          appCmd: options.appCmd,
          serviceEnv: options.serviceEnv,
        }),
      );
      const done = readState(runDir);
      done.upMs = Date.now() - started;
      done.timings = timings;
      writeState(runDir, done);
      log(`lab with apps up in ${seconds(done.upMs)}`);
    }
    return { runDir, ms: Date.now() - started, timings, endpoints: topology.endpoints() };
  } catch (error) {
    log(`up failed: ${error.message}`);
    log(`logs: ${runDir}/<host>/*.log; the lab stays as it is for a look; \`node lab/lab.js down\` removes it`);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// The apps

function appDataDir(runDir, host, service) {
  return path.join(hostDir(runDir, host), `${service.name}-data`);
}

/** Each service's environment on an app host: HAProxy for PostgreSQL, Sentinel (and a plain URL) for Redis. */
async function serviceEnvironment(runDir, state, host, service) {
  const e = topology.endpoints();
  const deskUrl = `${e.serviceUrl('desk')}/api/v1`;
  const { secrets } = state;
  const env = {
    ...baseEnv(),
    PATH: `${path.dirname(process.execPath)}:${SYSTEM_PATH}`,
    HOME: appDataDir(runDir, host, service),
    NODE_ENV: 'production',
    HOST: '0.0.0.0',
    PORT: String(service.port),
    LOG_LEVEL: 'info',
    DATA_DIR: appDataDir(runDir, host, service),
    DATABASE_URL: e.databaseUrl(service.database),
    DATABASE_READ_URL: e.databaseReadUrl(service.database),
    REDIS_SENTINELS: e.redisSentinels,
    REDIS_SENTINEL_NAME: e.sentinelName,
    // For services that do not speak Sentinel yet: HAProxy's port to whichever Redis is master.
    REDIS_URL: e.redisMasterUrl,
    AUTH_ISSUER: deskUrl,
    AUTH_AUDIENCE: 'msp-api',
    AUTH_JWKS_URL: `${deskUrl}/.well-known/jwks.json`,
    // X-Forwarded-For is believed from the balancer only.
    TRUST_PROXY: HOSTS.lb.ip,
    SHUTDOWN_TIMEOUT_MS: '10000',
    WEBHOOK_ENCRYPTION_KEY: secrets.webhookKey,
    // Webhook receivers and directories of a test run on this machine (ROOT_IP) or in the lab.
    OUTBOUND_ALLOWLIST: `${topology.SUBNET}.0/24`,
  };
  if (service.name === 'desk') {
    Object.assign(env, {
      JWT_PRIVATE_KEY_FILE: path.join(runDir, 'shared', 'jwt-private-key.pem'),
      BOOTSTRAP_CLIENT_ID: CREDENTIALS.apiClient.clientId,
      BOOTSTRAP_CLIENT_SECRET: CREDENTIALS.apiClient.clientSecret,
      BOOTSTRAP_TENANT: CREDENTIALS.apiClient.tenant,
      SERVICE_CLIENTS: JSON.stringify([
        {
          client_id: CREDENTIALS.linkAtDesk.clientId,
          client_secret: CREDENTIALS.linkAtDesk.clientSecret,
          scopes: 'read:users read:tickets write:tickets',
        },
      ]),
    });
  }
  if (service.name === 'link') {
    Object.assign(env, {
      DESK_API_URL: deskUrl,
      DESK_CLIENT_ID: CREDENTIALS.linkAtDesk.clientId,
      DESK_CLIENT_SECRET: CREDENTIALS.linkAtDesk.clientSecret,
      CONNECTOR_ENCRYPTION_KEY: secrets.connectorKey,
    });
  }
  const apps = state.apps || {};
  const merged = { ...env, ...(apps.env || {}), ...((apps.serviceEnv || {})[service.name] || {}) };
  // null removes a variable of the lab's (e.g. REDIS_SENTINELS, to run the services without Sentinel).
  for (const [name, value] of Object.entries(merged)) if (value === null) delete merged[name];
  return merged;
}

/** The images' command (their Dockerfile's CMD flags) on the Node running the lab. */
const defaultAppCmd = (checkoutDir) => [process.execPath, ...imageFlags(checkoutDir), 'dist/index.js'].join(' ');

async function startApp(hostName, serviceName, options = {}) {
  const { runDir, state } = requireState(options);
  if (!state.apps) throw new LabError('no apps configured: call startApps(checkoutDir) first');
  const host = hostByName(hostName);
  if (host.kind !== 'app') throw new LabError(`${hostName} is not an app host`);
  const service = SERVICES.find((s) => s.name === serviceName);
  if (!service) throw new LabError(`unknown service ${serviceName}`);
  const running = (await procs.processesIn(host.ns)).some((p) => p.role === `app:${service.name}`);
  if (running) return { started: false };
  const cwd = path.join(state.apps.checkoutDir, 'services', service.name);
  const argv = (state.apps.appCmd || defaultAppCmd(state.apps.checkoutDir))
    .replaceAll('{service}', service.name)
    .replaceAll('{checkout}', state.apps.checkoutDir)
    .split(/\s+/)
    .filter(Boolean);
  fs.mkdirSync(appDataDir(runDir, host, service), { recursive: true });
  await procs.spawnIn(host, argv, {
    env: await serviceEnvironment(runDir, state, host, service),
    logFile: path.join(hostDir(runDir, host), `${service.name}.log`),
    cwd,
    role: `app:${service.name}`,
  });
  if (options.wait !== false) await waitAppReady(host, service, { timeoutMs: options.timeoutMs ?? 90_000, runDir });
  return { started: true };
}

async function waitAppReady(host, service, { timeoutMs = 90_000, runDir }) {
  const logFile = path.join(hostDir(runDir, host), `${service.name}.log`);
  await waitFor(
    `${service.name} on ${host.name} ready (GET /readyz 200)`,
    async () => {
      const ready = await appReady(host, service);
      return ready.ok || { why: `readyz ${ready.status} ${ready.detail}` };
    },
    { timeoutMs, intervalMs: 300, fail: diedCheck(host, `app:${service.name}`, logFile) },
  );
}

/** HAProxy marks a server UP only after its checks pass: wait for it, so traffic can go there. */
async function waitHaproxyServer(runDir, backend, server, wanted = 'UP', timeoutMs = 20_000) {
  await waitFor(
    `HAProxy ${backend}/${server} ${wanted}`,
    async () => {
      const status = (await haproxyStatus(runDir))[backend]?.[server]?.status;
      return (status && status.startsWith(wanted)) || { why: `status ${status}` };
    },
    { timeoutMs, intervalMs: 200 },
  );
}

/**
 * Runs desk, link and hr from checkoutDir (its services/<name>/dist must be built) on both app
 * hosts, with `env` laid over the lab's environment for every service. desk on app1 starts
 * first (it migrates its database and creates the API clients), then the other five.
 */
async function startApps(checkoutDir, env = {}, options = {}) {
  const log = makeLog(options);
  const { runDir, state } = requireState(options);
  const checkout = path.resolve(checkoutDir);
  for (const service of SERVICES) {
    const entry = path.join(checkout, 'services', service.name, 'dist', 'index.js');
    if (!fs.existsSync(entry))
      throw new LabError(`${entry} is missing: build the checkout first (pnpm exec turbo run generate build)`);
  }
  const started = Date.now();
  state.apps = { checkoutDir: checkout, env, serviceEnv: options.serviceEnv || {}, appCmd: options.appCmd };
  writeState(runDir, state);
  const [first, ...others] = hostsOf('app');
  const desk = SERVICES[0];
  await startApp(first.name, desk.name, { runDir });
  await waitHaproxyServer(runDir, desk.name, first.name);
  await Promise.all([
    ...SERVICES.slice(1).map((service) => startApp(first.name, service.name, { runDir })),
    ...others.flatMap((host) => SERVICES.map((service) => startApp(host.name, service.name, { runDir }))),
  ]);
  for (const host of hostsOf('app'))
    for (const service of SERVICES) await waitHaproxyServer(runDir, service.name, host.name);
  log(
    `apps: desk, link, hr ready on ${hostsOf('app')
      .map((h) => h.name)
      .join(' and ')} in ${seconds(Date.now() - started)} (from ${checkout})`,
  );
  return { ms: Date.now() - started };
}

/** Stops one service (or all three) on an app host with SIGTERM, as an orchestrator does (SIGKILL after the grace). */
async function stopApp(hostName, serviceName, options = {}) {
  const host = hostByName(hostName);
  const roles = serviceName ? [`app:${serviceName}`] : SERVICES.map((s) => `app:${s.name}`);
  const stopped = await procs.signalRoles(host.ns, roles, { signal: 'SIGTERM', graceMs: options.graceMs ?? 20_000 });
  return { stopped: stopped.length };
}

/**
 * Restarts one service on one host. With drain (the default) HAProxy first stops sending it new
 * requests and lets the ones in flight finish, as a preStop hook would; drain: false sends
 * SIGTERM straight away, leaving it to the service's own graceful shutdown.
 */
async function restartApp(hostName, serviceName, options = {}) {
  const { runDir } = requireState(options);
  const host = hostByName(hostName);
  const drain = options.drain !== false;
  const started = Date.now();
  const socket = path.join(runDir, 'lb', 'haproxy.sock');
  if (drain) {
    await haproxySocket(socket, `set server ${serviceName}/${host.name} state drain`);
    await waitFor(
      `${serviceName}/${host.name} drained`,
      async () => {
        const server = (await haproxyStatus(runDir))[serviceName]?.[host.name];
        return (server && server.sessions === 0) || { why: `${server?.sessions} sessions` };
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
  }
  await stopApp(hostName, serviceName, options);
  await startApp(hostName, serviceName, { runDir });
  if (drain) await haproxySocket(socket, `set server ${serviceName}/${host.name} state ready`);
  await waitHaproxyServer(runDir, serviceName, host.name);
  return { ms: Date.now() - started };
}

/** Every service instance, one at a time: the rolling restart of a deployment. */
async function rollingRestart(options = {}) {
  const log = makeLog(options);
  const started = Date.now();
  for (const host of hostsOf('app')) {
    for (const service of SERVICES) {
      const { ms } = await restartApp(host.name, service.name, options);
      log(`restarted ${service.name} on ${host.name} in ${seconds(ms)}`);
    }
  }
  return { ms: Date.now() - started };
}

// ---------------------------------------------------------------------------------------------
// Faults and heals

const KILL_ROLES = {
  db: ['patroni', 'postgres'],
  redis: ['redis'],
  lb: ['haproxy'],
  app: SERVICES.map((s) => `app:${s.name}`),
};

/**
 * SIGKILL of a host's main software: PostgreSQL and Patroni on a db host (its etcd member keeps
 * running), redis-server on a Redis host (its Sentinel keeps running), HAProxy on lb, the three
 * services on an app host. `target` may be an alias: leader, replica, redis-master.
 */
async function kill(target, options = {}) {
  requireState(options);
  const host = await resolveTarget(target);
  const killed = await procs.signalRoles(host.ns, options.roles || KILL_ROLES[host.kind], { signal: 'SIGKILL' });
  makeLog(options)(`killed on ${host.name}: ${summarize(killed)}`);
  return { host: host.name, killed, at: Date.now() };
}

/** SIGKILL of every process on the host: the machine lost its power. */
async function crash(target, options = {}) {
  requireState(options);
  const host = await resolveTarget(target);
  const killed = await procs.signalRoles(host.ns, '*', { signal: 'SIGKILL' });
  makeLog(options)(`crashed ${host.name}: ${summarize(killed)}`);
  return { host: host.name, killed, at: Date.now() };
}

function summarize(list) {
  const counts = {};
  for (const { role } of list) counts[role] = (counts[role] || 0) + 1;
  return (
    Object.entries(counts)
      .map(([role, n]) => (n > 1 ? `${role} x${n}` : role))
      .join(', ') || 'nothing was running'
  );
}

/** Unplugs the host's cable at the switch (`ip link set <host> down` in the switch namespace). */
async function isolate(target, options = {}) {
  requireState(options);
  const host = await resolveTarget(target);
  await netns.setCable(host.name, false);
  makeLog(options)(`isolated ${host.name} (cable down)`);
  return { host: host.name, at: Date.now() };
}

const DEFAULT_PARTITIONS = {
  db: (host) => ({ peers: hostsOf('db').filter((h) => h !== host) }),
  redis: (host) => ({ peers: hostsOf('redis').filter((h) => h !== host) }),
  // The apps reach PostgreSQL and Redis through the balancer (and the Redis hosts directly,
  // through Sentinel): cut those, and leave the balancer's own traffic to the app alone.
  app: () => ({ peers: [...hostsOf('db'), ...hostsOf('redis')], lbPorts: [PORTS.pgRw, PORTS.pgRo, PORTS.redis] }),
  lb: () => ({ peers: Object.values(HOSTS).filter((h) => h.kind !== 'lb') }),
};

/**
 * Cuts a host off from some hosts only (nftables in its namespace): by default a db host from
 * the other db hosts (etcd, replication and Patroni traffic), while the balancer still reaches
 * it; a Redis host from the other Redis hosts; an app host from PostgreSQL and Redis (the
 * balancer's 5000, 5001 and 6379, and the db and Redis hosts), the balancer still reaching it.
 * `from` (host names) replaces the default.
 */
async function partition(target, options = {}) {
  requireState(options);
  const host = await resolveTarget(target);
  const cut = options.from ? { peers: options.from.map(hostByName) } : DEFAULT_PARTITIONS[host.kind](host);
  await netns.partition(host, cut.peers, { lbPorts: cut.lbPorts });
  const from = [...cut.peers.map((p) => p.name), ...(cut.lbPorts ? [`lb:${cut.lbPorts.join(',')}`] : [])];
  makeLog(options)(`partitioned ${host.name} from ${from.join(', ')}`);
  return { host: host.name, from, at: Date.now() };
}

/**
 * Undoes every fault on a host: cable back, partition removed, the software killed started again
 * (a Redis comes back as a replica of the current master; Patroni rejoins, rewinding if needed).
 * Waits until the host serves again, unless wait: false.
 */
async function heal(target, options = {}) {
  const log = makeLog(options);
  const { runDir, state } = requireState(options);
  if (target === 'all') {
    const results = [];
    for (const host of Object.values(HOSTS)) results.push(await heal(host.name, { ...options, log }));
    return results;
  }
  const host = hostByName(target);
  const started = Date.now();
  const actions = [];
  if (!(await netns.cableUp(host.name))) {
    await netns.setCable(host.name, true);
    actions.push('cable up');
  }
  if ((await netns.partitionedFrom(host)).length) {
    await netns.unpartition(host);
    actions.push('partition removed');
  }
  const running = new Set((await procs.processesIn(host.ns)).map((p) => p.role));
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (host.kind === 'db') {
    if (!running.has('etcd')) {
      await startEtcd(runDir, state, host);
      actions.push('etcd started');
    }
    if (!running.has('patroni')) {
      // A postmaster orphaned by a killed Patroni would block the new one's start: end it first.
      if (running.has('postgres')) await procs.signalRoles(host.ns, ['postgres'], { signal: 'SIGKILL' });
      await startPatroni(runDir, state, host);
      actions.push('patroni started');
    }
  } else if (host.kind === 'redis') {
    if (!running.has('redis')) {
      // Never back as an empty master: wait until the Sentinels have moved the master elsewhere.
      const { master } = await waitForRedisMaster({ not: host.name, timeoutMs: 60_000 });
      await startRedis(runDir, state, host, HOSTS[master].ip);
      actions.push(`redis started as replica of ${master}`);
    }
    if (!running.has('sentinel')) {
      await startSentinel(runDir, state, host, (await currentRedisMaster()).ip);
      actions.push('sentinel started');
    }
  } else if (host.kind === 'lb') {
    if (!running.has('haproxy')) {
      await startHaproxy(runDir);
      actions.push('haproxy started');
    }
  } else if (host.kind === 'app' && state.apps) {
    for (const service of SERVICES) {
      if (!running.has(`app:${service.name}`)) {
        await startApp(host.name, service.name, { runDir, wait: false });
        actions.push(`${service.name} started`);
      }
    }
  }
  if (options.wait !== false) {
    await waitHostHealthy(host, { runDir, state, timeoutMs });
    // The balancer's checks lag a second or two behind: a healed host is healed once HAProxy agrees.
    if (host.kind === 'db' || host.kind === 'redis') await waitHostHealthy(HOSTS.lb, { runDir, state, timeoutMs });
  }
  const ms = Date.now() - started;
  if (actions.length) log(`healed ${host.name} (${actions.join(', ')}) in ${seconds(ms)}`);
  return { host: host.name, actions, ms };
}

/** The host does its job again: a db member replicating (or leading), a Redis in replication, an app ready. */
async function waitHostHealthy(host, { runDir, state, timeoutMs = 120_000 }) {
  if (host.kind === 'db') {
    await waitFor(
      `${host.name} back in the Patroni cluster (leading, or streaming from the leader)`,
      async () => {
        const leader = await currentLeader();
        if (!leader) return { why: 'no leader key in etcd' };
        if (leader === host.name) {
          const member = await patroniMember(host);
          return (
            (member.state === 'running' && ['master', 'primary'].includes(member.role)) || {
              why: `leader key is ours, ${member.role} ${member.state}`,
            }
          );
        }
        const replication = (await patroniMember(HOSTS[leader])).replication || [];
        const self = replication.find((r) => r.application_name === host.name);
        return (
          self?.state === 'streaming' || { why: `${leader} sees ${host.name} ${self ? self.state : 'not connected'}` }
        );
      },
      { timeoutMs, intervalMs: 500, fail: diedCheck(host, 'patroni', path.join(hostDir(runDir, host), 'patroni.log')) },
    );
  } else if (host.kind === 'redis') {
    await waitFor(
      `${host.name} serving Redis again (the master the Sentinels agree on, or its replica)`,
      async () => {
        const [view, info] = await Promise.all([currentRedisMaster(), redisRole(host)]);
        if (!view.host) return { why: `the Sentinels agree on no master: ${JSON.stringify(view.sentinels)}` };
        if (view.host === host.name)
          return info.role === 'master' || { why: `the Sentinels name ${host.name}, which says ${info.role}` };
        const following = info.role === 'slave' && info.master_host === view.ip && info.master_link_status === 'up';
        return (
          following || {
            why: `role ${info.role}, master ${info.master_host ?? '-'} (the Sentinels say ${view.host}), link ${info.master_link_status ?? '-'}`,
          }
        );
      },
      { timeoutMs, intervalMs: 300 },
    );
  } else if (host.kind === 'lb') {
    // A fresh HAProxy counts every server UP until its checks fail: wait until they have run.
    await waitFor(
      'HAProxy with one PostgreSQL primary and one Redis master UP',
      async () => {
        const stats = await haproxyStatus(runDir);
        const up = (backend) =>
          Object.entries(stats[backend] || {})
            .filter(([, s]) => s.status === 'UP')
            .map(([name]) => name);
        const settling = ['postgres_rw', 'redis_master'].flatMap((backend) =>
          Object.entries(stats[backend] || {})
            .filter(([, s]) => / \d+\/\d+$/.test(s.status))
            .map(([name]) => `${backend}/${name}`),
        );
        const [rw, redis] = [up('postgres_rw'), up('redis_master')];
        return (
          (rw.length === 1 && redis.length === 1 && !settling.length) || {
            why: `postgres_rw UP: ${rw.join(',') || 'none'}; redis_master UP: ${redis.join(',') || 'none'}; settling: ${settling.join(',') || 'none'}`,
          }
        );
      },
      { timeoutMs },
    );
  } else if (host.kind === 'app' && state.apps) {
    for (const service of SERVICES) await waitAppReady(host, service, { timeoutMs, runDir });
    for (const service of SERVICES) await waitHaproxyServer(runDir, service.name, host.name, 'UP', timeoutMs);
  }
}

/** Everything healthy again: the whole database cluster, Redis and Sentinels, every app. */
async function waitHealthy(options = {}) {
  const { runDir, state } = requireState(options);
  const timeoutMs = options.timeoutMs ?? 120_000;
  const started = Date.now();
  await waitPatroniHealthy({ timeoutMs, runDir });
  await waitRedisHealthy({ timeoutMs });
  await waitHostHealthy(HOSTS.lb, { runDir, state, timeoutMs });
  if (state.apps) for (const host of hostsOf('app')) await waitHostHealthy(host, { runDir, state, timeoutMs });
  return { ms: Date.now() - started };
}

// ---------------------------------------------------------------------------------------------
// status

async function status(options = {}) {
  const runDir = runDirOf(options);
  const state = readState(runDir);
  const left = await leftovers(runDir);
  if (!state) return { up: false, runDir, leftovers: left.any ? left : undefined };
  const out = {
    up: true,
    runDir,
    startedAt: state.startedAt,
    upMs: state.upMs,
    strict: state.strict,
    endpoints: plainEndpoints(),
    hosts: {},
  };
  const settle = (promise) =>
    promise.then(
      (value) => value,
      (error) => ({ error: error.message }),
    );
  const [leader, cluster, members, redis, haproxy] = await Promise.all([
    settle(currentLeader()),
    settle(patroniCluster()),
    Promise.all(hostsOf('db').map((db) => settle(patroniMember(db, 1000)))),
    settle(currentRedisMaster()),
    settle(haproxyStatus(runDir)),
  ]);
  out.patroni = {
    leader: typeof leader === 'string' ? leader : leader?.error ? `unknown (${leader.error})` : 'none',
    cluster: cluster.members
      ? cluster.members.map((m) => ({ name: m.name, role: m.role, state: m.state, timeline: m.timeline, lag: m.lag }))
      : cluster,
    members: Object.fromEntries(
      hostsOf('db').map((db, i) => [
        db.name,
        members[i].error
          ? { error: members[i].error }
          : { role: members[i].role, state: members[i].state, timeline: members[i].timeline },
      ]),
    ),
  };
  out.redis = { master: redis.host ?? 'none agreed', sentinels: redis.sentinels ?? redis };
  out.redis.nodes = {};
  for (const host of hostsOf('redis')) {
    const info = await settle(redisRole(host));
    out.redis.nodes[host.name] = info.error
      ? { error: info.error }
      : { role: info.role, link: info.master_link_status, replicas: Number(info.connected_slaves ?? 0) };
  }
  out.haproxy = haproxy;
  out.apps = {};
  if (state.apps) {
    out.appsFrom = state.apps.checkoutDir;
    for (const host of hostsOf('app')) {
      out.apps[host.name] = {};
      for (const service of SERVICES) {
        const ready = await settle(appReady(host, service, 1000));
        out.apps[host.name][service.name] = ready.error
          ? `down (${ready.error})`
          : `${ready.ok ? 'ready' : 'not ready'} (${ready.detail})`;
      }
    }
  }
  for (const host of Object.values(HOSTS)) {
    const running = await procs.processesIn(host.ns);
    const roles = new Set(running.map((p) => p.role));
    const expected =
      host.kind === 'db'
        ? ['etcd', 'patroni', 'postgres']
        : host.kind === 'redis'
          ? ['redis', 'sentinel']
          : host.kind === 'lb'
            ? ['haproxy']
            : state.apps
              ? KILL_ROLES.app
              : [];
    const faults = [];
    if (!(await netns.cableUp(host.name).catch(() => false))) faults.push('cable down');
    const cut = await netns.partitionedFrom(host);
    if (cut.length) faults.push(`partitioned from ${cut.join(',')}`);
    const missing = expected.filter((role) => !roles.has(role));
    if (missing.length) faults.push(`not running: ${missing.join(', ')}`);
    out.hosts[host.name] = { ip: host.ip, ns: host.ns, processes: summarize(running), faults };
  }
  return out;
}

/** The endpoints as strings (desk's database for the database URLs). */
function plainEndpoints() {
  const e = topology.endpoints();
  return {
    databaseUrl: e.databaseUrl('desk'),
    databaseReadUrl: e.databaseReadUrl('desk'),
    redisSentinels: e.redisSentinels,
    sentinelName: e.sentinelName,
    redisMasterUrl: e.redisMasterUrl,
    ...Object.fromEntries(SERVICES.map((service) => [service.name, e.serviceUrl(service.name)])),
    haproxyStats: e.haproxyStats,
  };
}

function formatStatus(s) {
  if (!s.up)
    return `lab: down${s.leftovers ? ` (leftovers: ${JSON.stringify(s.leftovers)}; run \`node lab/lab.js down\`)` : ''}`;
  const lines = [];
  lines.push(`lab: up since ${s.startedAt}${s.upMs ? ` (built in ${seconds(s.upMs)})` : ''}, run dir ${s.runDir}`);
  lines.push(`postgres: Patroni leader ${s.patroni.leader}${s.strict ? ' (synchronous_mode_strict)' : ''}`);
  if (Array.isArray(s.patroni.cluster))
    for (const m of s.patroni.cluster)
      lines.push(
        `  ${m.name.padEnd(6)} ${String(m.role).padEnd(13)} ${String(m.state).padEnd(9)} tl ${m.timeline ?? '-'}${m.lag !== undefined ? ` lag ${m.lag}` : ''}`,
      );
  else lines.push(`  cluster: ${s.patroni.cluster.error}`);
  lines.push(`redis: master ${s.redis.master}`);
  for (const [name, view] of Object.entries(s.redis.sentinels || {})) {
    const node = s.redis.nodes[name];
    lines.push(
      `  ${name.padEnd(6)} sentinel says ${view}; redis ${node.error ? `down (${node.error})` : `${node.role}${node.link ? ` link ${node.link}` : ''}${node.role === 'master' ? ` ${node.replicas} replicas` : ''}`}`,
    );
  }
  if (s.haproxy.error) lines.push(`haproxy: ${s.haproxy.error}`);
  else
    for (const [backend, servers] of Object.entries(s.haproxy))
      lines.push(
        `haproxy ${backend.padEnd(11)} ${Object.entries(servers)
          .map(([n, v]) => `${n} ${v.status}`)
          .join(', ')}`,
      );
  if (Object.keys(s.apps).length) {
    lines.push(`apps (from ${s.appsFrom}):`);
    for (const [host, services] of Object.entries(s.apps))
      lines.push(
        `  ${host.padEnd(6)} ${Object.entries(services)
          .map(([n, v]) => `${n} ${v}`)
          .join('; ')}`,
      );
  } else {
    lines.push('apps: not started (lab.startApps / `lab apps start <checkout>`)');
  }
  const faulty = Object.entries(s.hosts).filter(([, h]) => h.faults.length);
  lines.push(
    faulty.length ? `faults: ${faulty.map(([n, h]) => `${n}: ${h.faults.join('; ')}`).join(' | ')}` : 'faults: none',
  );
  const e = s.endpoints;
  lines.push(
    `endpoints: ${e.databaseUrl} (rw; ro on :${PORTS.pgRo}); sentinels ${e.redisSentinels} (${e.sentinelName}), master ${e.redisMasterUrl}; desk ${e.desk}, link ${e.link}, hr ${e.hr}; stats ${e.haproxyStats}`,
  );
  return lines.join('\n');
}

/** Runs a command inside a host's namespace (e.g. psql or curl as that host). */
function execIn(hostName, argv, options = {}) {
  const host = hostByName(hostName);
  return run('ip', ['netns', 'exec', host.ns, ...argv], { timeoutMs: options.timeoutMs ?? 60_000, allowFail: true });
}

module.exports = {
  up,
  down,
  status,
  formatStatus,
  kill,
  crash,
  isolate,
  partition,
  heal,
  startApps,
  startApp,
  stopApp,
  restartApp,
  rollingRestart,
  waitHealthy,
  waitForLeader,
  waitForRedisMaster,
  leader: currentLeader,
  redisMaster: currentRedisMaster,
  psql,
  execIn,
  endpoints: topology.endpoints,
  credentials: CREDENTIALS,
  hosts: HOSTS,
  topology,
  LabError,
  sleep,
  NS_PREFIX,
};
