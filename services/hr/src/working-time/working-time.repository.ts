import { sql, type ExpressionBuilder } from 'kysely';
import { dayOfYear } from '../calendar';
import type { Db } from '../db';
import type { DB } from '../generated/kysely/database';
import type { RecordDay } from './working-time-rules';

/** The sheets of one user of the tenant. */
const whose = (tenantId: string, userId: string) => (eb: ExpressionBuilder<DB, 'timesheets'>) =>
  eb.and([eb('timesheets.tenant_id', '=', tenantId), eb('timesheets.user_id', '=', userId)]);

/** Every query is bounded by the caller's tenant and one user; each is one indexed range scan. */
export function createWorkingTimeRepository(db: Db) {
  return {
    /** The user's sheets from `from` to `to` in date order, with their standby minutes (not working time). */
    async days(tenantId: string, userId: string, from: string, to: string): Promise<RecordDay[]> {
      const rows = await db
        .selectFrom('timesheets')
        .select((eb) => [
          'timesheets.date',
          'timesheets.worked_minutes',
          'timesheets.break_minutes',
          'timesheets.warnings',
          eb
            .selectFrom('timesheet_entries as e')
            .select((entries) => entries.fn.coalesce(entries.fn.sum<number>('e.minutes'), entries.lit(0)).as('minutes'))
            .whereRef('e.timesheet_id', '=', 'timesheets.id')
            .where('e.category', '=', 'standby')
            .as('standby_minutes'),
        ])
        .where(whose(tenantId, userId))
        .where((eb) => eb.between('timesheets.date', from, to))
        .orderBy('timesheets.date')
        .execute();
      return rows.map((row) => ({
        date: row.date,
        workedMinutes: row.worked_minutes,
        breakMinutes: row.break_minutes,
        standbyMinutes: row.standby_minutes ?? 0,
        warnings: row.warnings as RecordDay['warnings'],
      }));
    },

    /** Worked minutes from `from` to `to`, and the Sundays with work of `year`. */
    async sums(
      tenantId: string,
      userId: string,
      span: { from: string; to: string },
      year: number,
    ): Promise<{ workedMinutes: number; workedSundays: number }> {
      const first = dayOfYear(year, '01-01');
      const last = dayOfYear(year, '12-31');
      const row = await db
        .selectFrom('timesheets')
        .select((eb) => [
          eb.fn
            .coalesce(
              eb.fn
                .sum<number>('timesheets.worked_minutes')
                .filterWhere((f) => f.between('timesheets.date', span.from, span.to)),
              eb.lit(0),
            )
            .as('worked'),
          eb.fn
            .countAll<number>()
            .filterWhere((f) =>
              f.and([
                f.between('timesheets.date', first, last),
                f(sql`extract(isodow FROM timesheets.date)`, '=', 7),
                f('timesheets.worked_minutes', '>', 0),
              ]),
            )
            .as('sundays'),
        ])
        .where(whose(tenantId, userId))
        .where((eb) =>
          eb.or([eb.between('timesheets.date', span.from, span.to), eb.between('timesheets.date', first, last)]),
        )
        .executeTakeFirstOrThrow();
      return { workedMinutes: row.worked, workedSundays: row.sundays };
    },
  };
}

export type WorkingTimeRepository = ReturnType<typeof createWorkingTimeRepository>;
