import { inListOrder, listCount, listCountRange, listPage, rawSqlOverKysely, uniqueViolation } from '@msp/db';
import type { RecordChange } from '@msp/events';
import { unknownAfterItem, type ListWindow } from '@msp/http';
import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { dateToDay, dayToDate } from '../calendar';
import { countOf, type Db } from '../db';
import type { DB, Timesheet } from '../generated/kysely/database';
import type { DayEntry, DaySummary, DayTotals, TimesheetCategory, TimesheetWarning } from './timesheet-rules';

export interface TimesheetRecord {
  id: string;
  userId: string;
  /** `YYYY-MM-DD`. */
  date: string;
  entries: DayEntry[];
  workedMinutes: number;
  breakMinutes: number;
  warnings: TimesheetWarning[];
  /** ISO 8601, UTC. */
  createdAt: string;
  updatedAt: string;
}

export interface TimesheetFilter {
  userId?: string;
  /** `YYYY-MM-DD`, inclusive. */
  from?: string;
  to?: string;
}

/**
 * The warnings of `date` given its totals and the entries of the days either side (null: no sheet):
 * the service's rules, handed to the repository so they run inside its transaction on what it read.
 */
export type WarningsOf = (
  date: string,
  day: DayTotals,
  previous: readonly DayEntry[] | null,
  next: readonly DayEntry[] | null,
) => TimesheetWarning[];

/** A neighbouring sheet whose warnings a write changed (§4 blocks over midnight, §5 rest). */
export interface NeighbourChange {
  before: TimesheetRecord;
  after: TimesheetRecord;
}

/** The user already has a sheet for that day: `existingId` is it (null if it vanished meanwhile). */
export class DuplicateTimesheetError extends Error {
  constructor(readonly existingId: string | null) {
    super('duplicate timesheet');
    this.name = 'DuplicateTimesheetError';
  }
}

// Prisma's name for @@unique([tenantId, userId, date]): one sheet per user and day.
const ONE_PER_DAY = 'timesheets_tenant_id_user_id_date_key';

/**
 * The tenant's sheets, each with its entries in the same statement (one snapshot: a page's totals
 * and entries always agree).
 */
const sheets = (db: Db, tenantId: string) =>
  db
    .selectFrom('timesheets')
    .selectAll('timesheets')
    .select((eb) =>
      jsonArrayFrom(
        eb
          .selectFrom('timesheet_entries as e')
          .select(['e.start_minute as startMinute', 'e.end_minute as endMinute', 'e.minutes', 'e.category'])
          .whereRef('e.timesheet_id', '=', 'timesheets.id')
          .orderBy('e.position'),
      ).as('entries'),
    )
    .where('timesheets.tenant_id', '=', tenantId);

type SheetRow = Selectable<Timesheet> & {
  entries: { startMinute: number; endMinute: number; minutes: number; category: string }[];
};

// The columns hold only what the API wrote (CHECK constraints on category, the service builds warnings).
function toTimesheet(row: SheetRow): TimesheetRecord {
  return {
    id: row.id,
    userId: row.user_id,
    date: row.date,
    entries: row.entries.map((entry) => ({ ...entry, category: entry.category as TimesheetCategory })),
    workedMinutes: row.worked_minutes,
    breakMinutes: row.break_minutes,
    warnings: row.warnings as TimesheetWarning[],
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const LIST_ORDER = { columns: ['timesheets.date', 'timesheets.id'], direction: 'desc' } as const;

/** The tenant's sheets that match the filter. */
const matching = (tenantId: string, filter: TimesheetFilter) => (eb: ExpressionBuilder<DB, 'timesheets'>) =>
  eb.and([
    eb('timesheets.tenant_id', '=', tenantId),
    ...(filter.userId === undefined ? [] : [eb('timesheets.user_id', '=', filter.userId)]),
    ...(filter.from === undefined ? [] : [eb('timesheets.date', '>=', filter.from)]),
    ...(filter.to === undefined ? [] : [eb('timesheets.date', '<=', filter.to)]),
  ]);

/**
 * The exact total of the list: the whole list, one user, or the day counters of `from`–`to` (a sum
 * over the days of the range, however many sheets they hold) from list_counts; a user and a range
 * together count through the user's index, bounded by the user's days in the range.
 */
async function total(db: Db, tenantId: string, filter: TimesheetFilter): Promise<number> {
  const ranged = filter.from !== undefined || filter.to !== undefined;
  const list = { tenantId, list: 'timesheets' };
  if (filter.userId === undefined)
    return ranged
      ? listCountRange(db, { ...list, dimension: 'date', from: filter.from, to: filter.to })
      : listCount(db, list);
  // The counters hold ids as PostgreSQL writes them (lower case); the API takes either case.
  if (!ranged) return listCount(db, { ...list, dimension: 'user_id', value: filter.userId.toLowerCase() });
  return countOf(db.selectFrom('timesheets').where(matching(tenantId, filter)));
}

const entryRows = (timesheetId: string, summary: DaySummary) =>
  summary.entries.map((entry, position) => ({
    timesheet_id: timesheetId,
    position,
    start_minute: entry.startMinute,
    end_minute: entry.endMinute,
    minutes: entry.minutes,
    category: entry.category,
  }));

/** The stored totals of a day; its warnings as JSON text (pg would send a JavaScript array as a PostgreSQL array). */
const totals = (summary: DaySummary) => ({
  worked_minutes: summary.workedMinutes,
  break_minutes: summary.breakMinutes,
  warnings: JSON.stringify(summary.warnings),
});

/**
 * What a sheet's day is made of (entries and totals), in one fixed shape: the same day sent again,
 * in any order, is the same text, as it is the same API JSON (no `changes`).
 */
const dayOf = (sheet: Pick<TimesheetRecord, 'entries' | 'workedMinutes' | 'breakMinutes' | 'warnings'>) =>
  JSON.stringify([
    sheet.entries.map((entry) => [entry.startMinute, entry.endMinute, entry.category, entry.minutes]),
    sheet.workedMinutes,
    sheet.breakMinutes,
    sheet.warnings,
  ]);

/**
 * The tenant's sheet, its row locked until the transaction ends (null when there is none): the
 * writes of one sheet run one after the other, so each event's `from` is what that write replaced
 * and the events' order is the commit order.
 */
async function lockSheet(trx: Db, tenantId: string, id: string): Promise<TimesheetRecord | null> {
  const row = await sheets(trx, tenantId).where('timesheets.id', '=', id).forUpdate('timesheets').executeTakeFirst();
  return row ? toTimesheet(row) : null;
}

const DAY_MS = 86_400_000;
const addDays = (day: string, days: number) => dateToDay(new Date(dayToDate(day).getTime() + days * DAY_MS));

/**
 * Serialises the writes of one user's days: a sheet's warnings depend on its neighbours (§4, §5
 * ArbZG), so two days written at once must not each judge the other as it was before.
 */
async function lockUserDays(trx: Db, tenantId: string, userId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${tenantId}::uuid::text), hashtext('timesheets:' || ${userId}::uuid::text))`.execute(
    trx,
  );
}

// The days the API takes (years 1–9999): the neighbours of 0001-01-01 are looked for no further back.
const FIRST_DAY = dayToDate('0001-01-01').getTime();
const LAST_DAY = dayToDate('9999-12-31').getTime();
const within = (time: number) => dateToDay(new Date(Math.min(LAST_DAY, Math.max(FIRST_DAY, time))));

/** The user's sheets from two days before `date` to two days after, by day. */
async function sheetsAround(
  trx: Db,
  tenantId: string,
  userId: string,
  date: string,
): Promise<Map<string, TimesheetRecord>> {
  const day = dayToDate(date).getTime();
  const rows = await sheets(trx, tenantId)
    .where('timesheets.user_id', '=', userId)
    .where((eb) => eb.between('timesheets.date', within(day - 2 * DAY_MS), within(day + 2 * DAY_MS)))
    .execute();
  return new Map(rows.map((row) => [row.date, toTimesheet(row)]));
}

/**
 * Given that `date` now holds `day` (null: nothing), recomputes the warnings of the sheets the day
 * before and after, writes those that changed (their entries and `updated_at` stay), and returns them.
 */
async function rewarnNeighbours(
  trx: Db,
  around: Map<string, TimesheetRecord>,
  date: string,
  day: readonly DayEntry[] | null,
  warningsOf: WarningsOf,
): Promise<NeighbourChange[]> {
  const entriesOn = (d: string) => (d === date ? day : (around.get(d)?.entries ?? null));
  const changes: NeighbourChange[] = [];
  for (const neighbour of [addDays(date, -1), addDays(date, 1)]) {
    const before = around.get(neighbour);
    if (!before) continue;
    const warnings = warningsOf(neighbour, before, entriesOn(addDays(neighbour, -1)), entriesOn(addDays(neighbour, 1)));
    if (JSON.stringify(warnings) === JSON.stringify(before.warnings)) continue;
    await trx
      .updateTable('timesheets')
      .set({ warnings: JSON.stringify(warnings) })
      .where('id', '=', before.id)
      .execute();
    changes.push({ before, after: { ...before, warnings } });
  }
  return changes;
}

/** The sheet's owner and day (they never change), read before locking: the user's lock comes first. */
async function ownerOf(trx: Db, tenantId: string, id: string): Promise<{ userId: string; date: string } | null> {
  const row = await trx
    .selectFrom('timesheets')
    .select(['user_id', 'date'])
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row ? { userId: row.user_id, date: row.date } : null;
}

/**
 * Every query is bounded by the caller's tenant: another tenant's sheets are simply not found.
 *
 * `reads` serves the list's page and total alone (the read replica, tolerating its lag; `db` when
 * there is none); everything else, and every read in a write, goes through `db`.
 */
export function createTimesheetsRepository(db: Db, reads: Db = db) {
  return {
    /**
     * A page and the exact total; the newest day first, the id keeping pages stable within a day;
     * by number or after a sheet (keyset, at any depth). Every single filter is served in the list's
     * order by an index (the list's; by user: one sheet per user and day, so the unique index
     * (tenant, user, date) is in that order too) and counted by list_counts (total).
     */
    list(
      tenantId: string,
      filter: TimesheetFilter,
      window: ListWindow,
    ): Promise<{ items: TimesheetRecord[]; total: number }> {
      return listPage({
        window,
        afterKey: async (id) => {
          const row = await reads
            .selectFrom('timesheets')
            .select(['date', 'id'])
            .where('id', '=', id)
            .where('tenant_id', '=', tenantId)
            .executeTakeFirst();
          return row && [row.date, row.id];
        },
        page: async (afterKey) => {
          const page = inListOrder(
            sheets(reads, tenantId).where(matching(tenantId, filter)),
            LIST_ORDER,
            window,
            afterKey,
          );
          return (await page.execute()).map(toTimesheet);
        },
        total: () => total(reads, tenantId, filter),
        unknownAfter: unknownAfterItem,
      });
    },

    async findById(tenantId: string, id: string): Promise<TimesheetRecord | null> {
      const row = await sheets(db, tenantId).where('timesheets.id', '=', id).executeTakeFirst();
      return row ? toTimesheet(row) : null;
    },

    /**
     * Sheet and entries, its warnings judged against the user's neighbouring days, the neighbours'
     * warnings brought up to date, and `record` (the events) in one transaction; a second sheet for
     * the user's day is a DuplicateTimesheetError.
     */
    async create(
      tenantId: string,
      input: { userId: string; date: string },
      day: DayTotals,
      warningsOf: WarningsOf,
      record: RecordChange<{ sheet: TimesheetRecord; neighbours: NeighbourChange[] }>,
    ): Promise<TimesheetRecord> {
      try {
        return await db.transaction().execute(async (trx) => {
          await lockUserDays(trx, tenantId, input.userId);
          const around = await sheetsAround(trx, tenantId, input.userId, input.date);
          const entriesOn = (d: string) => around.get(d)?.entries ?? null;
          const summary = {
            ...day,
            warnings: warningsOf(
              input.date,
              day,
              entriesOn(addDays(input.date, -1)),
              entriesOn(addDays(input.date, 1)),
            ),
          };
          const row = await trx
            .insertInto('timesheets')
            .values({ tenant_id: tenantId, user_id: input.userId, date: input.date, ...totals(summary) })
            .returningAll()
            .executeTakeFirstOrThrow();
          if (summary.entries.length > 0)
            await trx.insertInto('timesheet_entries').values(entryRows(row.id, summary)).execute();
          const sheet = toTimesheet({ ...row, entries: summary.entries });
          const neighbours = await rewarnNeighbours(trx, around, input.date, sheet.entries, warningsOf);
          await record(rawSqlOverKysely(trx), { sheet, neighbours });
          return sheet;
        });
      } catch (error) {
        if (uniqueViolation(error) !== ONE_PER_DAY) throw error;
        const existing = await db
          .selectFrom('timesheets')
          .select('id')
          .where('tenant_id', '=', tenantId)
          .where('user_id', '=', input.userId)
          .where('date', '=', input.date)
          .executeTakeFirst();
        throw new DuplicateTimesheetError(existing?.id ?? null);
      }
    },

    /**
     * Replaces the entries, totals and warnings, brings the neighbours' warnings up to date, and
     * `record`s the changes (the events) with the sheet before and after; null when the tenant has
     * no such sheet. Entries that come to the day the sheet already holds change nothing: no write,
     * not even `updated_at`, and nothing recorded.
     */
    replaceEntries(
      tenantId: string,
      id: string,
      day: DayTotals,
      warningsOf: WarningsOf,
      record: RecordChange<{ before: TimesheetRecord; after: TimesheetRecord; neighbours: NeighbourChange[] }>,
    ): Promise<TimesheetRecord | null> {
      return db.transaction().execute(async (trx) => {
        const owner = await ownerOf(trx, tenantId, id);
        if (!owner) return null;
        await lockUserDays(trx, tenantId, owner.userId);
        const before = await lockSheet(trx, tenantId, id);
        if (!before) return null;
        const around = await sheetsAround(trx, tenantId, owner.userId, owner.date);
        const entriesOn = (d: string) => around.get(d)?.entries ?? null;
        const summary = {
          ...day,
          warnings: warningsOf(owner.date, day, entriesOn(addDays(owner.date, -1)), entriesOn(addDays(owner.date, 1))),
        };
        if (dayOf(before) === dayOf(summary)) return before;
        const row = await trx
          .updateTable('timesheets')
          .set({ ...totals(summary), updated_at: new Date() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await trx.deleteFrom('timesheet_entries').where('timesheet_id', '=', id).execute();
        if (summary.entries.length > 0)
          await trx.insertInto('timesheet_entries').values(entryRows(id, summary)).execute();
        const after = toTimesheet({ ...row, entries: summary.entries });
        const neighbours = await rewarnNeighbours(trx, around, owner.date, after.entries, warningsOf);
        await record(rawSqlOverKysely(trx), { before, after, neighbours });
        return after;
      });
    },

    /**
     * Whether a sheet was deleted (its entries go with it); the neighbours' warnings are brought up
     * to date, and `record` is given the sheet as it was and the neighbours that changed.
     */
    delete(
      tenantId: string,
      id: string,
      warningsOf: WarningsOf,
      record: RecordChange<{ sheet: TimesheetRecord; neighbours: NeighbourChange[] }>,
    ): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const owner = await ownerOf(trx, tenantId, id);
        if (!owner) return false;
        await lockUserDays(trx, tenantId, owner.userId);
        const sheet = await lockSheet(trx, tenantId, id);
        if (!sheet) return false;
        const around = await sheetsAround(trx, tenantId, owner.userId, owner.date);
        await trx.deleteFrom('timesheets').where('id', '=', id).execute();
        const neighbours = await rewarnNeighbours(trx, around, owner.date, null, warningsOf);
        await record(rawSqlOverKysely(trx), { sheet, neighbours });
        return true;
      });
    },
  };
}

export type TimesheetsRepository = ReturnType<typeof createTimesheetsRepository>;
