import { sql } from 'kysely';
import type { Db } from '../db';

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
  return {
    /**
     * The user's worked minutes (the sheets' stored `worked_minutes`, standby excluded) and approved
     * leave days from `since` (null: all) to `last`, split at `first` (the period's first day).
     */
    async facts(
      tenantId: string,
      userId: string,
      since: string | null,
      first: string,
      last: string,
    ): Promise<AccountFacts> {
      const [worked, leaveDays] = await Promise.all([
        db
          .selectFrom('timesheets as t')
          .select((eb) => [
            eb.fn
              .coalesce(eb.fn.sum<number>('t.worked_minutes').filterWhere('t.date', '<', first), sql<number>`0`)
              .as('before'),
            eb.fn
              .coalesce(eb.fn.sum<number>('t.worked_minutes').filterWhere('t.date', '>=', first), sql<number>`0`)
              .as('inside'),
          ])
          .where('t.tenant_id', '=', tenantId)
          .where('t.user_id', '=', userId)
          .where('t.date', '<=', last)
          .$if(since !== null, (query) => query.where('t.date', '>=', since!))
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('leave_days as d')
          .innerJoin('leaves as l', 'l.id', 'd.leave_id')
          .select('d.day')
          .distinct()
          .where('d.tenant_id', '=', tenantId)
          .where('d.user_id', '=', userId)
          .where('l.status', '=', 'approved')
          .where('d.day', '<=', last)
          .$if(since !== null, (query) => query.where('d.day', '>=', since!))
          .orderBy('d.day')
          .execute(),
      ]);
      const days = leaveDays.map((row) => row.day);
      return {
        workedBefore: worked.before,
        workedIn: worked.inside,
        leaveDaysBefore: days.filter((day) => day < first),
        leaveDaysIn: days.filter((day) => day >= first),
      };
    },
  };
}

export type TimeAccountsRepository = ReturnType<typeof createTimeAccountsRepository>;
