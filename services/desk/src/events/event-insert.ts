import { EVENT_HEAD_COLUMNS, eventHeadValues, type EventHead } from '@msp/events';
import { sql, type RawBuilder } from 'kysely';

/**
 * The INSERT of an event recorded by the statement that writes its resource: one event per row of
 * `from` (a CTE of that statement with the written row's `id`), whose `data` is `{object}`. Writing
 * both in one statement saves a round trip on paths that run per message; the caller announces the
 * event (`announceEventRecorded`) once the statement ran.
 */
export function eventInsertFrom(
  from: string,
  tenantId: string,
  head: EventHead,
  object: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`INSERT INTO events (${sql.raw(EVENT_HEAD_COLUMNS)}, tenant_id, resource_id, data)
    SELECT ${sql.join(eventHeadValues(head))}, ${tenantId}::uuid, ${sql.ref(`${from}.id`)}::text, jsonb_build_object('object', ${object})
    FROM ${sql.table(from)}`;
}
