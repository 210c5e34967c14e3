'use strict';
// The lab's processes: started detached inside a host's namespace (they outlive the command that
// started them, until `down`), found again by the namespace they run in, never by name alone.

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { namespacePids } = require('./netns');
const { sleep, LabError } = require('./util');

/**
 * Starts argv in host's namespace, stdout and stderr appended to logFile. `user` drops root
 * (PostgreSQL refuses to run as root). Resolves with the pid once the process exists:
 * `ip netns exec` execs the command in place, so the pid is the command's own.
 */
function spawnIn(host, argv, { env, logFile, user, cwd, role }) {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const out = fs.openSync(logFile, 'a');
  fs.writeSync(out, `\n==== ${new Date().toISOString()} lab starts ${role}: ${argv.join(' ')}\n`);
  const asUser = user ? ['setpriv', `--reuid=${user}`, `--regid=${user}`, '--init-groups', '--'] : [];
  const child = spawn('ip', ['netns', 'exec', host.ns, ...asUser, ...argv], {
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...env, LAB_HOST: host.name, LAB_ROLE: role },
    cwd,
  });
  fs.closeSync(out);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new LabError(`could not start ${role} on ${host.name}: ${error.message}`)));
    child.once('spawn', () => {
      child.unref();
      resolve(child.pid);
    });
  });
}

function readProc(pid, file) {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** False for a process that is gone or a zombie (dead, waiting for a parent to reap it). */
function isAlive(pid) {
  const stat = readProc(pid, 'stat');
  if (!stat) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** What a process in the lab is, from its command and the LAB_ROLE the lab gave it. */
function roleOf(pid) {
  const comm = (readProc(pid, 'comm') || '').trim();
  const cmdline = (readProc(pid, 'cmdline') || '').split('\0').filter(Boolean);
  if (comm === 'postgres' || comm === 'pg_rewind' || comm === 'pg_basebackup' || comm === 'initdb') return 'postgres';
  if (comm === 'etcd') return 'etcd';
  if (comm === 'haproxy') return 'haproxy';
  if (comm === 'redis-sentinel' || cmdline.some((arg) => arg.includes('[sentinel]'))) return 'sentinel';
  if (comm === 'redis-server') return 'redis';
  if (cmdline.some((arg) => arg.endsWith('/patroni') || arg === 'patroni')) return 'patroni';
  const environ = (readProc(pid, 'environ') || '').split('\0');
  const role = environ.find((entry) => entry.startsWith('LAB_ROLE='));
  return role ? role.slice('LAB_ROLE='.length) : comm || 'unknown';
}

/** [{pid, role}] of the live processes inside a host's namespace. */
async function processesIn(ns) {
  const pids = await namespacePids(ns);
  return pids.filter(isAlive).map((pid) => ({ pid, role: roleOf(pid) }));
}

/** Waits until none of the pids lives, at most timeoutMs; resolves with the ones still alive. */
async function waitGone(pids, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let alive = pids.filter(isAlive);
  while (alive.length && Date.now() < deadline) {
    await sleep(50);
    alive = alive.filter(isAlive);
  }
  return alive;
}

/**
 * Sends `signal` to the processes of a namespace whose role matches, and waits until they are
 * gone (escalating to SIGKILL after graceMs). Resolves with what it signalled.
 */
async function signalRoles(ns, roles, { signal = 'SIGKILL', graceMs = 10_000 } = {}) {
  const matches = (await processesIn(ns)).filter((proc) => roles === '*' || roles.includes(proc.role));
  for (const proc of matches) {
    try {
      process.kill(proc.pid, signal);
    } catch {
      // exited in between
    }
  }
  let alive = await waitGone(
    matches.map((proc) => proc.pid),
    graceMs,
  );
  if (alive.length && signal !== 'SIGKILL') {
    for (const pid of alive) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited in between
      }
    }
    alive = await waitGone(alive, 5000);
  }
  if (alive.length) throw new LabError(`processes ${alive.join(', ')} in ${ns} survived ${signal} and SIGKILL`);
  return matches;
}

/** The last lines of a log, for error messages that say why a process did not come up. */
function tail(file, lines = 15) {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

module.exports = { spawnIn, isAlive, roleOf, processesIn, signalRoles, waitGone, tail };
