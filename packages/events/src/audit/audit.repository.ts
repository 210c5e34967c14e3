import { keysetPage, listCountSql, sqlRows, type SqlQuery } from '@msp/db';
import { UUID_PATTERN, unknownAfterItem, type PageRequest } from '@msp/http';
import type { Sql } from '../sql';
import type { AuditEventJson, AuditFilter } from './audit.schemas';

interface EventRow {
  id: string;
  occurred_at: Date | string;
  type: string;
  resource_type: string;
  resource_id: string;
  actor_client_id: string;
  actor_on_behalf_of: string | null;
  changes: AuditEventJson['changes'];
  request_id: string | null;
}

const toAuditEvent = (row: EventRow): AuditEventJson => ({
  id: row.id,
  occurred_at: new Date(row.occurred_at).toISOString(),
  action: row.type,
  resource_type: row.resource_type,
  resource_id: row.resource_id,
  actor: { client_id: row.actor_client_id, on_behalf_of: row.actor_on_behalf_of },
  changes: row.changes,
  request_id: row.request_id,
});

/** The list's name in list_counts (the events table's triggers, migration *_events_lists_retention). */
export const AUDIT_LIST = 'audit-events';

const COLUMNS =
  'id::text, occurred_at, seq, type, resource_type, resource_id, actor_client_id, actor_on_behalf_of, changes, request_id';
const ORDER = 'ORDER BY occurred_at DESC, seq DESC';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;
const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
const dayKey = (ms: number) => new Date(ms).toISOString().slice(0, 10);
// to_jsonb(timestamp)->>'' of the occurred_hour column: "2026-11-25T13:00:00".
const hourKey = (ms: number) => new Date(ms).toISOString().slice(0, 19);
const iso = (ms: number) => new Date(ms).toISOString();
/** The start of the last hour an instant may be in (the API takes years 0001–9999). */
const LAST_HOUR = Date.parse('9999-12-31T23:00:00.000Z');

/**
 * The exact number of the tenant's events in [from, to) (either open), at any size in a bounded
 * number of reads: the whole UTC days inside from the day counters (at most the retention's ~400
 * rows), the whole hours of the two partial edge days from the hour counters (at most 2 × 23
 * rows), and each partial edge hour by a range scan of events_tenant_id_occurred_at_seq_idx over
 * its smaller side: the part inside the range, or its hour's counter less the part outside (so at
 * most half an hour of events is scanned per edge). Day buckets alone left whole edge days to scan
 * (a busy tenant's day is 25,000 events at 10M a year); hours alone summed up to 9,600 rows for a
 * year. The counters and the scans read one snapshot (one statement), so the difference is exact.
 */
export function auditRangeCountSql(tenantId: string, from: string | undefined, to: string | undefined): SqlQuery {
  const values: unknown[] = [tenantId];
  const parts: string[] = [];
  const counters = (dimension: 'occurred_day' | 'occurred_hour', low: string | null, high: string | null) => {
    values.push(low ?? '0000', high ?? '9999');
    parts.push(`+ (SELECT coalesce(sum(count), 0) FROM list_counts WHERE tenant_id = $1::uuid AND list = '${AUDIT_LIST}' AND dimension = '${dimension}'
                   AND value >= $${values.length - 1}::text AND value < $${values.length}::text)`);
  };
  const scan = (low: number, high: number, sign: '+' | '-' = '+') => {
    if (low >= high) return;
    values.push(iso(low), iso(high));
    parts.push(
      `${sign} (SELECT count(*) FROM events WHERE tenant_id = $1::uuid AND occurred_at >= ` +
        `$${values.length - 1}::timestamptz AND occurred_at < $${values.length}::timestamptz)`,
    );
  };
  /** The events in [low, high), part of the hour starting at `hour`: scanned, or the hour's counter less the rest of it scanned. */
  const partOfHour = (hour: number, low: number, high: number) => {
    if (low >= high) return;
    // Year 9999's last hour has no hour after it to write (ISO years have four digits): scanned.
    if (high - low <= HOUR_MS / 2 || hour >= LAST_HOUR) return scan(low, high);
    counters('occurred_hour', hourKey(hour), hourKey(hour + HOUR_MS));
    scan(hour, low, '-');
    scan(high, hour + HOUR_MS, '-');
  };
  const f = from === undefined ? undefined : Date.parse(from);
  const t = to === undefined ? undefined : Date.parse(to);
  // The whole hours [fh, th) and, inside them, the whole days [fd, td).
  const fh = f === undefined ? undefined : ceilTo(f, HOUR_MS);
  const th = t === undefined ? undefined : floorTo(t, HOUR_MS);
  if (fh !== undefined && th !== undefined && fh > th) {
    // Within one hour.
    partOfHour(th, f!, t!);
  } else {
    if (f !== undefined) partOfHour(fh! - HOUR_MS, f, fh!);
    if (t !== undefined) partOfHour(th!, th!, t);
    const fd = fh === undefined ? undefined : ceilTo(fh, DAY_MS);
    const td = th === undefined ? undefined : floorTo(th, DAY_MS);
    if (fd !== undefined && td !== undefined && fd > td) {
      counters('occurred_hour', hourKey(fh!), hourKey(th!));
    } else {
      if (fh !== undefined && fh < fd!) counters('occurred_hour', hourKey(fh), hourKey(fd!));
      if (th !== undefined && td! < th) counters('occurred_hour', hourKey(td!), hourKey(th));
      counters('occurred_day', fd === undefined ? null : dayKey(fd), td === undefined ? null : dayKey(td));
    }
  }
  return { text: `SELECT 0 ${parts.join(' ')} AS count`, values };
}

/**
 * The total for the filters: one counter read for none or one of them (resource_type, actor and
 * each of the types from list_counts, from/to from the time buckets), a count of the resource's
 * index entries for resource_id (a resource's own events: bounded by them, not by the tenant's
 * size), count(*) through the indexes only for two or more filters at once.
 */
function totalSql(tenantId: string, filter: AuditFilter, where: { text: string; values: unknown[] }): SqlQuery {
  const named = (['resource_type', 'resource_id', 'actor', 'from', 'to', 'types'] as const).filter(
    (key) => filter[key] !== undefined,
  );
  const only = named.length === 1 ? named[0] : undefined;
  if (named.length === 0) return listCountSql(tenantId, AUDIT_LIST);
  if (only === 'resource_type')
    return listCountSql(tenantId, AUDIT_LIST, { dimension: 'resource_type', value: filter.resource_type! });
  if (only === 'types') {
    return {
      text: `SELECT coalesce(sum(count), 0) AS count FROM list_counts WHERE tenant_id = $1::uuid AND list = $2
        AND dimension = 'type' AND value = ANY($3::text[])`,
      values: [tenantId, AUDIT_LIST, filter.types],
    };
  }
  if (only === 'actor') {
    const mine = listCountSql(tenantId, AUDIT_LIST, { dimension: 'actor_client_id', value: filter.actor! });
    const forOthers = listCountSql(tenantId, AUDIT_LIST, { dimension: 'actor_for', value: filter.actor! });
    return {
      text: `SELECT (${mine.text}) + (${forOthers.text.replace(/\$(\d)/g, (_, n: string) => `$${Number(n) + 4}`)}) AS count`,
      values: [...mine.values, ...forOthers.values],
    };
  }
  if (named.every((key) => key === 'from' || key === 'to')) return auditRangeCountSql(tenantId, filter.from, filter.to);
  const values = [...where.values];
  const conditions = [where.text];
  if (filter.types !== undefined) {
    values.push(filter.types);
    conditions.push(`type = ANY($${values.length}::text[])`);
  }
  if (filter.actor !== undefined) {
    values.push(filter.actor);
    conditions.push(`(actor_client_id = $${values.length} OR actor_for = $${values.length})`);
  }
  return { text: `SELECT count(*) AS count FROM events WHERE ${conditions.join(' AND ')}`, values };
}

/**
 * The spellings of a resource id a filter matches: the id as given, and, for an id (UUID) in
 * capitals, its lower case too, the way every service stores the ids it makes (an id a directory
 * made, such as a SCIM id, is kept as that directory spells it: hence both).
 */
function resourceIdSpellings(resourceId: string): string[] {
  return UUID_PATTERN.test(resourceId) && resourceId !== resourceId.toLowerCase()
    ? [resourceId, resourceId.toLowerCase()]
    : [resourceId];
}

/** The audit log is the event stream read back: one row per change, newest first. */
export function createAuditRepository(db: Sql) {
  const rows = sqlRows(db);
  return {
    /**
     * A page of the tenant's events with the filters, newest first, and the exact total. Each
     * single filter's page is an index scan that stops at its LIMIT (indexes of the migrations
     * *_events_lists_retention and *_events_audit_type); `after` starts it right after that event
     * (keyset), at any depth.
     */
    async list(
      tenantId: string,
      filter: AuditFilter,
      page: PageRequest,
    ): Promise<{ items: AuditEventJson[]; total: number }> {
      const values: unknown[] = [tenantId];
      const conditions = ['tenant_id = $1::uuid'];
      const add = (condition: (n: number) => string, value: unknown) => {
        values.push(value);
        conditions.push(condition(values.length));
      };
      if (filter.resource_type !== undefined) add((n) => `resource_type = $${n}`, filter.resource_type);
      if (filter.resource_id !== undefined)
        add((n) => `resource_id = ANY($${n}::text[])`, resourceIdSpellings(filter.resource_id));
      if (filter.from !== undefined) add((n) => `occurred_at >= $${n}::timestamptz`, filter.from);
      if (filter.to !== undefined) add((n) => `occurred_at < $${n}::timestamptz`, filter.to);
      const where = { text: conditions.join(' AND '), values: [...values] };
      if (page.after !== undefined) {
        add(
          (n) =>
            `(occurred_at, seq) < (SELECT a.occurred_at, a.seq FROM events a WHERE a.id = $${n}::uuid AND a.tenant_id = $1::uuid)`,
          page.after,
        );
      }
      const skip = (page.page - 1) * page.per_page;
      values.push(skip, page.per_page);
      const [offset, limit] = [`$${values.length - 1}`, `$${values.length}`];
      // Each type, and `actor` as the caller or the client it acted for, is an ordered index scan
      // of its own (an OR or an IN would sort every match): the branches are merged, each stopping
      // at the page's end. They never share a row (one type per event; actor_for never repeats
      // actor_client_id).
      const param = (value: unknown) => {
        values.push(value);
        return `$${values.length}`;
      };
      const byType = filter.types === undefined ? [undefined] : filter.types.map((type) => `type = ${param(type)}`);
      const actor = filter.actor === undefined ? undefined : param(filter.actor);
      const byActor = actor === undefined ? [undefined] : [`actor_client_id = ${actor}`, `actor_for = ${actor}`];
      const branches = byType.flatMap((type) =>
        byActor.map((who) => [...conditions, ...[type, who].filter((c): c is string => c !== undefined)].join(' AND ')),
      );
      const branchPage = (branch: string) =>
        `(SELECT ${COLUMNS} FROM events WHERE ${branch} ${ORDER} LIMIT ${offset}::bigint + ${limit}::bigint)`;
      const text =
        branches.length === 1
          ? `SELECT ${COLUMNS} FROM events WHERE ${branches[0]} ${ORDER} OFFSET ${offset} LIMIT ${limit}`
          : `SELECT * FROM (${branches.map(branchPage).join(' UNION ALL ')}) AS e ${ORDER} OFFSET ${offset} LIMIT ${limit}`;
      const found = await keysetPage<EventRow>(
        rows,
        page,
        {
          page: { text, values },
          total: totalSql(tenantId, filter, where),
          exists: {
            text: 'SELECT 1 FROM events WHERE id = $1::uuid AND tenant_id = $2::uuid',
            values: [page.after, tenantId],
          },
        },
        unknownAfterItem,
      );
      return { items: found.items.map(toAuditEvent), total: found.total };
    },
  };
}

export type AuditRepository = ReturnType<typeof createAuditRepository>;
