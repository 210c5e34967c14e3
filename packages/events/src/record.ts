import { currentContext, type Actor } from '@msp/http';
import type { Sql } from './sql';

/** The actor of changes nobody's request made (a scheduled sync, a due onboarding). */
export const SYSTEM_ACTOR: Actor = { client_id: 'system', on_behalf_of: null };

/**
 * Told each time this process records an event. Not NOTIFY: a notifying transaction takes a
 * cluster-wide lock at commit, which lined concurrent writes up one behind another (bench/events);
 * other instances find the events by polling.
 */
const recordedListeners = new Set<() => void>();
export function onEventRecorded(listener: () => void): () => void {
  recordedListeners.add(listener);
  return () => recordedListeners.delete(listener);
}

/** `{field: {from, to}}`: what an update changed, in the API's field names. */
export type Changes = Record<string, { from: unknown; to: unknown }>;

export interface EventToRecord {
  /** A name of the service's catalogue, e.g. `ticket.updated`. */
  type: string;
  tenantId: string;
  resourceType: string;
  resourceId: string;
  /** The resource as the API shows it after the change (as it was, for a deletion). Never a secret. */
  object: object;
  /**
   * For an update, the resource as the API showed it before the change: `changes` are then the
   * fields in which `object` differs from it (see changesBetween).
   */
  before?: object;
  /** Who made the change; the request's caller by default (see recordActor), else SYSTEM_ACTOR. */
  actor?: Actor;
  /** Further members of the payload's `data` beside `object` (the catalogue documents them), e.g. `{target}` of a breach. */
  extra?: Record<string, unknown>;
}

/**
 * The columns of an events row that say what happened and who did it; the rest (tenant, resource
 * id, object) come from the change itself.
 */
export interface EventHead {
  type: string;
  resource_type: string;
  actor_client_id: string;
  actor_on_behalf_of: string | null;
  request_id: string | null;
  /** The Idempotency-Key claim of the request that made the change (see effectOfClaim). */
  idempotency_claim: string | null;
}

const HEAD_COLUMNS = [
  'type',
  'resource_type',
  'actor_client_id',
  'actor_on_behalf_of',
  'request_id',
  'idempotency_claim',
] as const satisfies readonly (keyof EventHead)[];

/**
 * The events table's columns of an EventHead, for any INSERT of an events row (this file's, or a statement that inserts
 * its own event); eventHeadValues gives their values in this order.
 */
export const EVENT_HEAD_COLUMNS = HEAD_COLUMNS.join(', ');
export const eventHeadValues = (head: EventHead): (string | null)[] => HEAD_COLUMNS.map((column) => head[column]);

const INSERT_EVENT = `
  INSERT INTO events (${EVENT_HEAD_COLUMNS}, tenant_id, resource_id, changes, data)
  VALUES ($1, $2, $3, $4, $5, $6, $7::uuid, $8, $9::jsonb, $10::jsonb)`;

/** What happened and who did it: the caller of the request by default (see recordActor), else SYSTEM_ACTOR. */
export function eventHead(event: Pick<EventToRecord, 'type' | 'resourceType' | 'actor'>): EventHead {
  const context = currentContext();
  const actor = event.actor ?? context?.actor ?? SYSTEM_ACTOR;
  return {
    type: event.type,
    resource_type: event.resourceType,
    actor_client_id: actor.client_id,
    actor_on_behalf_of: actor.on_behalf_of,
    request_id: context?.requestId ?? null,
    idempotency_claim: context?.idempotencyClaim ?? null,
  };
}

/**
 * Tells this process's listeners (the dispatcher) that an event was recorded. recordEvent does;
 * a statement that inserts its own event (with eventHead) calls it after that statement.
 */
export function announceEventRecorded(): void {
  // Before the commit: the dispatcher waits a moment, and polls should it still be too early.
  for (const listener of recordedListeners) listener();
}

/**
 * Appends the event to the service's stream. Call it with the transaction client that makes the
 * change, after the change, so both commit or neither does: an event is never lost and never sent
 * for a change rolled back. A resource's writes must lock it first (they do: FOR UPDATE, or an
 * advisory lock), which makes `seq` order its commit order, the order its deliveries keep.
 * (A hot write may instead insert its event in the statement that makes the change, one round
 * trip less while it holds its locks: eventHead, announceEventRecorded; desk's POST /tickets.)
 */
export async function recordEvent(tx: Sql, event: EventToRecord): Promise<void> {
  const head = eventHead(event);
  const diff = event.before ? changesBetween(event.before, event.object) : {};
  const changes = Object.keys(diff).length > 0 ? diff : null;
  const data = { object: event.object, ...(changes ? { changes } : {}), ...event.extra };
  await tx.$executeRawUnsafe(
    INSERT_EVENT,
    ...eventHeadValues(head),
    event.tenantId,
    event.resourceId,
    changes && JSON.stringify(changes),
    JSON.stringify(data),
  );
  announceEventRecorded();
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The fields that differ between two API representations of a resource, `updated_at` and the
 * like left out (they change with everything and say nothing).
 */
export function changesBetween(before: object, after: object, ignore: readonly string[] = ['updated_at']): Changes {
  const changes: Changes = {};
  const was = before as Record<string, unknown>;
  const is = after as Record<string, unknown>;
  for (const field of new Set([...Object.keys(was), ...Object.keys(is)])) {
    if (ignore.includes(field) || same(was[field], is[field])) continue;
    changes[field] = { from: was[field] ?? null, to: is[field] ?? null };
  }
  return changes;
}

/** What a request holding an Idempotency-Key claim created: the resource's id and its API JSON. */
export interface ClaimEffect {
  resourceId: string;
  object: unknown;
}

/**
 * For `createdWithoutEvents`: the resource whose row keeps the claim of the request that created it
 * (`find`), as the API shows it (`json`).
 */
export function createdUnderClaim<Row extends { id: string }>(
  find: (claim: string) => Promise<Row | null>,
  json: (row: Row) => unknown,
): (claim: string) => Promise<ClaimEffect | undefined> {
  return async (claim) => {
    const row = await find(claim);
    return row ? { resourceId: row.id, object: json(row) } : undefined;
  };
}

/**
 * What the request holding an Idempotency-Key claim committed, from the events its transaction
 * recorded: the resource of the first event of `resourceType` (else of its first event) as that
 * event shows it. Not yet durable: see confirmDurable.
 */
export async function eventEffectOfClaim(
  db: Sql,
  claim: string,
  resourceType: string,
): Promise<ClaimEffect | undefined> {
  const rows = await db.$queryRawUnsafe<{ resource_id: string; object: unknown }[]>(
    `SELECT resource_id, data -> 'object' AS object FROM events
     WHERE idempotency_claim = $1 ORDER BY (resource_type = $2) DESC, seq LIMIT 1`,
    claim,
    resourceType,
  );
  const row = rows[0];
  return row && { resourceId: row.resource_id, object: row.object };
}

/**
 * Returns once a change found committed under `claim` would survive a failover; throws when that
 * cannot be had (the caller's retry then asks again). A commit is visible once it is in this
 * server's WAL, even when the connection that made it was cut while it waited for the synchronous
 * standby: a primary cut off from its standby shows a change that the failover then rewinds away. A
 * transaction of our own that writes WAL (a transactional logical message: no table, no privilege)
 * commits only once the standby has everything up to it.
 */
export async function confirmDurable(db: Sql, claim: string): Promise<void> {
  await db.$queryRawUnsafe(`SELECT pg_logical_emit_message(true, 'msp-idempotency', $1)::text AS lsn`, claim);
}
