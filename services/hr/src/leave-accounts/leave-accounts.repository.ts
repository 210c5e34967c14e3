import type { RecordChange } from '@msp/events';
import { sqlRows } from '@msp/db';
import type { Db } from '../db';
import { Prisma } from '../generated/prisma/client';
import { SICK_COVERS_DAY } from '../leaves/leaves.repository';
import type { VacationDays } from './leave-account-rules';

export interface LeaveAdjustmentRecord {
  id: string;
  employeeId: string;
  year: number;
  /** ± half days. */
  days: number;
  reason: string;
  createdAt: Date;
}

export type NewLeaveAdjustment = Pick<LeaveAdjustmentRecord, 'year' | 'days' | 'reason'>;

interface AdjustmentSqlRow {
  id: string;
  employee_id: string;
  year: number;
  days: number;
  reason: string;
  created_at: string | Date;
}

const fromSql = (row: AdjustmentSqlRow): LeaveAdjustmentRecord => ({
  id: row.id,
  employeeId: row.employee_id,
  year: row.year,
  days: Number(row.days),
  reason: row.reason,
  createdAt: new Date(row.created_at),
});

interface VacationSqlRow {
  year: number;
  taken: number;
  planned: number;
  requested: number;
  before_expiry: number;
}

/** Every query is bounded by the caller's tenant. */
export function createLeaveAccountsRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  return {
    /** The employee's adjustments of the years up to `lastYear`, oldest first. */
    async adjustments(tenantId: string, employeeId: string, lastYear: number): Promise<LeaveAdjustmentRecord[]> {
      const found = await rows<AdjustmentSqlRow>(Prisma.sql`SELECT id, employee_id, year, days::float8 AS days, reason, created_at FROM leave_adjustments
        WHERE tenant_id = ${tenantId}::uuid AND employee_id = ${employeeId}::uuid AND year <= ${lastYear} ORDER BY year, created_at, id`);
      return found.map(fromSql);
    },

    /**
     * The user's vacation working days per year up to `lastYear`, summed in one statement:
     * approved ones up to `today` (taken) and after it (planned), requested ones, and approved
     * ones up to each year's carry-over expiry day (`expiry`, `MM-DD`). Days a sick leave covers
     * are left out (§9 BUrlG).
     */
    async vacationDays(tenantId: string, userId: string, lastYear: number, today: string, expiry: string): Promise<Map<number, VacationDays>> {
      // The expiry day of each row's year as a date, never as text glued to a year of fewer than four digits.
      const [expiryMonth, expiryDay] = expiry.split('-').map(Number) as [number, number];
      const found = await rows<VacationSqlRow>(Prisma.sql`
        SELECT extract(year FROM d.day)::int AS year,
          count(*) FILTER (WHERE l.status = 'approved' AND d.day <= ${today}::date)::int AS taken,
          count(*) FILTER (WHERE l.status = 'approved' AND d.day > ${today}::date)::int AS planned,
          count(*) FILTER (WHERE l.status = 'requested')::int AS requested,
          count(*) FILTER (WHERE l.status = 'approved' AND d.day <= make_date(extract(year FROM d.day)::int, ${expiryMonth}::int, ${expiryDay}::int))::int AS before_expiry
        FROM leave_days d JOIN leaves l ON l.id = d.leave_id
        WHERE d.tenant_id = ${tenantId}::uuid AND d.user_id = ${userId}::uuid AND d.day <= make_date(${lastYear}::int, 12, 31)
          AND l.type = 'vacation' AND l.status IN ('requested', 'approved')
          AND NOT ${SICK_COVERS_DAY}
        GROUP BY 1`);
      return new Map(found.map((row) => [row.year, { taken: row.taken, planned: row.planned, requested: row.requested, beforeExpiry: row.before_expiry }]));
    },

    /** Adds the adjustment and `record`s its event in the same transaction. */
    createAdjustment(tenantId: string, employeeId: string, input: NewLeaveAdjustment, record: RecordChange<LeaveAdjustmentRecord>): Promise<LeaveAdjustmentRecord> {
      return db.$transaction(async (tx) => {
        const row = await tx.leaveAdjustment.create({ data: { tenantId, employeeId, year: input.year, days: input.days, reason: input.reason } });
        const created: LeaveAdjustmentRecord = { id: row.id, employeeId, year: row.year, days: Number(row.days), reason: row.reason, createdAt: row.createdAt };
        await record(tx, created);
        return created;
      });
    },
  };
}

export type LeaveAccountsRepository = ReturnType<typeof createLeaveAccountsRepository>;
