import { listCountRangeSql, listCountSql, sqlRows, type SqlQuery } from '@msp/db';
import type { RecordChange } from '@msp/events';
import type { ListWindow } from '@msp/http';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../list-pages';
import { dateToDay, dayToDate } from '../calendar';
import { violatedUniqueConstraint, type Db } from '../db';
import type { DayEntry, DaySummary, DayTotals, TimesheetCategory, TimesheetWarning } from './timesheet-rules';

export interface TimesheetRecord {
  id: string;
  userId: string;
  date: Date;
  entries: DayEntry[];
  workedMinutes: number;
  breakMinutes: number;
  warnings: TimesheetWarning[];
  createdAt: Date;
  updatedAt: Date;
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
export type WarningsOf = (date: string, day: DayTotals, previous: readonly DayEntry[] | null, next: readonly DayEntry[] | null) => TimesheetWarning[];

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

const columns = {
  id: true,
  userId: true,
  date: true,
  workedMinutes: true,
  breakMinutes: true,
  warnings: true,
  createdAt: true,
  updatedAt: true,
  entries: { select: { startMinute: true, endMinute: true, minutes: true, category: true }, orderBy: { position: 'asc' } },
} as const satisfies Prisma.TimesheetSelect;

type Row = Prisma.TimesheetGetPayload<{ select: typeof columns }>;

// The columns hold only what the API wrote (CHECK constraints on category, the service builds warnings).
function toRecord(row: Row): TimesheetRecord {
  return {
    ...row,
    entries: row.entries.map((entry) => ({ ...entry, category: entry.category as TimesheetCategory })),
    warnings: row.warnings as unknown as TimesheetWarning[],
  };
}

/*
 * The list and the single read are plain SQL on the pool under Prisma (sqlRows of @msp/db), as
 * employees' are: Prisma's batch of findMany (sheets, then their entries) and count in a
 * transaction cost hr several times the CPU of the same reads through pg (bench/README.md, issue
 * 12). A sheet's entries are aggregated in the same statement, so a page's totals and entries
 * always come from one snapshot. Writes keep the model API.
 */
const SHEET_COLUMNS = Prisma.sql`id, user_id, date::text AS date, worked_minutes, break_minutes, warnings, created_at, updated_at,
  COALESCE((SELECT json_agg(json_build_object('startMinute', e.start_minute, 'endMinute', e.end_minute, 'minutes', e.minutes, 'category', e.category)
                            ORDER BY e.position)
              FROM timesheet_entries e WHERE e.timesheet_id = timesheets.id), '[]') AS entries`;

interface SheetSqlRow {
  id: string;
  user_id: string;
  date: string;
  worked_minutes: number;
  break_minutes: number;
  warnings: TimesheetWarning[];
  created_at: string | Date;
  updated_at: string | Date;
  entries: DayEntry[];
}

function fromSql(row: SheetSqlRow): TimesheetRecord {
  return {
    id: row.id,
    userId: row.user_id,
    date: dayToDate(row.date),
    entries: row.entries,
    workedMinutes: row.worked_minutes,
    breakMinutes: row.break_minutes,
    warnings: row.warnings,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function entryRows(summary: DaySummary) {
  return summary.entries.map((entry, position) => ({ position, ...entry }));
}

function totals(summary: DaySummary) {
  return {
    workedMinutes: summary.workedMinutes,
    breakMinutes: summary.breakMinutes,
    warnings: summary.warnings as unknown as Prisma.InputJsonValue,
  };
}

/**
 * What a sheet's day is made of (entries and totals), in one fixed shape: the same day sent again,
 * in any order, is the same text, as it is the same API JSON (no `changes`).
 */
const dayOf = (sheet: Pick<TimesheetRecord, 'entries' | 'workedMinutes' | 'breakMinutes' | 'warnings'>) =>
  JSON.stringify([sheet.entries.map((entry) => [entry.startMinute, entry.endMinute, entry.category, entry.minutes]), sheet.workedMinutes, sheet.breakMinutes, sheet.warnings]);

/**
 * The tenant's sheet, its row locked until the transaction ends (null when there is none): the
 * writes of one sheet run one after the other, so each event's `from` is what that write replaced
 * and the events' order is the commit order.
 */
async function lockSheet(tx: Prisma.TransactionClient, tenantId: string, id: string): Promise<TimesheetRecord | null> {
  const locked = await tx.$queryRaw<unknown[]>`SELECT 1 FROM timesheets WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (locked.length === 0) return null;
  return toRecord(await tx.timesheet.findUniqueOrThrow({ where: { id }, select: columns }));
}

const DAY_MS = 86_400_000;
const addDays = (day: string, days: number) => dateToDay(new Date(dayToDate(day).getTime() + days * DAY_MS));

/**
 * Serialises the writes of one user's days: a sheet's warnings depend on its neighbours (§4, §5
 * ArbZG), so two days written at once must not each judge the other as it was before.
 */
async function lockUserDays(tx: Prisma.TransactionClient, tenantId: string, userId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${tenantId}::uuid::text), hashtext('timesheets:' || ${userId}::uuid::text))`;
}

// The days the API takes (years 1–9999): the neighbours of 0001-01-01 are looked for no further back.
const FIRST_DAY = dayToDate('0001-01-01').getTime();
const LAST_DAY = dayToDate('9999-12-31').getTime();
const within = (time: number) => new Date(Math.min(LAST_DAY, Math.max(FIRST_DAY, time)));

/** The user's sheets from two days before `date` to two days after, by day. */
async function sheetsAround(tx: Prisma.TransactionClient, tenantId: string, userId: string, date: string): Promise<Map<string, TimesheetRecord>> {
  const day = dayToDate(date).getTime();
  const rows = await tx.timesheet.findMany({
    where: { tenantId, userId, date: { gte: within(day - 2 * DAY_MS), lte: within(day + 2 * DAY_MS) } },
    select: columns,
  });
  return new Map(rows.map((row) => [dateToDay(row.date), toRecord(row)]));
}

/**
 * Given that `date` now holds `day` (null: nothing), recomputes the warnings of the sheets the day
 * before and after, writes those that changed (their entries and `updated_at` stay), and returns them.
 */
async function rewarnNeighbours(
  tx: Prisma.TransactionClient,
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
    await tx.timesheet.update({ where: { id: before.id }, data: { warnings: warnings as unknown as Prisma.InputJsonValue, updatedAt: before.updatedAt } });
    changes.push({ before, after: { ...before, warnings } });
  }
  return changes;
}

/** The sheet's owner and day (they never change), read before locking: the user's lock comes first. */
async function ownerOf(tx: Prisma.TransactionClient, tenantId: string, id: string): Promise<{ userId: string; date: string } | null> {
  const row = await tx.timesheet.findFirst({ where: { id, tenantId }, select: { userId: true, date: true } });
  return row ? { userId: row.userId, date: dateToDay(row.date) } : null;
}

/** Every query is bounded by the caller's tenant: another tenant's sheets are simply not found. */
export function createTimesheetsRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  return {
    /**
     * A page and the exact total in one round trip (keysetListPage); the newest day first, the id keeping
     * pages stable within a day; by number or after a sheet (keyset, at any depth). Every single
     * filter is served in the list's order by an index (the list's; by user: one sheet per user and
     * day, so the unique index (tenant, user, date) is in that order too) and counted by list_counts:
     * the whole list, one user, or the day counters of `from`–`to` (a sum over the days of the
     * range, however many sheets they hold). A user and a range together count through the user's
     * index, bounded by the user's days in the range.
     */
    async list(tenantId: string, filter: TimesheetFilter, window: ListWindow): Promise<{ items: TimesheetRecord[]; total: number }> {
      const scope = Prisma.sql`tenant_id = ${tenantId}::uuid`;
      const filters = [
        ...(filter.userId === undefined ? [] : [Prisma.sql`user_id = ${filter.userId}::uuid`]),
        ...(filter.from === undefined ? [] : [Prisma.sql`date >= ${filter.from}::date`]),
        ...(filter.to === undefined ? [] : [Prisma.sql`date <= ${filter.to}::date`]),
      ];
      const ranged = filter.from !== undefined || filter.to !== undefined;
      let total: SqlQuery;
      if (filter.userId === undefined) {
        total = ranged ? listCountRangeSql(tenantId, 'timesheets', 'date', { from: filter.from, to: filter.to }) : listCountSql(tenantId, 'timesheets');
      } else if (!ranged) {
        // The counters hold ids as PostgreSQL writes them (lower case); the API takes either case.
        total = listCountSql(tenantId, 'timesheets', { dimension: 'user_id', value: filter.userId.toLowerCase() });
      } else {
        total = Prisma.sql`SELECT count(*) FROM timesheets WHERE ${Prisma.join([scope, ...filters], ' AND ')}`;
      }
      // The order names the table's columns (timesheets.date): a bare `date` would sort by the text of the output column.
      const { items, total: counted } = await lists.keysetListPage<SheetSqlRow>(rows, window, { table: 'timesheets', select: SHEET_COLUMNS, scope, filters, columns: ['date', 'id'], direction: 'desc', total });
      return { items: items.map(fromSql), total: counted };
    },

    async findById(tenantId: string, id: string): Promise<TimesheetRecord | null> {
      const [row] = await rows<SheetSqlRow>(Prisma.sql`SELECT ${SHEET_COLUMNS} FROM timesheets WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid`);
      return row ? fromSql(row) : null;
    },

    /**
     * Sheet and entries in one statement, its warnings judged against the user's neighbouring days,
     * the neighbours' warnings brought up to date, and `record` (the events) in the same
     * transaction; a second sheet for the user's day is a DuplicateTimesheetError.
     */
    async create(
      tenantId: string,
      input: { userId: string; date: string },
      day: DayTotals,
      warningsOf: WarningsOf,
      record: RecordChange<{ sheet: TimesheetRecord; neighbours: NeighbourChange[] }>,
    ): Promise<TimesheetRecord> {
      const date = dayToDate(input.date);
      try {
        return await db.$transaction(async (tx) => {
          await lockUserDays(tx, tenantId, input.userId);
          const around = await sheetsAround(tx, tenantId, input.userId, input.date);
          const entriesOn = (d: string) => around.get(d)?.entries ?? null;
          const summary = { ...day, warnings: warningsOf(input.date, day, entriesOn(addDays(input.date, -1)), entriesOn(addDays(input.date, 1))) };
          const sheet = toRecord(
            await tx.timesheet.create({
              data: { tenantId, userId: input.userId, date, ...totals(summary), entries: { create: entryRows(summary) } },
              select: columns,
            }),
          );
          const neighbours = await rewarnNeighbours(tx, around, input.date, sheet.entries, warningsOf);
          await record(tx, { sheet, neighbours });
          return sheet;
        });
      } catch (error) {
        if (violatedUniqueConstraint(error) !== ONE_PER_DAY) throw error;
        const existing = await db.timesheet.findFirst({ where: { tenantId, userId: input.userId, date }, select: { id: true } });
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
      return db.$transaction(async (tx) => {
        const owner = await ownerOf(tx, tenantId, id);
        if (!owner) return null;
        await lockUserDays(tx, tenantId, owner.userId);
        const before = await lockSheet(tx, tenantId, id);
        if (!before) return null;
        const around = await sheetsAround(tx, tenantId, owner.userId, owner.date);
        const entriesOn = (d: string) => around.get(d)?.entries ?? null;
        const summary = { ...day, warnings: warningsOf(owner.date, day, entriesOn(addDays(owner.date, -1)), entriesOn(addDays(owner.date, 1))) };
        if (dayOf(before) === dayOf(summary)) return before;
        await tx.timesheet.update({ where: { id }, data: { ...totals(summary), updatedAt: new Date() } });
        await tx.timesheetEntry.deleteMany({ where: { timesheetId: id } });
        await tx.timesheetEntry.createMany({ data: entryRows(summary).map((entry) => ({ timesheetId: id, ...entry })) });
        const after = toRecord(await tx.timesheet.findUniqueOrThrow({ where: { id }, select: columns }));
        const neighbours = await rewarnNeighbours(tx, around, owner.date, after.entries, warningsOf);
        await record(tx, { before, after, neighbours });
        return after;
      });
    },

    /**
     * Whether a sheet was deleted (its entries go with it); the neighbours' warnings are brought up
     * to date, and `record` is given the sheet as it was and the neighbours that changed.
     */
    delete(tenantId: string, id: string, warningsOf: WarningsOf, record: RecordChange<{ sheet: TimesheetRecord; neighbours: NeighbourChange[] }>): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const owner = await ownerOf(tx, tenantId, id);
        if (!owner) return false;
        await lockUserDays(tx, tenantId, owner.userId);
        const sheet = await lockSheet(tx, tenantId, id);
        if (!sheet) return false;
        const around = await sheetsAround(tx, tenantId, owner.userId, owner.date);
        await tx.timesheet.delete({ where: { id } });
        const neighbours = await rewarnNeighbours(tx, around, owner.date, null, warningsOf);
        await record(tx, { sheet, neighbours });
        return true;
      });
    },
  };
}

export type TimesheetsRepository = ReturnType<typeof createTimesheetsRepository>;
