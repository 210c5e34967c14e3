import { isoOf, listCountRangeSql, listCountSql, sqlRows, type Queryable, type SqlQuery } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type TimeEntry as TimeEntryRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import { amountOf } from './amounts';
import type { TimeEntry, TimeEntryFilters, TimeTotals } from './time-entry.schemas';

/** A `date` column as Prisma hands it (midnight UTC) back to `YYYY-MM-DD`, and the other way. */
const dateText = (date: Date | string) => (typeof date === 'string' ? date : date.toISOString()).slice(0, 10);
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
    hourly_rate: row.hourlyRate,
    currency: row.currency as TimeEntry['currency'],
    amount: amountOf(row.minutes, row.hourlyRate),
    created_at: isoOf(row.createdAt),
    updated_at: isoOf(row.updatedAt),
  };
}

/** The columns of a plain read, dates as the API's text. */
const COLUMNS = Prisma.raw('id, ticket_id, client_id, user_id, minutes, date::text AS date, billable, note, hourly_rate, currency, created_at, updated_at');

interface TimeEntrySqlRow extends Omit<TimeEntry, 'created_at' | 'updated_at' | 'amount'> {
  created_at: string | Date;
  updated_at: string | Date;
}

const fromSql = ({ created_at, updated_at, ...row }: TimeEntrySqlRow): TimeEntry => ({
  ...row,
  amount: amountOf(row.minutes, row.hourly_rate),
  created_at: isoOf(created_at),
  updated_at: isoOf(updated_at),
});

/**
 * The list's order: the day worked, latest first, then the newest entry of a day; the id breaks
 * ties. keysetListPage qualifies the columns: a bare `date` would name the selected `date::text` and
 * sort text, off the index.
 */
const KEY = ['date', 'created_at', 'id'];

/**
 * Each filter as SQL, all on time_entries alone: client_id is on the entry (the ticket's, kept in
 * step by a trigger), so no filter joins. The (tenant_id, [user_id | client_id | billable,] date)
 * indexes serve them, each in the list's order.
 */
function filtersOf(filters: TimeEntryFilters): Prisma.Sql[] {
  const conditions: Prisma.Sql[] = [];
  if (filters.client_id !== undefined) conditions.push(Prisma.sql`client_id = ${filters.client_id}::uuid`);
  if (filters.user_id !== undefined) conditions.push(Prisma.sql`user_id = ${filters.user_id}::uuid`);
  if (filters.from !== undefined) conditions.push(Prisma.sql`time_entries.date >= ${filters.from}::date`);
  if (filters.to !== undefined) conditions.push(Prisma.sql`time_entries.date <= ${filters.to}::date`);
  if (filters.billable !== undefined) conditions.push(Prisma.sql`billable = ${filters.billable}`);
  return conditions;
}

/** Which counter answers the filters: none (several filters: count the entries), the whole list, one filter's value, or a range of days. */
function counterOf(filters: TimeEntryFilters): { combined: true } | { combined: false; filter?: { dimension: string; value: string }; days?: { from?: string; to?: string } } {
  const given = (['client_id', 'user_id', 'billable'] as const).filter((key) => filters[key] !== undefined);
  const dated = filters.from !== undefined || filters.to !== undefined;
  if (given.length + (dated ? 1 : 0) > 1) return { combined: true };
  if (dated) return { combined: false, days: { from: filters.from, to: filters.to } };
  const [dimension] = given;
  return { combined: false, filter: dimension === undefined ? undefined : { dimension, value: String(filters[dimension]) } };
}

/**
 * The number of the filtered entries. The whole list and each single filter read list_counts
 * (kept by triggers): one row, or for `from`/`to` one per day between, whatever the tenant's size.
 */
function countOf(tenantId: string, filters: TimeEntryFilters): SqlQuery {
  const counter = counterOf(filters);
  if (counter.combined) return Prisma.sql`SELECT count(*) FROM time_entries WHERE tenant_id = ${tenantId}::uuid AND ${Prisma.join(filtersOf(filters), ' AND ')}`;
  if (counter.days) return listCountRangeSql(tenantId, 'time_entries', 'date', counter.days);
  return listCountSql(tenantId, 'time_entries', counter.filter);
}

/**
 * Their amounts and billable amounts per currency (entries with a rate only), the same way from
 * time_entry_amounts (same keys), or summed over the entries for several filters at once.
 */
function amountsOf(tenantId: string, filters: TimeEntryFilters): Prisma.Sql {
  const counter = counterOf(filters);
  if (counter.combined) {
    return Prisma.sql`SELECT currency, coalesce(sum(time_entry_amount(minutes, hourly_rate)), 0)::bigint AS amount,
        coalesce(sum(time_entry_amount(minutes, hourly_rate)) FILTER (WHERE billable), 0)::bigint AS billable_amount
      FROM time_entries WHERE tenant_id = ${tenantId}::uuid AND hourly_rate IS NOT NULL AND ${Prisma.join(filtersOf(filters), ' AND ')}
      GROUP BY currency ORDER BY currency`;
  }
  const sums = Prisma.sql`SELECT currency, sum(amount)::bigint AS amount, sum(billable_amount)::bigint AS billable_amount FROM time_entry_amounts WHERE tenant_id = ${tenantId}::uuid`;
  const where = counter.days
    ? Prisma.sql`AND dimension = 'date' AND value >= ${counter.days.from ?? '0000-00-00'} AND value <= ${counter.days.to ?? '9999-99-99'}`
    : Prisma.sql`AND dimension = ${counter.filter?.dimension ?? 'all'} AND value = ${counter.filter?.value ?? ''}`;
  return Prisma.sql`${sums} ${where} GROUP BY currency HAVING sum(amount) <> 0 OR sum(billable_amount) <> 0 ORDER BY currency`;
}

/** Their minutes and billable minutes, the same way from time_entry_minutes (same keys as list_counts). */
function minutesOf(tenantId: string, filters: TimeEntryFilters): Prisma.Sql {
  const counter = counterOf(filters);
  if (counter.combined) {
    return Prisma.sql`SELECT coalesce(sum(minutes), 0)::bigint AS minutes, coalesce(sum(minutes) FILTER (WHERE billable), 0)::bigint AS billable_minutes
      FROM time_entries WHERE tenant_id = ${tenantId}::uuid AND ${Prisma.join(filtersOf(filters), ' AND ')}`;
  }
  const sums = Prisma.sql`SELECT coalesce(sum(minutes), 0)::bigint AS minutes, coalesce(sum(billable_minutes), 0)::bigint AS billable_minutes FROM time_entry_minutes WHERE tenant_id = ${tenantId}::uuid`;
  // Dates sort as text (YYYY-MM-DD); an open end is every day that way.
  if (counter.days) return Prisma.sql`${sums} AND dimension = 'date' AND value >= ${counter.days.from ?? '0000-00-00'} AND value <= ${counter.days.to ?? '9999-99-99'}`;
  return Prisma.sql`${sums} AND dimension = ${counter.filter?.dimension ?? 'all'} AND value = ${counter.filter?.value ?? ''}`;
}

export interface TimeEntryWrite {
  userId?: string;
  minutes?: number;
  date?: string;
  billable?: boolean;
  note?: string | null;
  hourlyRate?: number | null;
  currency?: string;
}

/** `reads`: where the list's page and total are read when given (the read replica's pool, DATABASE_READ_URL); the rest reads the primary. */
export function createTimeEntriesRepository(db: DbTx, connection?: Queryable, reads?: Queryable) {
  const rows = sqlRows(db, connection);
  const listRows = reads ? sqlRows(db, reads) : rows;

  /** A page in the list's order (by number or keyset) and the total, in one round trip (keysetListPage). */
  async function page(scope: Prisma.Sql, filters: TimeEntryFilters, total: SqlQuery, request: PageRequest) {
    const found = await lists.keysetListPage<TimeEntrySqlRow>(listRows, listWindow(request), { table: 'time_entries', select: COLUMNS, scope, filters: filtersOf(filters), columns: KEY, direction: 'desc', total });
    return { items: found.items.map(fromSql), total: found.total };
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
    /**
     * The total is count(*) of the ticket's entries through (ticket_id, date, …): bounded by the one
     * ticket's entries, not by the tenant's (no counter needed).
     */
    async listForTicket(tenantId: string, ticketId: string, request: PageRequest): Promise<{ items: TimeEntry[]; total: number }> {
      const scope = Prisma.sql`ticket_id = ${ticketId}::uuid AND tenant_id = ${tenantId}::uuid`;
      return page(scope, {}, Prisma.sql`SELECT count(*) FROM time_entries WHERE ${scope}`, request);
    },

    /**
     * A page of the filtered entries, and the number and minutes of all of them, from counters for
     * the whole list and each single filter (countOf, minutesOf); the page and the minutes in parallel.
     */
    async list(tenantId: string, filters: TimeEntryFilters, request: PageRequest): Promise<{ items: TimeEntry[]; total: number; totals: TimeTotals }> {
      const [found, [sums], amounts] = await Promise.all([
        page(Prisma.sql`tenant_id = ${tenantId}::uuid`, filters, countOf(tenantId, filters), request),
        listRows<{ minutes: string; billable_minutes: string }>(minutesOf(tenantId, filters)),
        listRows<{ currency: TimeEntry['currency']; amount: string; billable_amount: string }>(amountsOf(tenantId, filters)),
      ]);
      return {
        items: found.items,
        total: found.total,
        totals: {
          minutes: Number(sums?.minutes ?? 0),
          billable_minutes: Number(sums?.billable_minutes ?? 0),
          amounts: amounts.map((sum) => ({ currency: sum.currency, amount: Number(sum.amount), billable_amount: Number(sum.billable_amount) })),
        },
      };
    },

    /** `clientId` is the ticket's, read under the ticket's lock. */
    async create(tenantId: string, entry: Required<TimeEntryWrite> & { ticketId: string; clientId: string }): Promise<TimeEntry> {
      // (hourlyRate and currency: the price the service decided, kept with the entry.)
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
          hourlyRate: entry.hourlyRate,
          currency: entry.currency,
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
