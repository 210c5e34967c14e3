'use strict';
// The integrator's HTTP client the HA test drives the services with: every attempt recorded, and
// retried the way docs/api.md tells integrators to: on 503 and 429 after `Retry-After`, on 409
// `idempotency-key-in-use` after its `Retry-After`, and on a lost connection or a request that got
// no answer in time after a short backoff, always with the same Idempotency-Key and the same body.
// A 500 is never retried: it is a bug, recorded with its body and X-Request-Id.

const http = require('node:http');
const { sleep } = require('../lib/util');

const IN_USE = 'urn:msp:problem:idempotency-key-in-use';

/** What a single attempt came to: `ok` (2xx), `retry` (try again), or `final` (an answer to act on). */
function classify(status, json) {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 503 || status === 429) return 'retry';
  if (status === 409 && json && json.type === IN_USE) return 'retry';
  // HAProxy maps its own 502/504 to a 503; a 502 or 504 here came from an app: retry it, but it
  // still counts as a 5xx other than 503.
  if (status === 502 || status === 504) return 'retry';
  return 'final';
}

function retryAfterMs(headers, fallbackMs) {
  const raw = headers && headers['retry-after'];
  const secs = raw !== undefined ? Number(raw) : NaN;
  if (!Number.isFinite(secs) || secs < 0) return fallbackMs;
  // Bounded: a misbehaving Retry-After must not stall a worker past its budget.
  return Math.min(Math.max(secs * 1000, 100), 10_000);
}

/** One HTTP exchange on a fresh connection (no keep-alive race can fake a failure), with a deadline. */
function exchange(url, { method, headers, body, timeoutMs }) {
  return new Promise((resolve) => {
    const started = Date.now();
    let settled = false;
    const done = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, ms: Date.now() - started });
    };
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        if (text.length < 1_000_000) text += chunk;
      });
      res.on('end', () => {
        let json;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        done({ status: res.statusCode, headers: res.headers, text, json });
      });
      res.on('error', (error) => done({ error: error.code || error.message }));
    });
    const timer = setTimeout(() => {
      req.destroy(new Error('timeout'));
      done({ error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (error) => done({ error: error.code || error.message }));
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/**
 * The client. `urls` maps a service name to its base URL (HAProxy). Every attempt lands in
 * `attempts` (with the phase the caller gives: load, check, probe, seed), so the test can tell
 * what failed when.
 */
function createApi({ urls, clientId, clientSecret, runId, attemptTimeoutMs = 10_000, budgetMs = 120_000 }) {
  const attempts = [];
  /** One entry per logical request: how it ended, after how many attempts. */
  const calls = [];
  let token;
  let seq = 0;

  async function fetchToken(phase = 'seed') {
    const deadline = Date.now() + budgetMs;
    for (let n = 1; ; n += 1) {
      const requestId = `ha-${runId}-token-${(seq += 1)}`;
      const t0 = Date.now();
      const res = await exchange(`${urls.desk}/api/v1/auth/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          'x-request-id': requestId,
        },
        body: 'grant_type=client_credentials',
        timeoutMs: attemptTimeoutMs,
      });
      const verdict = res.error ? 'retry' : classify(res.status, res.json);
      attempts.push({
        t0,
        t1: Date.now(),
        phase,
        service: 'desk',
        method: 'POST',
        route: '/auth/token',
        status: res.status ?? null,
        error: res.error,
        requestId,
        verdict,
        write: false,
        body: res.status >= 500 ? res.text : undefined,
      });
      if (verdict === 'ok' && res.json && res.json.access_token) {
        token = res.json.access_token;
        return token;
      }
      if (verdict !== 'retry' || Date.now() > deadline)
        throw new Error(`token: ${res.status ?? res.error} ${res.text ?? ''}`);
      await sleep(res.error ? 500 : retryAfterMs(res.headers, 1000));
    }
  }

  /**
   * One logical request, retried within `budgetMs`. Resolves (never rejects) with
   * { ok, status, json, headers, replayed, requestIds, tries, error, t0, t1 }.
   * `route` is the path template used to group attempts (e.g. /tickets/{id}).
   */
  async function call(
    service,
    method,
    path,
    { body, key, phase = 'load', route = path, write = method !== 'GET', label, budget = budgetMs, extraHeaders } = {},
  ) {
    if (!token) await fetchToken(phase);
    const base = (seq += 1);
    const t0 = Date.now();
    const deadline = t0 + budget;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const requestIds = [];
    let backoff = 250;
    let refreshed = false;
    for (let n = 1; ; n += 1) {
      const requestId = `ha-${runId}-${base}-${n}`;
      requestIds.push(requestId);
      const headers = {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        'x-request-id': requestId,
        ...(extraHeaders || {}),
      };
      if (payload !== undefined) headers['content-type'] = 'application/json';
      if (key) headers['idempotency-key'] = key;
      const a0 = Date.now();
      const res = await exchange(`${urls[service]}/api/v1${path}`, {
        method,
        headers,
        body: payload,
        timeoutMs: attemptTimeoutMs,
      });
      let verdict = res.error ? 'retry' : classify(res.status, res.json);
      // An integrator whose token was refused fetches a new one once and tries again.
      if (res.status === 401 && !refreshed) verdict = 'reauth';
      const record = {
        t0: a0,
        t1: Date.now(),
        phase,
        service,
        method,
        route,
        label,
        status: res.status ?? null,
        error: res.error,
        requestId,
        answeredRequestId: res.headers ? res.headers['x-request-id'] : undefined,
        verdict,
        write,
        key,
        attempt: n,
        type: res.json && res.json.type,
        body: res.status >= 400 ? (res.text || '').slice(0, 2000) : undefined,
        replayed: res.headers ? res.headers['idempotent-replayed'] === 'true' : false,
      };
      attempts.push(record);
      if (verdict === 'ok' || verdict === 'final') {
        calls.push({
          t0,
          t1: record.t1,
          phase,
          service,
          method,
          route,
          label,
          write,
          ok: verdict === 'ok',
          status: res.status,
          tries: n,
          requestIds,
        });
        return {
          ok: verdict === 'ok',
          status: res.status,
          json: res.json,
          text: res.text,
          headers: res.headers,
          replayed: record.replayed,
          requestIds,
          tries: n,
          t0,
          t1: record.t1,
          retried: n > 1,
        };
      }
      if (verdict === 'reauth') {
        refreshed = true;
        await fetchToken(phase).catch(() => undefined);
        continue;
      }
      const wait = res.error ? backoff : retryAfterMs(res.headers, 1000);
      backoff = Math.min(backoff * 2, 2000);
      if (Date.now() + wait > deadline) {
        calls.push({
          t0,
          t1: Date.now(),
          phase,
          service,
          method,
          route,
          label,
          write,
          ok: false,
          gaveUp: true,
          status: res.status ?? null,
          error: res.error,
          tries: n,
          requestIds,
        });
        return {
          ok: false,
          gaveUp: true,
          status: res.status ?? null,
          error: res.error,
          json: res.json,
          text: res.text,
          headers: res.headers,
          requestIds,
          tries: n,
          t0,
          t1: Date.now(),
          retried: n > 1,
        };
      }
      await sleep(wait + Math.floor(Math.random() * 100));
    }
  }

  return {
    call,
    fetchToken,
    attempts,
    calls,
    get token() {
      return token;
    },
  };
}

module.exports = { createApi, exchange, classify };
