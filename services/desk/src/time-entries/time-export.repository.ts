import type { Readable } from 'node:stream';
import { exportSlots, streamInReadOnlyTransaction, type StreamableQuery } from '@msp/db';
import { exportCapacityExhausted } from '@msp/http';
import { sql, type RawBuilder } from 'kysely';
import { TIME_EXPORT_POOL_SIZE, type Db } from '../db';

export { TIME_EXPORT_POOL_SIZE };

/** How the export's connections show up in pg_stat_activity (operators, and the disconnect test). */
export const TIME_EXPORT_APPLICATION_NAME = 'desk-time-export';

/** One line of the time export: a client's ticket's technician and their billable minutes in the month. */
export interface TimeExportRow {
  client_id: string;
  client_name: string;
  ticket_number: number;
  ticket_title: string;
  user_id: string;
  user_name: string;
  billable_minutes: string;
  /** Decimal hours rounded to two decimals, PostgreSQL's numeric text (`1.25`): exact, never a float. */
  hours: string;
  /** ISO 4217 code of the rate and the amount. */
  currency: string;
  /** Minor units per hour, or null for entries without a rate. */
  hourly_rate: string | null;
  /** billable_minutes × hourly_rate / 60 in minor units, rounded half up once for the line; null without a rate. */
  amount: string | null;
}

/**
 * The billable minutes of one tenant's month per client, ticket, technician and price (currency
 * and hourly rate: one line per rate, so an entry priced apart is a line of its own), summed on
 * the (tenant_id, date) index before anything is joined, and ordered by client name, ticket
 * number, technician name (ids break ties between equal names), then currency and rate (no rate
 * last). A line's amount is its minutes at its rate, rounded half up to the minor unit once, as an
 * invoice line's: billable_minutes × hourly_rate / 60. `period` is the month (`YYYY-MM`).
 */
export function timeExportRows(tenantId: string, period: string): RawBuilder<TimeExportRow> {
  return sql<TimeExportRow>`
WITH sums AS (
  SELECT client_id, ticket_id, user_id, currency, hourly_rate, sum(minutes) AS minutes
    FROM time_entries
   WHERE tenant_id = ${tenantId}::uuid AND date >= (${period}::text || '-01')::date
     AND date < ((${period}::text || '-01')::date + interval '1 month')::date AND billable
   GROUP BY client_id, ticket_id, user_id, currency, hourly_rate
)
SELECT s.client_id, c.name::text AS client_name, t.number AS ticket_number, t.title AS ticket_title,
       s.user_id, u.name AS user_name, s.minutes::text AS billable_minutes, round(s.minutes / 60.0, 2)::text AS hours,
       s.currency, s.hourly_rate::text AS hourly_rate, ((s.minutes * s.hourly_rate + 30) / 60)::text AS amount
  FROM sums s
  JOIN clients c ON c.id = s.client_id
  JOIN tickets t ON t.id = s.ticket_id
  JOIN users u ON u.id = s.user_id
 ORDER BY c.name, c.id, t.number, u.name, u.id, s.currency, s.hourly_rate NULLS LAST`;
}

/** How long an export waits for one of them when configuration says nothing (EXPORT_POOL_ACQUIRE_TIMEOUT_MS). */
export const TIME_EXPORT_ACQUIRE_TIMEOUT_MS = 5_000;
/** What a caller that found every export busy is told to wait before trying again. */
export const TIME_EXPORT_BUSY_RETRY_AFTER_SECONDS = 5;

export interface TimeExportRepositoryOptions {
  /** How long an export waits for a free slot before it answers 503 (TIME_EXPORT_ACQUIRE_TIMEOUT_MS when not given). */
  acquireTimeoutMs?: number;
}

/** `query`'s rows through a cursor on `db`'s connection, `chunkSize` rows a round trip. */
function streamable<Row>(db: Db, query: RawBuilder<Row>): StreamableQuery<Row> {
  return {
    async *stream(chunkSize = 500) {
      for await (const result of db.getExecutor().stream(query.compile(db), chunkSize)) yield* result.rows;
    },
  };
}

/**
 * The export streams from `db` (the read replica when there is one), through a cursor inside a
 * read-only transaction that names its connection TIME_EXPORT_APPLICATION_NAME while it lasts; at
 * most TIME_EXPORT_POOL_SIZE exports at once, so long downloads never take the connections the
 * API's requests need (the pool holds that many more, createDb).
 */
export function createTimeExportRepository(db: Db, options: TimeExportRepositoryOptions = {}) {
  const acquireTimeoutMs = options.acquireTimeoutMs ?? TIME_EXPORT_ACQUIRE_TIMEOUT_MS;
  const slots = exportSlots(TIME_EXPORT_POOL_SIZE, acquireTimeoutMs, (busy) =>
    exportCapacityExhausted('time export', busy, TIME_EXPORT_BUSY_RETRY_AFTER_SECONDS),
  );

  return {
    /**
     * The month's rows (object mode, {@link TimeExportRow}), streamed as the database produces them;
     * a 503 problem with Retry-After when no export slot came free within the acquire timeout.
     */
    async rows(tenantId: string, period: string, signal?: AbortSignal): Promise<Readable> {
      const release = await slots.acquire(signal);
      return streamInReadOnlyTransaction(db, (trx) => streamable(trx, timeExportRows(tenantId, period)), {
        applicationName: TIME_EXPORT_APPLICATION_NAME,
        signal,
        release,
      });
    },
  };
}

export type TimeExportRepository = ReturnType<typeof createTimeExportRepository>;
