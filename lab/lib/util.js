'use strict';
// Small, dependency-free helpers: commands with a deadline, bounded waits, HTTP and RESP probes.

const { spawn } = require('node:child_process');
const http = require('node:http');
const net = require('node:net');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class LabError extends Error {
  constructor(message, details) {
    super(details ? `${message}\n${details}` : message);
    this.name = 'LabError';
  }
}

/**
 * Runs a command to completion; rejects with its stderr when it fails or outlives timeoutMs
 * (then it is killed), so no step of the lab can hang on a stuck tool.
 */
function run(cmd, args, { timeoutMs = 20_000, input, env, allowFail = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: env ?? process.env,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new LabError(`${cmd} ${args.join(' ')}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const result = { code, signal, stdout, stderr };
      if (timedOut) return reject(new LabError(`${cmd} ${args.join(' ')}: no answer within ${timeoutMs} ms (killed)`));
      if (code !== 0 && !allowFail)
        return reject(
          new LabError(`${cmd} ${args.join(' ')} exited with ${code ?? signal}`, stderr.trim() || stdout.trim()),
        );
      resolve(result);
    });
    if (input !== undefined) {
      // A command that exits without reading its input must not crash the caller (EPIPE).
      child.stdin.on('error', () => {});
      child.stdin.end(input);
    }
  });
}

/**
 * Polls `probe` until it returns a truthy value, at most timeoutMs. The error names what was
 * awaited and the last reason it was not there yet (the probe's error or its `why`).
 */
async function waitFor(what, probe, { timeoutMs, intervalMs = 250, fail } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = 'not yet';
  for (;;) {
    if (fail) {
      const fatal = await fail();
      if (fatal) throw new LabError(`gave up waiting for ${what}: ${fatal}`);
    }
    try {
      const value = await probe();
      if (value && value.why === undefined) return value;
      if (value && value.why) last = value.why;
    } catch (error) {
      last = error.message;
    }
    if (Date.now() >= deadline)
      throw new LabError(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what} (last: ${last})`);
    await sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}

/** GET with a hard deadline; resolves with the status and body whatever the status. */
function httpGet(url, { timeoutMs = 2000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        let json;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode, body, json });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

function encodeResp(args) {
  return `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(String(arg))}\r\n${arg}\r\n`).join('')}`;
}

/** Parses one RESP2 value at byte `offset` of a Buffer; undefined when it does not hold all of it yet. */
function parseResp(buf, offset = 0) {
  const end = buf.indexOf('\r\n', offset);
  if (end < 0) return undefined;
  const type = String.fromCharCode(buf[offset]);
  const line = buf.toString('utf8', offset + 1, end);
  const next = end + 2;
  if (type === '+') return { value: line, next };
  if (type === '-') return { value: new Error(line), next };
  if (type === ':') return { value: Number(line), next };
  if (type === '$') {
    const length = Number(line);
    if (length < 0) return { value: null, next };
    if (buf.length < next + length + 2) return undefined;
    return { value: buf.toString('utf8', next, next + length), next: next + length + 2 };
  }
  if (type === '*') {
    const count = Number(line);
    if (count < 0) return { value: null, next };
    const values = [];
    let position = next;
    for (let i = 0; i < count; i += 1) {
      const item = parseResp(buf, position);
      if (!item) return undefined;
      values.push(item.value);
      position = item.next;
    }
    return { value: values, next: position };
  }
  throw new Error(`unexpected RESP type ${JSON.stringify(type)}`);
}

/**
 * Sends commands to a Redis or Sentinel on one connection and resolves with their replies (an
 * Error object for an error reply). A dead or silent server rejects within timeoutMs.
 */
function redisCommands(host, port, commands, { timeoutMs = 2000 } = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buffer = Buffer.alloc(0);
    const replies = [];
    const timer = setTimeout(
      () => socket.destroy(new Error(`${host}:${port}: no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('connect', () => socket.write(commands.map(encodeResp).join('')));
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      let parsed;
      while (replies.length < commands.length && (parsed = parseResp(buffer))) {
        replies.push(parsed.value);
        buffer = buffer.subarray(parsed.next);
      }
      if (replies.length === commands.length) {
        clearTimeout(timer);
        socket.end();
        resolve(replies);
      }
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (replies.length < commands.length) reject(new Error(`${host}:${port} closed the connection`));
    });
  });
}

async function redisCommand(host, port, args, options) {
  const [reply] = await redisCommands(host, port, [args], options);
  if (reply instanceof Error) throw reply;
  return reply;
}

/** `INFO` text as an object. */
function parseInfo(text) {
  const out = {};
  for (const line of String(text).split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

/** A flat [k1, v1, k2, v2] reply (SENTINEL MASTER) as an object. */
function pairs(list) {
  const out = {};
  for (let i = 0; i + 1 < (list ?? []).length; i += 2) out[list[i]] = list[i + 1];
  return out;
}

/** Resolves true when a TCP connection opens within timeoutMs. */
function tcpOpen(host, port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('connect', () => done(true));
    socket.on('error', () => done(false));
  });
}

/** A command on HAProxy's admin socket (a unix socket), its whole answer. */
function haproxySocket(path, command, timeoutMs = 2000) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path });
    let out = '';
    const timer = setTimeout(
      () => socket.destroy(new Error(`haproxy socket: no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${command}\n`));
    socket.on('data', (chunk) => (out += chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

module.exports = {
  LabError,
  sleep,
  run,
  waitFor,
  httpGet,
  redisCommand,
  redisCommands,
  parseInfo,
  pairs,
  tcpOpen,
  haproxySocket,
  seconds,
};
