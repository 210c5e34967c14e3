import { sqlRows } from '@msp/db';
import type { Db } from '../db';
import { Prisma } from '../generated/prisma/client';

/** Worked minutes before a period and inside it, and the days of approved leave: set-based, one query per table. */
export interface AccountFacts {
  workedBefore: number;
  workedIn: number;
  /** `YYYY-MM-DD`, each once, from `since` (or the first) to the period's last day. */
  leaveDaysBefore: string[];
  leaveDaysIn: string[];
}

/** Every query is bounded by the caller's tenant. */
export function createTimeAccountsRepository(db: Db) {
  const rows = sqlRows(db, db.pool);

  return {
    /**
     * The user's worked minutes (the sheets' stored `worked_minutes`, standby excluded) and approved
     * leave days from `since` (null: all) to `last`, split at `first` (the period's first day).
     */
    async facts(tenantId: string, userId: string, since: string | null, first: string, last: string): Promise<AccountFacts> {
      const from = since === null ? Prisma.empty : Prisma.sql`AND t.date >= ${since}::date`;
      const leaveFrom = since === null ? Prisma.empty : Prisma.sql`AND d.day >= ${since}::date`;
      const [worked, leaveDays] = await Promise.all([
        rows<{ before: string; inside: string }>(Prisma.sql`
          SELECT coalesce(sum(t.worked_minutes) FILTER (WHERE t.date < ${first}::date), 0)::bigint AS before,
                 coalesce(sum(t.worked_minutes) FILTER (WHERE t.date >= ${first}::date), 0)::bigint AS inside
          FROM timesheets t
          WHERE t.tenant_id = ${tenantId}::uuid AND t.user_id = ${userId}::uuid AND t.date <= ${last}::date ${from}`),
        rows<{ day: string }>(Prisma.sql`
          SELECT DISTINCT to_char(d.day, 'YYYY-MM-DD') AS day
          FROM leave_days d JOIN leaves l ON l.id = d.leave_id
          WHERE d.tenant_id = ${tenantId}::uuid AND d.user_id = ${userId}::uuid AND l.status = 'approved' AND d.day <= ${last}::date ${leaveFrom}
          ORDER BY 1`),
      ]);
      const days = leaveDays.map((row) => row.day);
      return {
        workedBefore: Number(worked[0]?.before ?? 0),
        workedIn: Number(worked[0]?.inside ?? 0),
        leaveDaysBefore: days.filter((day) => day < first),
        leaveDaysIn: days.filter((day) => day >= first),
      };
    },
  };
}

export type TimeAccountsRepository = ReturnType<typeof createTimeAccountsRepository>;
