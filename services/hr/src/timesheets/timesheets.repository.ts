import { changesBetween } from '@msp/events';
import type { Prisma } from '../generated/prisma/client';
import { dayToDate } from '../calendar';
import { violatedUniqueConstraint, type Db } from '../db';
import { hrEvents } from '../events/hr-events';
import { timesheetJson } from './timesheet.schemas';
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
  return {
    async list(tenantId: string, filter: TimesheetFilter, window: { skip: number; take: number }): Promise<{ items: TimesheetRecord[]; total: number }> {
      const where: Prisma.TimesheetWhereInput = {
        tenantId,
        userId: filter.userId,
        date: { gte: filter.from ? dayToDate(filter.from) : undefined, lte: filter.to ? dayToDate(filter.to) : undefined },
      };
      // Newest day first; the id keeps pages stable among sheets of the same day.
      const [rows, total] = await db.$transaction([
        db.timesheet.findMany({ where, orderBy: [{ date: 'desc' }, { id: 'desc' }], select: columns, ...window }),
        db.timesheet.count({ where }),
      ]);
      return { items: rows.map(toRecord), total };
    },

    async findById(tenantId: string, id: string): Promise<TimesheetRecord | null> {
      const row = await db.timesheet.findFirst({ where: { id, tenantId }, select: columns });
      return row && toRecord(row);
    },

    /**
     * Sheet and entries in one statement, and its `timesheet.created` event; a second sheet for the
     * user's day is a DuplicateTimesheetError.
     */
    async create(tenantId: string, input: { userId: string; date: string }, summary: DaySummary): Promise<TimesheetRecord> {
      const date = dayToDate(input.date);
      try {
        return await db.$transaction(async (tx) => {
          const sheet = toRecord(
            await tx.timesheet.create({
              data: { tenantId, userId: input.userId, date, ...totals(summary), entries: { create: entryRows(summary) } },
              select: columns,
            }),
          );
          await hrEvents.record(tx, { type: 'timesheet.created', tenantId, resourceType: 'timesheet', resourceId: sheet.id, object: timesheetJson(sheet) });
          return sheet;
        });
      } catch (error) {
        if (violatedUniqueConstraint(error) !== ONE_PER_DAY) throw error;
        const existing = await db.timesheet.findFirst({ where: { tenantId, userId: input.userId, date }, select: { id: true } });
        throw new DuplicateTimesheetError(existing?.id ?? null);
      }
    },

    /**
     * Replaces the entries and totals, with a `timesheet.updated` event naming what changed; null
     * when the tenant has no such sheet. Entries that come to the day the sheet already holds
     * change nothing: no write, not even `updated_at`, and no event.
     */
    replaceEntries(tenantId: string, id: string, summary: DaySummary): Promise<TimesheetRecord | null> {
      return db.$transaction(async (tx) => {
        const before = await lockSheet(tx, tenantId, id);
        if (!before) return null;
        const was = timesheetJson(before);
        // Judged on the API shapes, as the event's `changes` are: the same day sent again (in any order) is no change.
        const replaced = { ...before, entries: summary.entries, workedMinutes: summary.workedMinutes, breakMinutes: summary.breakMinutes, warnings: summary.warnings };
        if (Object.keys(changesBetween(was, timesheetJson(replaced))).length === 0) return before;
        await tx.timesheet.update({ where: { id }, data: { ...totals(summary), updatedAt: new Date() } });
        await tx.timesheetEntry.deleteMany({ where: { timesheetId: id } });
        await tx.timesheetEntry.createMany({ data: entryRows(summary).map((entry) => ({ timesheetId: id, ...entry })) });
        const after = toRecord(await tx.timesheet.findUniqueOrThrow({ where: { id }, select: columns }));
        const object = timesheetJson(after);
        await hrEvents.record(tx, {
          type: 'timesheet.updated',
          tenantId,
          resourceType: 'timesheet',
          resourceId: id,
          object,
          before: was,
        });
        return after;
      });
    },

    /** Whether a sheet was deleted (its entries go with it); its `timesheet.deleted` event shows it as it was. */
    delete(tenantId: string, id: string): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const sheet = await lockSheet(tx, tenantId, id);
        if (!sheet) return false;
        await tx.timesheet.delete({ where: { id } });
        await hrEvents.record(tx, { type: 'timesheet.deleted', tenantId, resourceType: 'timesheet', resourceId: id, object: timesheetJson(sheet) });
        return true;
      });
    },
  };
}

export type TimesheetsRepository = ReturnType<typeof createTimesheetsRepository>;
