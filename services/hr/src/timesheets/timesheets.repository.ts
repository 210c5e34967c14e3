import { pageWithTotal, sqlRows } from '@msp/db';
import type { RecordChange } from '@msp/events';
import { Prisma } from '../generated/prisma/client';
import { dayToDate } from '../calendar';
import { violatedUniqueConstraint, type Db } from '../db';
import type { DayEntry, DaySummary, TimesheetCategory, TimesheetWarning } from './timesheet-rules';

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

/** Every query is bounded by the caller's tenant: another tenant's sheets are simply not found. */
export function createTimesheetsRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  return {
    /** A page and the total in one round trip (pageWithTotal); the newest day first, the id keeping pages stable within a day. */
    async list(tenantId: string, filter: TimesheetFilter, window: { skip: number; take: number }): Promise<{ items: TimesheetRecord[]; total: number }> {
      const where = Prisma.join(
        [
          Prisma.sql`tenant_id = ${tenantId}::uuid`,
          ...(filter.userId === undefined ? [] : [Prisma.sql`user_id = ${filter.userId}::uuid`]),
          ...(filter.from === undefined ? [] : [Prisma.sql`date >= ${filter.from}::date`]),
          ...(filter.to === undefined ? [] : [Prisma.sql`date <= ${filter.to}::date`]),
        ],
        ' AND ',
      );
      const { items, total } = await pageWithTotal<SheetSqlRow>(
        rows,
        // ORDER BY names the table's column: a bare `date` would sort by the text of the output column.
        Prisma.sql`SELECT ${SHEET_COLUMNS} FROM timesheets WHERE ${where} ORDER BY timesheets.date DESC, timesheets.id DESC LIMIT ${window.take} OFFSET ${window.skip}`,
        Prisma.sql`SELECT count(*) FROM timesheets WHERE ${where}`,
      );
      return { items: items.map(fromSql), total };
    },

    async findById(tenantId: string, id: string): Promise<TimesheetRecord | null> {
      const [row] = await rows<SheetSqlRow>(Prisma.sql`SELECT ${SHEET_COLUMNS} FROM timesheets WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid`);
      return row ? fromSql(row) : null;
    },

    /**
     * Sheet and entries in one statement, and `record` (its event) in the same transaction; a
     * second sheet for the user's day is a DuplicateTimesheetError.
     */
    async create(tenantId: string, input: { userId: string; date: string }, summary: DaySummary, record: RecordChange<TimesheetRecord>): Promise<TimesheetRecord> {
      const date = dayToDate(input.date);
      try {
        return await db.$transaction(async (tx) => {
          const sheet = toRecord(
            await tx.timesheet.create({
              data: { tenantId, userId: input.userId, date, ...totals(summary), entries: { create: entryRows(summary) } },
              select: columns,
            }),
          );
          await record(tx, sheet);
          return sheet;
        });
      } catch (error) {
        if (violatedUniqueConstraint(error) !== ONE_PER_DAY) throw error;
        const existing = await db.timesheet.findFirst({ where: { tenantId, userId: input.userId, date }, select: { id: true } });
        throw new DuplicateTimesheetError(existing?.id ?? null);
      }
    },

    /**
     * Replaces the entries and totals and `record`s the change (its event) with the sheet before
     * and after; null when the tenant has no such sheet. Entries that come to the day the sheet
     * already holds change nothing: no write, not even `updated_at`, and nothing recorded.
     */
    replaceEntries(tenantId: string, id: string, summary: DaySummary, record: RecordChange<{ before: TimesheetRecord; after: TimesheetRecord }>): Promise<TimesheetRecord | null> {
      return db.$transaction(async (tx) => {
        const before = await lockSheet(tx, tenantId, id);
        if (!before) return null;
        if (dayOf(before) === dayOf(summary)) return before;
        await tx.timesheet.update({ where: { id }, data: { ...totals(summary), updatedAt: new Date() } });
        await tx.timesheetEntry.deleteMany({ where: { timesheetId: id } });
        await tx.timesheetEntry.createMany({ data: entryRows(summary).map((entry) => ({ timesheetId: id, ...entry })) });
        const after = toRecord(await tx.timesheet.findUniqueOrThrow({ where: { id }, select: columns }));
        await record(tx, { before, after });
        return after;
      });
    },

    /** Whether a sheet was deleted (its entries go with it); `record` is given the sheet as it was. */
    delete(tenantId: string, id: string, record: RecordChange<TimesheetRecord>): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const sheet = await lockSheet(tx, tenantId, id);
        if (!sheet) return false;
        await tx.timesheet.delete({ where: { id } });
        await record(tx, sheet);
        return true;
      });
    },
  };
}

export type TimesheetsRepository = ReturnType<typeof createTimesheetsRepository>;
