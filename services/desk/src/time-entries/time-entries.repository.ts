import { isoOf, sqlRows, type Queryable } from '@msp/db';
import { pageWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type TimeEntry as TimeEntryRow } from '../generated/prisma/client';
import type { TimeEntry, TimeEntryFilters, TimeTotals } from './time-entry.schemas';

/** A `date` column as Prisma hands it (midnight UTC) back to `YYYY-MM-DD`, and the other way. */
const dateText = (date: Date) => date.toISOString().slice(0, 10);
const dateValue = (text: string) => new Date(`${text}T00:00:00.000Z`);

function toTimeEntry(row: TimeEntryRow): TimeEntry {
  return {
    id: row.id,
    ticket_id: row.ticketId,
    client_id: row.clientId,
    user_id: row.userId,
    minutes: row.minutes,
    date: dateText(row.date),
    billable: row.billable,
    note: row.note,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The columns of a plain read, dates as the API's text. */
const COLUMNS = Prisma.raw('id, ticket_id, client_id, user_id, minutes, date::text AS date, billable, note, created_at, updated_at');

interface TimeEntrySqlRow extends Omit<TimeEntry, 'created_at' | 'updated_at'> {
  created_at: string | Date;
  updated_at: string | Date;
}

const fromSql = (row: TimeEntrySqlRow): TimeEntry => ({ ...row, created_at: isoOf(row.created_at), updated_at: isoOf(row.updated_at) });

/**
 * The list's order: the day worked, latest first, then the newest entry of a day; the id breaks
 * ties. Qualified: a bare `date` would name the selected `date::text` and sort text, off the index.
 */
const ORDER = Prisma.raw('time_entries.date DESC, time_entries.created_at DESC, time_entries.id DESC');

/**
 * Each filter as SQL, all on time_entries alone: client_id is on the entry (the ticket's, kept in
 * step by a trigger), so no filter joins. The (tenant_id, [user_id | client_id,] date) indexes serve them.
 */
function whereOf(tenantId: string, filters: TimeEntryFilters & { ticketId?: string }): Prisma.Sql {
  const conditions = [Prisma.sql`tenant_id = ${tenantId}::uuid`];
  if (filters.ticketId !== undefined) conditions.push(Prisma.sql`ticket_id = ${filters.ticketId}::uuid`);
  if (filters.client_id !== undefined) conditions.push(Prisma.sql`client_id = ${filters.client_id}::uuid`);
  if (filters.user_id !== undefined) conditions.push(Prisma.sql`user_id = ${filters.user_id}::uuid`);
  if (filters.from !== undefined) conditions.push(Prisma.sql`date >= ${filters.from}::date`);
  if (filters.to !== undefined) conditions.push(Prisma.sql`date <= ${filters.to}::date`);
  if (filters.billable !== undefined) conditions.push(Prisma.sql`billable = ${filters.billable}`);
  return Prisma.join(conditions, ' AND ');
}

export interface TimeEntryWrite {
  userId?: string;
  minutes?: number;
  date?: string;
  billable?: boolean;
  note?: string | null;
}

export function createTimeEntriesRepository(db: DbTx, connection?: Queryable) {
  const rows = sqlRows(db, connection);

  async function page(where: Prisma.Sql, request: PageRequest): Promise<TimeEntry[]> {
    const { skip, take } = pageWindow(request);
    const found = await rows<TimeEntrySqlRow>(Prisma.sql`SELECT ${COLUMNS} FROM time_entries WHERE ${where} ORDER BY ${ORDER} LIMIT ${take} OFFSET ${skip}`);
    return found.map(fromSql);
  }

  return {
    async findById(tenantId: string, id: string): Promise<TimeEntry | null> {
      const row = await db.timeEntry.findFirst({ where: { id, tenantId } });
      return row && toTimeEntry(row);
    },

    /** Reads the entry and locks it until the transaction ends, so changes to one entry queue. */
    async findForUpdate(tenantId: string, id: string): Promise<TimeEntry | null> {
      const [row] = await rows<TimeEntrySqlRow>(Prisma.sql`SELECT ${COLUMNS} FROM time_entries WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`);
      return row ? fromSql(row) : null;
    },

    /** A ticket's entries in the list's order, and their number. */
    async listForTicket(tenantId: string, ticketId: string, request: PageRequest): Promise<{ items: TimeEntry[]; total: number }> {
      const where = whereOf(tenantId, { ticketId });
      const [items, [count]] = await Promise.all([page(where, request), rows<{ total: string }>(Prisma.sql`SELECT count(*) AS total FROM time_entries WHERE ${where}`)]);
      return { items, total: Number(count?.total ?? 0) };
    },

    /**
     * A page of the filtered entries, and the number and minutes of all of them: one aggregate over
     * the same index range the page is read from.
     */
    async list(tenantId: string, filters: TimeEntryFilters, request: PageRequest): Promise<{ items: TimeEntry[]; total: number; totals: TimeTotals }> {
      const where = whereOf(tenantId, filters);
      const [items, [sums]] = await Promise.all([
        page(where, request),
        rows<{ total: string; minutes: string; billable_minutes: string }>(Prisma.sql`
          SELECT count(*) AS total, coalesce(sum(minutes), 0)::bigint AS minutes, coalesce(sum(minutes) FILTER (WHERE billable), 0)::bigint AS billable_minutes
            FROM time_entries WHERE ${where}`),
      ]);
      return {
        items,
        total: Number(sums?.total ?? 0),
        totals: { minutes: Number(sums?.minutes ?? 0), billable_minutes: Number(sums?.billable_minutes ?? 0) },
      };
    },

    /** `clientId` is the ticket's, read under the ticket's lock. */
    async create(tenantId: string, entry: Required<TimeEntryWrite> & { ticketId: string; clientId: string }): Promise<TimeEntry> {
      const row = await db.timeEntry.create({
        data: {
          tenantId,
          ticketId: entry.ticketId,
          clientId: entry.clientId,
          userId: entry.userId,
          minutes: entry.minutes,
          date: dateValue(entry.date),
          billable: entry.billable,
          note: entry.note,
        },
      });
      return toTimeEntry(row);
    },

    async update(tenantId: string, id: string, changes: TimeEntryWrite): Promise<TimeEntry> {
      const { date, ...rest } = changes;
      const row = await db.timeEntry.update({ where: { id, tenantId }, data: { ...rest, ...(date === undefined ? {} : { date: dateValue(date) }) } });
      return toTimeEntry(row);
    },

    async remove(tenantId: string, id: string): Promise<void> {
      await db.timeEntry.delete({ where: { id, tenantId } });
    },
  };
}

export type TimeEntriesRepository = ReturnType<typeof createTimeEntriesRepository>;
