import { sqlRows } from '@msp/db';
import { dayOfYear } from '../calendar';
import type { Db } from '../db';
import { Prisma } from '../generated/prisma/client';
import type { RecordDay } from './working-time-rules';

/** Every query is bounded by the caller's tenant and one user; each is one indexed range scan. */
export function createWorkingTimeRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  const whose = (tenantId: string, userId: string) => Prisma.sql`t.tenant_id = ${tenantId}::uuid AND t.user_id = ${userId}::uuid`;

  return {
    /** The user's sheets from `from` to `to` in date order, with their standby minutes (not working time). */
    async days(tenantId: string, userId: string, from: string, to: string): Promise<RecordDay[]> {
      const found = await rows<{ date: string; worked_minutes: number; break_minutes: number; standby_minutes: number; warnings: RecordDay['warnings'] }>(Prisma.sql`
        SELECT to_char(t.date, 'YYYY-MM-DD') AS date, t.worked_minutes, t.break_minutes, t.warnings,
               (SELECT coalesce(sum(e.minutes), 0)::int FROM timesheet_entries e WHERE e.timesheet_id = t.id AND e.category = 'standby') AS standby_minutes
        FROM timesheets t
        WHERE ${whose(tenantId, userId)} AND t.date BETWEEN ${from}::date AND ${to}::date
        ORDER BY t.date`);
      return found.map((row) => ({
        date: row.date,
        workedMinutes: row.worked_minutes,
        breakMinutes: row.break_minutes,
        standbyMinutes: Number(row.standby_minutes),
        warnings: row.warnings,
      }));
    },

    /** Worked minutes from `from` to `to`, and the Sundays with work of `year`. */
    async sums(tenantId: string, userId: string, span: { from: string; to: string }, year: number): Promise<{ workedMinutes: number; workedSundays: number }> {
      const first = dayOfYear(year, '01-01');
      const last = dayOfYear(year, '12-31');
      const [found] = await rows<{ worked: string; sundays: string }>(Prisma.sql`
        SELECT coalesce(sum(t.worked_minutes) FILTER (WHERE t.date BETWEEN ${span.from}::date AND ${span.to}::date), 0)::bigint AS worked,
               count(*) FILTER (WHERE t.date BETWEEN ${first}::date AND ${last}::date AND extract(isodow FROM t.date) = 7 AND t.worked_minutes > 0) AS sundays
        FROM timesheets t
        WHERE ${whose(tenantId, userId)}
          AND (t.date BETWEEN ${span.from}::date AND ${span.to}::date OR t.date BETWEEN ${first}::date AND ${last}::date)`);
      return { workedMinutes: Number(found?.worked ?? 0), workedSundays: Number(found?.sundays ?? 0) };
    },
  };
}

export type WorkingTimeRepository = ReturnType<typeof createWorkingTimeRepository>;
