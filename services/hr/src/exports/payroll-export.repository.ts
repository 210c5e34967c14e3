import type { Readable } from 'node:stream';
import { createStreamPool, StreamPoolBusyError } from '@msp/db';
import { AppError, STREAMED_FILE_IDLE_TIMEOUT_MS } from '@msp/http';
import { WAGE_TYPE_KEYS, type WageTypes } from '../payroll/payroll-settings.schemas';
import type { Period, PayrollRow } from './payroll-row';

/** How the export's connections show up in pg_stat_activity (operators, and the disconnect test). */
export const EXPORT_APPLICATION_NAME = 'hr-payroll-export';

/**
 * The export's pool and timeouts when configuration says nothing (EXPORT_POOL_SIZE: at most this many
 * exports stream at once per instance; EXPORT_POOL_ACQUIRE_TIMEOUT_MS; EXPORT_IDLE_TIMEOUT_MS).
 */
export const EXPORT_DEFAULTS = { poolSize: 10, acquireTimeoutMs: 5_000, idleTimeoutMs: STREAMED_FILE_IDLE_TIMEOUT_MS } as const;

/** What a caller that found the pool full is told to wait before trying again. */
export const EXPORT_BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * The aggregated rows of one tenant and period, one per employee and category, already mapped to the
 * tenant's wage type, ordered by personnel number (numerically: "9" before "10") then wage type.
 *   $1 tenant, $2 first day, $3 last day, $4 the categories, $5 their wage types (same order).
 * Hours: the minutes of the entries of the timesheets dated in the period. Days: Monday–Friday of
 * every approved leave, clipped to the period; a vacation's days that an approved sick leave covers are
 * paid as sick only (§9 BUrlG: they return to the leave account). Rows of a user_id that is no employee of the tenant
 * drop out at the join. Kept as one text, so the benchmark's COPY runs exactly this.
 */
export const PAYROLL_ROWS_SQL = `
WITH quantities AS (
  SELECT t.user_id, e.category, 'hours' AS unit, round(sum(e.minutes) / 60.0, 2) AS quantity
    FROM timesheets t
    JOIN timesheet_entries e ON e.timesheet_id = t.id
   WHERE t.tenant_id = $1 AND t.date BETWEEN $2::date AND $3::date
   GROUP BY t.user_id, e.category
  UNION ALL
  SELECT l.user_id, l.type, 'days', round(count(*), 2)
    FROM leaves l
    CROSS JOIN LATERAL generate_series(greatest(l.start_date, $2::date), least(l.end_date, $3::date), interval '1 day') AS d(day)
   WHERE l.tenant_id = $1 AND l.status = 'approved' AND l.start_date <= $3::date AND l.end_date >= $2::date
     AND extract(isodow FROM d.day) < 6
     AND NOT (l.type = 'vacation' AND EXISTS (
           SELECT 1 FROM leaves s
            WHERE s.tenant_id = $1 AND s.user_id = l.user_id AND s.type = 'sick' AND s.status = 'approved'
              AND s.start_date <= d.day AND s.end_date >= d.day))
   GROUP BY l.user_id, l.type
)
SELECT p.personnel_number, p.name, m.wage_type, q.category, q.quantity::text AS quantity, q.unit
  FROM quantities q
  JOIN employees p ON p.tenant_id = $1 AND p.user_id = q.user_id
  JOIN unnest($4::text[], $5::text[]) AS m(category, wage_type) ON m.category = q.category::text
 WHERE q.quantity > 0
 ORDER BY p.personnel_number::numeric, p.personnel_number, m.wage_type::integer, q.category`;

export function payrollRowsParams(tenantId: string, period: Period, wageTypes: WageTypes): unknown[] {
  return [tenantId, period.first, period.last, [...WAGE_TYPE_KEYS], WAGE_TYPE_KEYS.map((key) => wageTypes[key])];
}

export interface PayrollExportRepositoryOptions {
  /** Connections of the export's pool. */
  poolSize: number;
  /** How long an export waits for a connection of the pool before it answers 503 (pg-pool's connectionTimeoutMillis). */
  acquireTimeoutMs: number;
}

/** Streams the export from a pool of its own (@msp/db's stream pool): Prisma cannot hand out a cursor. */
export function createPayrollExportRepository(databaseUrl: string, options: PayrollExportRepositoryOptions) {
  const pool = createStreamPool({ databaseUrl, applicationName: EXPORT_APPLICATION_NAME, size: options.poolSize, acquireTimeoutMs: options.acquireTimeoutMs });

  /** `work` on the pool, or a 503 problem once the acquire timeout has passed without a connection. */
  async function onPool<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof StreamPoolBusyError)) throw error;
      throw new AppError(
        503,
        `Every connection of the payroll export is busy (${options.poolSize} exports at once) and none came free within ${options.acquireTimeoutMs} ms. Retry after the time given in Retry-After.`,
        { code: 'export-capacity-exhausted', headers: { 'Retry-After': String(EXPORT_BUSY_RETRY_AFTER_SECONDS) }, cause: error },
      );
    }
  }

  return {
    /**
     * The period's rows, streamed as the database produces them (object mode, {@link PayrollRow}).
     * A large month spends most of its time before the first row (PostgreSQL aggregates first): a
     * caller gone meanwhile (`signal`) cancels it at once.
     */
    rows(tenantId: string, period: Period, wageTypes: WageTypes, signal?: AbortSignal): Promise<Readable> {
      return onPool(() => pool.rows(PAYROLL_ROWS_SQL, payrollRowsParams(tenantId, period, wageTypes), { signal }));
    },

    /** Personnel numbers in the period's export longer than `maxLength` (DATEV's limit), in export order. */
    async personnelNumbersLongerThan(tenantId: string, period: Period, wageTypes: WageTypes, maxLength: number): Promise<string[]> {
      const params = payrollRowsParams(tenantId, period, wageTypes);
      const rows = await onPool(() =>
        pool.query<Pick<PayrollRow, 'personnel_number'>>(
          `SELECT personnel_number FROM (${PAYROLL_ROWS_SQL}) AS r WHERE length(personnel_number) > $${params.length + 1}
            GROUP BY personnel_number ORDER BY personnel_number::numeric, personnel_number`,
          [...params, maxLength],
        ),
      );
      return rows.map((row) => row.personnel_number);
    },

    close(): Promise<void> {
      return pool.close();
    },
  };
}

export type PayrollExportRepository = ReturnType<typeof createPayrollExportRepository>;
