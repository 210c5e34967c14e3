'use strict';
// The guarantees, checked through the public API after each fault and at the end:
// - every acknowledged write is readable, row by row, with the last acknowledged change visible;
// - no write applied twice: one resource per Idempotency-Key (listed and grouped by the key each
//   resource carries), and a key sent again is replayed, not run again;
// - each SLA target breached is recorded once (audit log) and delivered once (webhooks);
// - every webhook delivery the receiver saw twice was a retry of an attempt the service saw fail;
// - rate limits still count across instances.

const { KINDS } = require('./load');
const { sleep } = require('../lib/util');

/** Runs `fn` over `items`, `concurrency` at a time. */
async function mapLimit(items, concurrency, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next;
        next += 1;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/** Every item of a list, by keyset pages (stable while the load inserts at the front). */
async function listAll(api, service, path, { phase = 'check', maxPages = 1000 } = {}) {
  const items = [];
  const seen = new Set();
  let after;
  for (let page = 0; page < maxPages; page += 1) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await api.call(service, 'GET', `${path}${sep}per_page=100${after ? `&after=${after}` : ''}`, {
      phase,
      route: path.split('?')[0],
      label: 'list',
    });
    if (!res.ok)
      throw new Error(
        `GET ${service} ${path} (after ${after}): ${res.status ?? res.error} ${(res.text || '').slice(0, 300)}`,
      );
    for (const item of res.json.data) {
      if (!seen.has(item.id)) {
        seen.add(item.id);
        items.push(item);
      }
    }
    if (res.json.data.length < 100) return items;
    after = res.json.data[res.json.data.length - 1].id;
  }
  throw new Error(`GET ${service} ${path}: more than ${maxPages} pages`);
}

/**
 * Every acknowledged create read back by its own GET; each resource's visible revision must be
 * its last acknowledged change, or a later one whose outcome the client never learnt.
 */
async function checkReadable(api, ledger, { phase = 'check', concurrency = 6 } = {}) {
  const acked = ledger.creates.filter((c) => c.state === 'acked');
  const lost = [];
  const changesLost = [];
  const unverifiable = [];
  await mapLimit(acked, concurrency, async (entry) => {
    const resource = ledger.resources.get(entry.id);
    const kind = KINDS[entry.kind];
    // What must show at least: the last change acknowledged before this read was sent. A change
    // acknowledged while the read is under way may or may not show.
    const floor = resource.lastAcked;
    const res = await api.call(kind.service, 'GET', kind.path(resource), {
      phase,
      route: kind.route,
      label: 'read back',
    });
    if (res.status === 404) {
      lost.push({
        kind: entry.kind,
        key: entry.key,
        id: entry.id,
        ackAt: new Date(entry.ackAt).toISOString(),
        createRequestIds: entry.requestIds,
        readRequestIds: res.requestIds,
      });
      return;
    }
    if (!res.ok) {
      unverifiable.push({
        kind: entry.kind,
        id: entry.id,
        status: res.status ?? res.error,
        body: (res.text || '').slice(0, 300),
      });
      return;
    }
    const seen = kind.revOf(res.json, resource);
    if (seen.error) {
      changesLost.push({ kind: entry.kind, id: entry.id, key: entry.key, problem: seen.error });
      return;
    }
    const state = resource.revs.get(seen.rev);
    const fine = seen.rev === floor || (seen.rev > floor && ['acked', 'unknown', 'pending'].includes(state));
    if (!fine) {
      const patch = ledger.patches.find((p) => p.id === entry.id && p.rev === floor);
      changesLost.push({
        kind: entry.kind,
        id: entry.id,
        key: entry.key,
        problem: `shows revision ${seen.rev} (${state ?? 'never sent'}), last acknowledged before the read ${floor}`,
        lastAckedRequestIds: patch && patch.requestIds,
      });
    }
  });
  return { checked: acked.length, lost, changesLost, unverifiable };
}

/** The key a resource carries in its title, body or name (`ha <key>` or `ha <key> r<n>`). */
function keyOf(text) {
  const m = /^ha (\S+?)(?: r\d+)?$/.exec(text || '');
  return m ? m[1] : undefined;
}

/**
 * One resource per Idempotency-Key: every list read whole and grouped by the key each row carries.
 * Timesheets (one per user and day) are grouped by their day.
 */
async function checkDuplicates(api, ledger, seed, { phase = 'check' } = {}) {
  const duplicates = [];
  const group = (kind, items, keyFn) => {
    const byKey = new Map();
    for (const item of items) {
      const key = keyFn(item);
      if (!key) continue;
      if (!byKey.has(key)) byKey.set(key, []);
      byKey.get(key).push(item.id);
    }
    for (const [key, ids] of byKey) if (ids.length > 1) duplicates.push({ kind, key, ids });
    return byKey;
  };
  const [tickets, clients, employees, tenants] = await Promise.all([
    listAll(api, 'desk', '/tickets', { phase }),
    listAll(api, 'desk', '/clients', { phase }),
    listAll(api, 'hr', '/employees', { phase }),
    listAll(api, 'link', '/tenants', { phase }),
  ]);
  const byKey = {
    ticket: group('ticket', tickets, (t) => keyOf(t.title)),
    client: group('client', clients, (c) => keyOf(c.name)),
    employee: group('employee', employees, (e) => keyOf(e.name)),
    tenant: group('tenant', tenants, (t) => keyOf(t.name)),
  };
  for (const worker of seed.workers) {
    const sheets = await listAll(api, 'hr', `/timesheets?user_id=${worker.userId}`, { phase });
    group('timesheet', sheets, (s) => s.date);
  }
  // Comments of every ticket something was commented on (acknowledged or not).
  const commented = [
    ...new Set(ledger.creates.filter((c) => c.kind === 'comment' && c.state !== undefined).map((c) => c.parentId)),
  ];
  byKey.comment = new Map();
  await mapLimit(commented, 4, async (ticketId) => {
    const comments = await listAll(api, 'desk', `/tickets/${ticketId}/comments`, { phase });
    for (const [key, ids] of group('comment', comments, (c) => keyOf(c.body))) byKey.comment.set(key, ids);
  });
  // An acknowledged create missing from its list is reported by the row-by-row read; here, the
  // creates the client never heard back about: whether they happened (once at most) is informative.
  const unknown = ledger.creates.filter((c) => c.state === 'unknown');
  const unknownApplied = unknown.filter(
    (c) => byKey[c.kind] && c.kind !== 'timesheet' && byKey[c.kind].has(c.key),
  ).length;
  return {
    duplicates,
    counts: {
      tickets: tickets.length,
      clients: clients.length,
      employees: employees.length,
      tenants: tenants.length,
      comments: [...byKey.comment.values()].reduce((n, ids) => n + ids.length, 0),
    },
    unknown: unknown.length,
    unknownApplied,
    tickets,
  };
}

/**
 * Sends acknowledged creates again, same key and body: each must be replayed (Idempotent-Replayed,
 * the same id). A new resource is a write applied twice; a conflict a replay lost.
 */
async function probeReplays(api, ledger, entries, { phase = 'probe' } = {}) {
  const failures = [];
  let replayed = 0;
  for (const entry of entries) {
    const res = await api.call(entry.service, 'POST', entry.path, {
      body: entry.body,
      key: entry.key,
      phase,
      route: `${entry.path.replace(/[0-9a-f-]{36}/g, '{id}')}`,
      label: `replay ${entry.kind}`,
    });
    if (res.ok && res.replayed && res.json && res.json.id === entry.id) {
      replayed += 1;
      continue;
    }
    failures.push({
      kind: entry.kind,
      key: entry.key,
      id: entry.id,
      acknowledgedAt: new Date(entry.ackAt).toISOString(),
      answer: res.status ?? res.error,
      replayedHeader: res.replayed,
      newId: res.ok && res.json ? res.json.id : undefined,
      duplicate: Boolean(res.ok && res.json && res.json.id !== entry.id),
      requestIds: res.requestIds,
      body: res.ok ? undefined : (res.text || '').slice(0, 400),
    });
  }
  return { sent: entries.length, replayed, failures };
}

/**
 * Rate limits counted across instances: consecutive requests of a client no one else uses, spread
 * over both app hosts by the balancer, must each see the shared counter one lower.
 */
async function probeRateLimit(api, { service = 'desk', requests = 6, phase = 'probe' } = {}) {
  const seen = [];
  for (let i = 0; i < requests; i += 1) {
    const res = await api.call(service, 'GET', '/me', { phase, route: '/me', label: 'rate-limit probe' });
    seen.push(res.ok ? Number(res.headers['x-ratelimit-remaining']) : `${res.status ?? res.error}`);
  }
  const numbers = seen.filter((v) => typeof v === 'number' && Number.isFinite(v));
  // One step may start a new window (the counter back at its top); any other must be one lower.
  const top = Math.max(...numbers);
  const resets = numbers.filter((v, i) => i > 0 && v !== numbers[i - 1] - 1 && v === top).length;
  const consecutive =
    numbers.length === seen.length &&
    resets <= 1 &&
    numbers.every((v, i) => i === 0 || v === numbers[i - 1] - 1 || (v === top && v > numbers[i - 1]));
  return { ok: consecutive, remaining: seen };
}

/**
 * SLA breaches recorded once: every `ticket.sla_breached` of the audit log counted per ticket,
 * against the targets each ticket shows breached. A target due more than `graceMs` ago and
 * breached must have exactly one event; none may have two. The sweep records them as `system`; a
 * change or comment that finds a target past due records it in its own transaction, as its caller.
 */
async function checkSlaEvents(api, loadTickets, { graceMs, phase = 'check' } = {}) {
  // The events first, the tickets after: a breach recorded in between shows on the ticket, never
  // the other way round (an event whose ticket was read before it).
  const now = Date.now();
  const events = await listAll(api, 'desk', '/audit-events?resource_type=ticket', { phase });
  const tickets = await loadTickets();
  const breaches = events.filter((e) => e.action === 'ticket.sla_breached');
  const perTicket = new Map();
  for (const e of breaches) perTicket.set(e.resource_id, [...(perTicket.get(e.resource_id) || []), e]);
  const ours = new Map(tickets.map((t) => [t.id, t]));
  const problems = [];
  let expectedSettled = 0;
  for (const ticket of ours.values()) {
    if (!ticket.sla) continue;
    const targets = ['first_response', 'resolution'];
    const breached = targets.filter((t) => ticket.sla[t].status === 'breached');
    const settled = breached.filter((t) => Date.parse(ticket.sla[t].due_at) < now - graceMs);
    expectedSettled += settled.length;
    const count = (perTicket.get(ticket.id) || []).length;
    const list = perTicket.get(ticket.id) || [];
    if (count > breached.length)
      problems.push({
        twice: true,
        at: Date.parse(list[list.length - 1].occurred_at),
        ticket: ticket.id,
        title: ticket.title,
        problem: `${count} breach events for ${breached.length} breached targets (a duty run twice)`,
        events: list.map((e) => `${e.occurred_at} ${e.actor.client_id}`),
      });
    else if (count < settled.length)
      problems.push({
        skipped: true,
        at: Math.min(...settled.map((t) => Date.parse(ticket.sla[t].due_at))),
        ticket: ticket.id,
        title: ticket.title,
        problem: `${count} breach events, ${settled.length} targets breached over ${Math.round(graceMs / 1000)} s ago (a duty skipped)`,
        due: settled.map((t) => `${t} ${ticket.sla[t].due_at}`),
      });
  }
  const foreign = [...perTicket.keys()].filter((id) => !ours.has(id));
  // A skipped breach: what the ticket's own audit trail says (rules out a list that missed it).
  for (const p of problems.filter((q) => /skipped/.test(q.problem)).slice(0, 10)) {
    const trail = await api.call(
      'desk',
      'GET',
      `/audit-events?resource_type=ticket&resource_id=${p.ticket}&per_page=100`,
      { phase, route: '/audit-events', label: 'ticket trail' },
    );
    p.trail = trail.ok
      ? trail.json.data.map((e) => `${e.occurred_at} ${e.action} ${e.actor.client_id}`)
      : `unreadable ${trail.status}`;
  }
  const byCaller = breaches.filter((e) => e.actor.client_id !== 'system').length;
  return { events: breaches.length, byCaller, expectedSettled, problems, foreignTickets: foreign.length, tickets };
}

/**
 * Webhooks: each event relayed once (one delivery id per event and subscription) and each delivery
 * received once per attempt. A delivery received more often than the service recorded attempts
 * that failed (or attempts whose result a dying instance never recorded) is a duplicate.
 */
async function checkWebhooks(api, receipts, webhooks, { phase = 'check' } = {}) {
  const problems = [];
  const byDelivery = new Map();
  const byEvent = new Map();
  for (const r of receipts) {
    if (!byDelivery.has(r.webhookId)) byDelivery.set(r.webhookId, []);
    byDelivery.get(r.webhookId).push(r);
    const event = `${r.service} ${r.type} ${r.objectId}${r.target ? ` ${r.target}` : ''}`;
    if (!byEvent.has(event)) byEvent.set(event, new Set());
    byEvent.get(event).add(r.webhookId);
  }
  for (const [event, ids] of byEvent) {
    if (ids.size > 1)
      problems.push({
        problem: 'one event relayed as several deliveries (a relay run twice)',
        event,
        deliveries: [...ids],
        at: Math.min(...[...ids].map((id) => byDelivery.get(id)[0].at)),
      });
  }
  let retried = 0;
  for (const [id, list] of byDelivery) {
    if (list.length < 2) continue;
    const { service } = list[0];
    const hook = webhooks[service];
    const res = await api.call(service, 'GET', `/webhooks/${hook.id}/deliveries/${id}`, {
      phase,
      route: '/webhooks/{id}/deliveries/{delivery_id}',
      label: 'delivery',
    });
    if (!res.ok) {
      problems.push({
        problem: `delivery received ${list.length} times, its record unreadable (${res.status ?? res.error})`,
        delivery: id,
        at: list[1].at,
      });
      continue;
    }
    const d = res.json;
    const recorded = d.attempts || [];
    const failed = recorded.filter((a) => a.error).length;
    const succeeded = recorded.filter((a) => !a.error).length;
    // Claims count every attempt, also those whose instance died before recording them.
    const unrecorded = Math.max(0, d.attempt - recorded.length);
    const explained = list.length <= failed + unrecorded + Math.min(1, succeeded + (d.status === 'pending' ? 1 : 0));
    const afterSuccess =
      recorded.findIndex((a) => !a.error) >= 0 && recorded.findIndex((a) => !a.error) < recorded.length - 1;
    if (!explained || afterSuccess || succeeded > 1) {
      problems.push({
        problem: `delivery received ${list.length} times; the service recorded ${recorded.length} attempts (${failed} failed, ${succeeded} succeeded) of ${d.attempt} claimed`,
        delivery: id,
        event: `${list[0].type} ${list[0].objectId}`,
        timestamps: list.map((r) => r.timestamp),
        attempts: recorded,
        at: list[1].at,
      });
    } else retried += 1;
  }
  return {
    receipts: receipts.length,
    deliveries: byDelivery.size,
    events: byEvent.size,
    retriedAfterFailure: retried,
    problems,
  };
}

/** Events every acknowledged write must have produced at the receiver (a relay or delivery skipped otherwise). */
function missingDeliveries(ledger, receipts, tickets, { now = Date.now(), graceMs }) {
  const got = new Set(receipts.map((r) => `${r.type} ${r.objectId}${r.target ? ` ${r.target}` : ''}`));
  const missing = [];
  const older = (t) => t < now - graceMs;
  for (const c of ledger.creates) {
    if (c.state !== 'acked' || !older(c.ackAt)) continue;
    const type = {
      ticket: 'ticket.created',
      comment: 'comment.created',
      tenant: 'tenant.created',
      timesheet: 'timesheet.created',
    }[c.kind];
    if (type && !got.has(`${type} ${c.id}`)) missing.push(`${type} ${c.id}`);
  }
  for (const t of tickets) {
    if (!t.sla) continue;
    for (const target of ['first_response', 'resolution']) {
      if (
        t.sla[target].status === 'breached' &&
        older(Date.parse(t.sla[target].due_at)) &&
        !got.has(`ticket.sla_breached ${t.id} ${target}`)
      )
        missing.push(`ticket.sla_breached ${t.id} ${target}`);
    }
  }
  return missing;
}

/** Polls `fn` until it answers an empty list or `timeoutMs` passes; answers its last result. */
async function settle(fn, { timeoutMs, intervalMs = 3000 }) {
  const deadline = Date.now() + timeoutMs;
  let last = await fn();
  while (last.length && Date.now() < deadline) {
    await sleep(intervalMs);
    last = await fn();
  }
  return last;
}

module.exports = {
  mapLimit,
  listAll,
  checkReadable,
  checkDuplicates,
  probeReplays,
  probeRateLimit,
  checkSlaEvents,
  checkWebhooks,
  missingDeliveries,
  settle,
  keyOf,
};
