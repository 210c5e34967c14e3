'use strict';
// The steady load: workers issuing a mix of writes and reads against desk, link and hr through
// HAProxy, each write with its own Idempotency-Key (retried with the same key and body), and a
// ledger of every write: the ones answered 2xx (acknowledged), the ones whose outcome the client
// never learnt (unknown), and what each created or changed. The checks read the ledger back.

const { randomUUID } = require('node:crypto');
const { sleep } = require('../lib/util');

/** How each kind of resource is read back and what a revision of it looks like. */
const KINDS = {
  ticket: {
    service: 'desk',
    path: (r) => `/tickets/${r.id}`,
    route: '/tickets/{id}',
    // Title carries the key (and the revision); the status moves with the revision, open <-> in_progress.
    revOf: (json, r) => {
      const m = new RegExp(`^ha ${r.key}(?: r(\\d+))?$`).exec(json.title || '');
      if (!m) return { error: `title ${JSON.stringify(json.title)}` };
      const rev = m[1] ? Number(m[1]) : 0;
      const wanted = rev % 2 === 1 ? 'in_progress' : 'open';
      return json.status === wanted
        ? { rev }
        : { error: `title says r${rev} but status is ${json.status} (expected ${wanted})` };
    },
  },
  comment: {
    service: 'desk',
    path: (r) => `/tickets/${r.parentId}/comments/${r.id}`,
    route: '/tickets/{id}/comments/{comment_id}',
    revOf: (json, r) => (json.body === `ha ${r.key}` ? { rev: 0 } : { error: `body ${JSON.stringify(json.body)}` }),
  },
  client: {
    service: 'desk',
    path: (r) => `/clients/${r.id}`,
    route: '/clients/{id}',
    revOf: (json, r) => {
      if (json.name !== `ha ${r.key}`) return { error: `name ${JSON.stringify(json.name)}` };
      const m = /^r(\d+)$/.exec(json.notes || '');
      return json.notes === null
        ? { rev: 0 }
        : m
          ? { rev: Number(m[1]) }
          : { error: `notes ${JSON.stringify(json.notes)}` };
    },
  },
  employee: {
    service: 'hr',
    path: (r) => `/employees/${r.id}`,
    route: '/employees/{id}',
    revOf: (json, r) => {
      const m = new RegExp(`^ha ${r.key}(?: r(\\d+))?$`).exec(json.name || '');
      return m ? { rev: m[1] ? Number(m[1]) : 0 } : { error: `name ${JSON.stringify(json.name)}` };
    },
  },
  tenant: {
    service: 'link',
    path: (r) => `/tenants/${r.id}`,
    route: '/tenants/{id}',
    revOf: (json, r) => {
      const m = new RegExp(`^ha ${r.key}(?: r(\\d+))?$`).exec(json.name || '');
      return m ? { rev: m[1] ? Number(m[1]) : 0 } : { error: `name ${JSON.stringify(json.name)}` };
    },
  },
  timesheet: {
    service: 'hr',
    path: (r) => `/timesheets/${r.id}`,
    route: '/timesheets/{id}',
    revOf: (json, r) =>
      json.user_id === r.userId && json.date === r.date
        ? { rev: 0 }
        : { error: `user ${json.user_id} date ${json.date}` },
  },
};

const addDays = (iso, days) => new Date(Date.parse(`${iso}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const pick = (list) => list[Math.floor(Math.random() * list.length)];

/**
 * `seed`: { clientIds: [...] (desk clients under the SLA policy), workers: [{ userId }] (an hr
 * employee with a contract per worker, for its timesheets) }.
 */
function createLoad({ api, runId, seed, workers = 8, ratePerSec = 30, publicCommentShare = 0.3 }) {
  const ledger = {
    /** Every create: { kind, key, service, path, body, state: acked|unknown|rejected, id, ackAt, ... } */
    creates: [],
    /** Every change: { kind, id, rev, state, at } */
    patches: [],
    /** id -> resource: { kind, id, key, parentId, revs: Map(rev -> state), lastAcked } */
    resources: new Map(),
    /** What the load itself saw go wrong beyond a failed attempt (a conflict on a retry, a 4xx). */
    anomalies: [],
    /** Completion times of successful writes, per service: the gaps between them. */
    writeTimes: { desk: [], link: [], hr: [] },
  };
  let running = false;
  let personnel = 0;
  const loops = [];

  function anomaly(what, detail) {
    ledger.anomalies.push({ at: Date.now(), what, ...detail });
  }

  function noteWrite(service, res) {
    if (res.ok) ledger.writeTimes[service].push(res.t1);
  }

  /** A POST that creates, keyed; records the outcome. Resolves with the resource when acknowledged. */
  async function create(kind, path, body, extra = {}) {
    const { service } = KINDS[kind];
    const key = `${runId}-${extra.worker}-${(extra.counter.n += 1)}`;
    const finalBody = typeof body === 'function' ? body(key) : body;
    const entry = {
      kind,
      key,
      service,
      path,
      body: finalBody,
      startedAt: Date.now(),
      worker: extra.worker,
      parentId: extra.parentId,
      userId: extra.userId,
      date: extra.date,
    };
    ledger.creates.push(entry);
    const res = await api.call(service, 'POST', path, {
      body: finalBody,
      key,
      route: extra.route || path,
      label: `create ${kind}`,
    });
    noteWrite(service, res);
    entry.tries = res.tries;
    entry.requestIds = res.requestIds;
    entry.status = res.status;
    if (res.ok) {
      entry.state = 'acked';
      entry.id = res.json && res.json.id;
      entry.ackAt = res.t1;
      entry.replayed = res.replayed;
      if (res.replayed && res.tries === 1) anomaly('replay of a fresh key', { kind, key, requestIds: res.requestIds });
      const resource = {
        kind,
        id: entry.id,
        key,
        parentId: extra.parentId,
        userId: extra.userId,
        date: extra.date,
        revs: new Map([[0, 'acked']]),
        lastAcked: 0,
        nextRev: 1,
        createdAt: res.t1,
      };
      ledger.resources.set(entry.id, resource);
      return resource;
    }
    if (res.gaveUp || res.status >= 500) {
      entry.state = 'unknown';
      return undefined;
    }
    entry.state = 'rejected';
    // A conflict answered to a retry: the first attempt did create, but its key's answer was not
    // replayed. Nothing is duplicated where a unique key stops it, but the integrator was told
    // the write failed.
    const conflict = res.status === 409 || (res.json && /idempotency-key-reused/.test(res.json.type || ''));
    anomaly(
      conflict && res.tries > 1
        ? 'idempotency replay lost (conflict on a retry)'
        : `create ${kind} answered ${res.status}`,
      {
        kind,
        key,
        status: res.status,
        tries: res.tries,
        requestIds: res.requestIds,
        body: (res.text || '').slice(0, 600),
        existingId: res.json && res.json.existing_id,
      },
    );
    return undefined;
  }

  /** A PATCH to the next revision of a resource this worker owns. */
  async function patch(resource, path, bodyOf) {
    const { service } = KINDS[resource.kind];
    const rev = resource.nextRev;
    resource.nextRev += 1;
    resource.revs.set(rev, 'pending');
    const entry = { kind: resource.kind, id: resource.id, rev, at: Date.now() };
    ledger.patches.push(entry);
    const res = await api.call(service, 'PATCH', path, {
      body: bodyOf(rev),
      route: KINDS[resource.kind].route,
      label: `patch ${resource.kind}`,
    });
    noteWrite(service, res);
    entry.requestIds = res.requestIds;
    if (res.ok) {
      entry.state = 'acked';
      resource.revs.set(rev, 'acked');
      resource.lastAcked = rev;
      entry.ackAt = res.t1;
    } else if (res.gaveUp || res.status >= 500) {
      entry.state = 'unknown';
      resource.revs.set(rev, 'unknown');
    } else {
      entry.state = 'rejected';
      resource.revs.set(rev, 'rejected');
      anomaly(`patch ${resource.kind} answered ${res.status}`, {
        id: resource.id,
        rev,
        status: res.status,
        requestIds: res.requestIds,
        body: (res.text || '').slice(0, 600),
      });
    }
  }

  async function read(service, path, route, resource) {
    const res = await api.call(service, 'GET', path, { route, label: `read ${route}` });
    if (!res.ok && res.status === 404 && resource) {
      anomaly('acknowledged resource answered 404 to a read under load', {
        kind: resource.kind,
        id: resource.id,
        key: resource.key,
        requestIds: res.requestIds,
      });
    } else if (!res.ok && !res.gaveUp && res.status < 500 && res.status !== 404) {
      anomaly(`GET ${route} answered ${res.status}`, {
        requestIds: res.requestIds,
        body: (res.text || '').slice(0, 600),
      });
    }
  }

  function worker(w) {
    const own = { ticket: [], client: [], employee: [], tenant: [] };
    const counter = { n: 0 };
    const mine = seed.workers[w % seed.workers.length];
    let day = 0;
    const base = { worker: w, counter };
    const ops = [
      // writes
      [
        5,
        async () => {
          const t = await create(
            'ticket',
            '/tickets',
            (key) => ({
              title: `ha ${key}`,
              client_id: pick(seed.clientIds),
              priority: pick(['low', 'normal', 'high', 'urgent']),
              category: 'other',
            }),
            { ...base, route: '/tickets' },
          );
          if (t) own.ticket.push(t);
        },
      ],
      [
        3,
        async () => {
          const t = own.ticket.length ? pick(own.ticket.slice(-20)) : undefined;
          if (!t) return;
          await create(
            'comment',
            `/tickets/${t.id}/comments`,
            (key) => ({ body: `ha ${key}`, internal: Math.random() >= publicCommentShare }),
            { ...base, parentId: t.id, route: '/tickets/{id}/comments' },
          );
        },
      ],
      [
        3,
        async () => {
          const t = own.ticket.length ? pick(own.ticket.slice(-20)) : undefined;
          if (t)
            await patch(t, `/tickets/${t.id}`, (rev) => ({
              title: `ha ${t.key} r${rev}`,
              status: rev % 2 === 1 ? 'in_progress' : 'open',
            }));
        },
      ],
      [
        1,
        async () => {
          const c = await create('client', '/clients', (key) => ({ name: `ha ${key}` }), {
            ...base,
            route: '/clients',
          });
          if (c) own.client.push(c);
        },
      ],
      [
        1,
        async () => {
          const c = own.client.length ? pick(own.client) : undefined;
          if (c) await patch(c, `/clients/${c.id}`, (rev) => ({ notes: `r${rev}` }));
        },
      ],
      [
        1,
        async () => {
          personnel += 1;
          const number = String(100000 + personnel);
          const e = await create(
            'employee',
            '/employees',
            (key) => ({
              user_id: randomUUID(),
              personnel_number: number,
              name: `ha ${key}`,
              employment: { start_date: '2024-01-01' },
            }),
            { ...base, route: '/employees' },
          );
          if (e) own.employee.push(e);
        },
      ],
      [
        1,
        async () => {
          const e = own.employee.length ? pick(own.employee) : undefined;
          if (e) await patch(e, `/employees/${e.id}`, (rev) => ({ name: `ha ${e.key} r${rev}` }));
        },
      ],
      [
        1,
        async () => {
          const t = await create(
            'tenant',
            '/tenants',
            (key) => ({
              name: `ha ${key}`,
              domain: `${key.toLowerCase()}.ha.example`,
              client_id: pick(seed.clientIds),
            }),
            { ...base, route: '/tenants' },
          );
          if (t) own.tenant.push(t);
        },
      ],
      [
        1,
        async () => {
          const t = own.tenant.length ? pick(own.tenant) : undefined;
          if (t) await patch(t, `/tenants/${t.id}`, (rev) => ({ name: `ha ${t.key} r${rev}` }));
        },
      ],
      [
        2,
        async () => {
          const date = addDays('2020-01-06', day);
          day += 1;
          await create(
            'timesheet',
            '/timesheets',
            () => ({ user_id: mine.userId, date, entries: [{ start: '08:00', end: '12:00', category: 'normal' }] }),
            { ...base, userId: mine.userId, date, route: '/timesheets' },
          );
        },
      ],
      // reads
      [3, () => read('desk', '/tickets?per_page=10', '/tickets')],
      [
        4,
        async () => {
          const t = own.ticket.length ? pick(own.ticket) : undefined;
          if (t) await read('desk', `/tickets/${t.id}`, '/tickets/{id}', t);
        },
      ],
      [
        1,
        async () => {
          const t = own.ticket.length ? pick(own.ticket) : undefined;
          if (t) await read('desk', `/tickets/${t.id}/comments`, '/tickets/{id}/comments');
        },
      ],
      [
        2,
        async () => {
          const c = own.client.length ? pick(own.client) : undefined;
          if (c) await read('desk', `/clients/${c.id}`, '/clients/{id}', c);
        },
      ],
      [1, () => read('desk', '/clients?per_page=10', '/clients')],
      [1, () => read('hr', '/employees?per_page=10', '/employees')],
      [
        2,
        async () => {
          const e = own.employee.length ? pick(own.employee) : undefined;
          if (e) await read('hr', `/employees/${e.id}`, '/employees/{id}', e);
        },
      ],
      [1, () => read('hr', `/timesheets?per_page=10&user_id=${mine.userId}`, '/timesheets')],
      [1, () => read('link', '/tenants?per_page=10', '/tenants')],
      [
        2,
        async () => {
          const t = own.tenant.length ? pick(own.tenant) : undefined;
          if (t) await read('link', `/tenants/${t.id}`, '/tenants/{id}', t);
        },
      ],
    ];
    const total = ops.reduce((sum, [weight]) => sum + weight, 0);
    const intervalMs = (workers / ratePerSec) * 1000;
    return (async () => {
      // Spread the workers' first requests over one interval.
      await sleep(Math.random() * intervalMs);
      while (running) {
        const started = Date.now();
        let r = Math.random() * total;
        const op = ops.find(([weight]) => (r -= weight) < 0) || ops[0];
        try {
          await op[1]();
        } catch (error) {
          anomaly('load operation threw', { error: error.stack || error.message });
        }
        await sleep(Math.max(0, intervalMs - (Date.now() - started)));
      }
    })();
  }

  return {
    ledger,
    start() {
      running = true;
      for (let w = 0; w < workers; w += 1) loops.push(worker(w));
    },
    /** Stops issuing new requests and waits for the ones under way (each bounded by the client's budget). */
    async stop() {
      running = false;
      await Promise.all(loops);
    },
    get running() {
      return running;
    },
  };
}

module.exports = { createLoad, KINDS };
