import type { Readable } from 'node:stream';
import { createStreamPool, StreamPoolBusyError } from '@msp/db';
import { AppError } from '@msp/http';

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
 * invoice line's: billable_minutes × hourly_rate / 60. $1 tenant, $2 the month (`YYYY-MM`).
 */
export const TIME_EXPORT_SQL = `
WITH sums AS (
  SELECT client_id, ticket_id, user_id, currency, hourly_rate, sum(minutes) AS minutes
    FROM time_entries
   WHERE tenant_id = $1::uuid AND date >= ($2::text || '-01')::date AND date < (($2::text || '-01')::date + interval '1 month')::date AND billable
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

/** Connections of the export's pool: at most this many exports stream at once per instance. */
export const TIME_EXPORT_POOL_SIZE = 4;
/** How long an export waits for one of them when configuration says nothing (EXPORT_POOL_ACQUIRE_TIMEOUT_MS). */
export const TIME_EXPORT_ACQUIRE_TIMEOUT_MS = 5_000;
/** What a caller that found the pool full is told to wait before trying again. */
export const TIME_EXPORT_BUSY_RETRY_AFTER_SECONDS = 5;

export interface TimeExportRepositoryOptions {
  /** How long an export waits for a connection of its pool before it answers 503 (TIME_EXPORT_ACQUIRE_TIMEOUT_MS when not given). */
  acquireTimeoutMs?: number;
}

/**
 * Streams the export from a small pool of its own on desk's database (@msp/db's stream pool, a
 * cursor per export), so long downloads never hold the connections the API's requests need.
 */
export function createTimeExportRepository(databaseUrl: string, options: TimeExportRepositoryOptions = {}) {
  const acquireTimeoutMs = options.acquireTimeoutMs ?? TIME_EXPORT_ACQUIRE_TIMEOUT_MS;
  const pool = createStreamPool({ databaseUrl, applicationName: TIME_EXPORT_APPLICATION_NAME, size: TIME_EXPORT_POOL_SIZE, acquireTimeoutMs });

  return {
    /**
     * The month's rows (object mode, {@link TimeExportRow}), streamed as the database produces them;
     * a 503 problem with Retry-After when no connection of the pool came free within the acquire timeout.
     */
    async rows(tenantId: string, period: string, signal?: AbortSignal): Promise<Readable> {
      try {
        return await pool.rows(TIME_EXPORT_SQL, [tenantId, period], { signal });
      } catch (error) {
        if (!(error instanceof StreamPoolBusyError)) throw error;
        throw new AppError(
          503,
          `Every connection of the time export is busy (${TIME_EXPORT_POOL_SIZE} exports at once) and none came free within ${acquireTimeoutMs} ms. Retry after the time given in Retry-After.`,
          { code: 'export-capacity-exhausted', headers: { 'Retry-After': String(TIME_EXPORT_BUSY_RETRY_AFTER_SECONDS) }, cause: error },
        );
      }
    },

    close(): Promise<void> {
      return pool.close();
    },
  };
}

export type TimeExportRepository = ReturnType<typeof createTimeExportRepository>;
