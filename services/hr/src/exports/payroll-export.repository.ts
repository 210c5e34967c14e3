import type { Readable } from 'node:stream';
import { exportSlots, streamInReadOnlyTransaction } from '@msp/db';
import { exportCapacityExhausted, STREAMED_FILE_IDLE_TIMEOUT_MS } from '@msp/http';
import { sql } from 'kysely';
import type { Db } from '../db';
import { WAGE_TYPE_KEYS, type WageTypes } from '../payroll/payroll-settings.schemas';
import type { Period, PayrollRow } from './payroll-row';

/** How an export's connection shows up in pg_stat_activity while it streams (operators, and the disconnect test). */
export const EXPORT_APPLICATION_NAME = 'hr-payroll-export';

/**
 * The export's limits when configuration says nothing (EXPORT_POOL_SIZE: at most this many exports
 * stream at once per instance; EXPORT_POOL_ACQUIRE_TIMEOUT_MS; EXPORT_IDLE_TIMEOUT_MS).
 */
export const EXPORT_DEFAULTS = {
  poolSize: 10,
  acquireTimeoutMs: 5_000,
  idleTimeoutMs: STREAMED_FILE_IDLE_TIMEOUT_MS,
} as const;

/** What a caller that found every export slot taken is told to wait before trying again. */
export const EXPORT_BUSY_RETRY_AFTER_SECONDS = 5;

interface Quantity {
  user_id: string;
  category: string;
  unit: PayrollRow['unit'];
  quantity: string;
}

/**
 * The aggregated rows of one tenant and period, one per employee and category, mapped to the
 * tenant's wage type. Hours: the minutes of the entries of the timesheets dated in the period.
 * Days: Monday–Friday of every approved leave, clipped to the period; a vacation's days that an
 * approved sick leave covers are paid as sick only (§9 BUrlG: they return to the leave account).
 * Rows of a user_id that is no employee of the tenant drop out at the join.
 */
function payrollRows(db: Db, tenantId: string, period: Period, wageTypes: WageTypes) {
  const { first, last } = period;
  return db
    .with(
      'quantities',
      // In parentheses: Kysely writes a raw expression as it is after AS.
      () => sql<Quantity>`(
        SELECT t.user_id, e.category, 'hours' AS unit, round(sum(e.minutes) / 60.0, 2) AS quantity
          FROM timesheets t
          JOIN timesheet_entries e ON e.timesheet_id = t.id
         WHERE t.tenant_id = ${tenantId} AND t.date BETWEEN ${first}::date AND ${last}::date
         GROUP BY t.user_id, e.category
        UNION ALL
        SELECT l.user_id, l.type, 'days', round(count(*), 2)
          FROM leaves l
          CROSS JOIN LATERAL generate_series(greatest(l.start_date, ${first}::date), least(l.end_date, ${last}::date), interval '1 day') AS d(day)
         WHERE l.tenant_id = ${tenantId} AND l.status = 'approved' AND l.start_date <= ${last}::date AND l.end_date >= ${first}::date
           AND extract(isodow FROM d.day) < 6
           AND NOT (l.type = 'vacation' AND EXISTS (
                 SELECT 1 FROM leaves s
                  WHERE s.tenant_id = ${tenantId} AND s.user_id = l.user_id AND s.type = 'sick' AND s.status = 'approved'
                    AND s.start_date <= d.day AND s.end_date >= d.day))
         GROUP BY l.user_id, l.type)`,
    )
    .selectFrom('quantities as q')
    .innerJoin('employees as p', (join) => join.on('p.tenant_id', '=', tenantId).onRef('p.user_id', '=', 'q.user_id'))
    .innerJoin(
      sql<{
        category: string;
        wage_type: string;
      }>`unnest(${[...WAGE_TYPE_KEYS]}::text[], ${WAGE_TYPE_KEYS.map((key) => wageTypes[key])}::text[])`.as<'m'>(
        sql`m(category, wage_type)`,
      ),
      'm.category',
      'q.category',
    )
    .select([
      'p.personnel_number',
      'p.name',
      'm.wage_type',
      'q.category',
      sql<string>`q.quantity::text`.as('quantity'),
      'q.unit',
    ])
    .where(sql<boolean>`q.quantity > 0`);
}

/**
 * The export's statement in the file's order: personnel numbers numerically ("9" before "10"), then
 * wage type, then category. Exported so that a benchmark can compile and run exactly this.
 */
export function payrollRowsInOrder(db: Db, tenantId: string, period: Period, wageTypes: WageTypes) {
  return payrollRows(db, tenantId, period, wageTypes)
    .orderBy(sql`p.personnel_number::numeric`)
    .orderBy('p.personnel_number')
    .orderBy(sql`m.wage_type::integer`)
    .orderBy('q.category');
}

export interface PayrollExportRepositoryOptions {
  /** Exports streaming at once in this instance (each holds a connection of the pool while it streams). */
  poolSize: number;
  /** How long an export waits for one of those before it answers 503. */
  acquireTimeoutMs: number;
}

/**
 * The export streams from `db` (the read replica's pool when there is one), through a cursor inside a read-only transaction that
 * names its connection EXPORT_APPLICATION_NAME while it lasts; at most `poolSize` exports at once.
 */
export function createPayrollExportRepository(db: Db, options: PayrollExportRepositoryOptions) {
  const slots = exportSlots(options.poolSize, options.acquireTimeoutMs, (busy) =>
    exportCapacityExhausted('payroll export', busy, EXPORT_BUSY_RETRY_AFTER_SECONDS),
  );

  return {
    /**
     * The period's rows in export order, streamed as the database produces them (object mode,
     * {@link PayrollRow}); a 503 problem with Retry-After when no export slot came free in time.
     */
    async rows(tenantId: string, period: Period, wageTypes: WageTypes, signal?: AbortSignal): Promise<Readable> {
      const release = await slots.acquire(signal);
      return streamInReadOnlyTransaction(db, (trx) => payrollRowsInOrder(trx, tenantId, period, wageTypes), {
        applicationName: EXPORT_APPLICATION_NAME,
        signal,
        release,
      });
    },

    /** Personnel numbers in the period's export longer than `maxLength` (DATEV's limit), in export order. */
    async personnelNumbersLongerThan(
      tenantId: string,
      period: Period,
      wageTypes: WageTypes,
      maxLength: number,
    ): Promise<string[]> {
      const release = await slots.acquire();
      try {
        const rows = await db
          .selectFrom(payrollRows(db, tenantId, period, wageTypes).as('r'))
          .select('r.personnel_number')
          .where(sql<number>`length(r.personnel_number)`, '>', maxLength)
          .groupBy('r.personnel_number')
          .orderBy(sql`r.personnel_number::numeric`)
          .orderBy('r.personnel_number')
          .execute();
        return rows.map((row) => row.personnel_number);
      } finally {
        release();
      }
    },
  };
}

export type PayrollExportRepository = ReturnType<typeof createPayrollExportRepository>;
