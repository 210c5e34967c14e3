import { rawSqlOverKysely } from '@msp/db';
import type { RecordChange } from '@msp/events';
import { sql, type Selectable } from 'kysely';
import type { Db } from '../db';
import type { LeaveAdjustment } from '../generated/kysely/database';
import { SICK_COVERS_DAY } from '../leaves/leaves.repository';
import type { VacationDays } from './leave-account-rules';

export interface LeaveAdjustmentRecord {
  id: string;
  employeeId: string;
  year: number;
  /** ± half days. */
  days: number;
  reason: string;
  /** ISO 8601, UTC. */
  createdAt: string;
}

export type NewLeaveAdjustment = Pick<LeaveAdjustmentRecord, 'year' | 'days' | 'reason'>;

// The decimal's text: a whole or half day, exact as a number.
const toAdjustment = (row: Selectable<LeaveAdjustment>): LeaveAdjustmentRecord => ({
  id: row.id,
  employeeId: row.employee_id,
  year: row.year,
  days: Number(row.days),
  reason: row.reason,
  createdAt: row.created_at.toISOString(),
});

/** Every query is bounded by the caller's tenant. */
export function createLeaveAccountsRepository(db: Db) {
  return {
    /** The employee's adjustments of the years up to `lastYear`, oldest first. */
    async adjustments(tenantId: string, employeeId: string, lastYear: number): Promise<LeaveAdjustmentRecord[]> {
      const rows = await db
        .selectFrom('leave_adjustments')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('employee_id', '=', employeeId)
        .where('year', '<=', lastYear)
        .orderBy('year')
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toAdjustment);
    },

    /**
     * The user's vacation working days per year up to `lastYear`, summed in one statement:
     * approved ones up to `today` (taken) and after it (planned), requested ones, and approved
     * ones up to each year's carry-over expiry day (`expiry`, `MM-DD`). Days a sick leave covers
     * are left out (§9 BUrlG).
     */
    async vacationDays(
      tenantId: string,
      userId: string,
      lastYear: number,
      today: string,
      expiry: string,
    ): Promise<Map<number, VacationDays>> {
      // The expiry day of each row's year as a date, never as text glued to a year of fewer than four digits.
      const [expiryMonth, expiryDay] = expiry.split('-').map(Number) as [number, number];
      const year = sql<number>`extract(year FROM d.day)::int`;
      const rows = await db
        .selectFrom('leave_days as d')
        .innerJoin('leaves as l', 'l.id', 'd.leave_id')
        .select((eb) => [
          year.as('year'),
          eb.fn
            .countAll<number>()
            .filterWhere('l.status', '=', 'approved')
            .filterWhere('d.day', '<=', today)
            .as('taken'),
          eb.fn
            .countAll<number>()
            .filterWhere('l.status', '=', 'approved')
            .filterWhere('d.day', '>', today)
            .as('planned'),
          eb.fn.countAll<number>().filterWhere('l.status', '=', 'requested').as('requested'),
          eb.fn
            .countAll<number>()
            .filterWhere('l.status', '=', 'approved')
            .filterWhere('d.day', '<=', sql<string>`make_date(${year}, ${expiryMonth}::int, ${expiryDay}::int)`)
            .as('before_expiry'),
        ])
        .where('d.tenant_id', '=', tenantId)
        .where('d.user_id', '=', userId)
        .where('d.day', '<=', sql<string>`make_date(${lastYear}::int, 12, 31)`)
        .where('l.type', '=', 'vacation')
        .where('l.status', 'in', ['requested', 'approved'])
        .where(sql<boolean>`NOT ${SICK_COVERS_DAY}`)
        .groupBy(year)
        .execute();
      return new Map(
        rows.map((row) => [
          row.year,
          { taken: row.taken, planned: row.planned, requested: row.requested, beforeExpiry: row.before_expiry },
        ]),
      );
    },

    /** Adds the adjustment and `record`s its event in the same transaction. */
    createAdjustment(
      tenantId: string,
      employeeId: string,
      input: NewLeaveAdjustment,
      record: RecordChange<LeaveAdjustmentRecord>,
    ): Promise<LeaveAdjustmentRecord> {
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('leave_adjustments')
          .values({
            tenant_id: tenantId,
            employee_id: employeeId,
            year: input.year,
            days: String(input.days),
            reason: input.reason,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        const created = toAdjustment(row);
        await record(rawSqlOverKysely(trx), created);
        return created;
      });
    },
  };
}

export type LeaveAccountsRepository = ReturnType<typeof createLeaveAccountsRepository>;
