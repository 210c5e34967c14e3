import { inListOrder, listCount, listCountRange, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../db';
import type { TimeEntry as TimeEntryRow } from '../generated/kysely/database';
import { pageOfList } from '../shared/lists';
import { amountOf } from './amounts';
import type { TimeEntry, TimeEntryFilters, TimeTotals } from './time-entry.schemas';

function toTimeEntry(row: Selectable<TimeEntryRow>): TimeEntry {
  return {
    id: row.id,
    ticket_id: row.ticket_id,
    client_id: row.client_id,
    user_id: row.user_id,
    minutes: row.minutes,
    date: row.date,
    billable: row.billable,
    note: row.note,
    hourly_rate: row.hourly_rate,
    currency: row.currency as TimeEntry['currency'],
    amount: amountOf(row.minutes, row.hourly_rate),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The list's order: the day worked, latest first, then the newest entry of a day; the id breaks ties. */
const ORDER: ListOrder = { columns: ['date', 'created_at', 'id'], direction: 'desc' };

/**
 * Each filter as SQL, all on time_entries alone: client_id is on the entry (the ticket's, kept in
 * step by a trigger), so no filter joins. The (tenant_id, [user_id | client_id | billable,] date)
 * indexes serve them, each in the list's order.
 */
function filtersOf(filters: TimeEntryFilters): RawBuilder<boolean>[] {
  const conditions: RawBuilder<boolean>[] = [];
  if (filters.client_id !== undefined) conditions.push(sql`client_id = ${filters.client_id}::uuid`);
  if (filters.user_id !== undefined) conditions.push(sql`user_id = ${filters.user_id}::uuid`);
  if (filters.from !== undefined) conditions.push(sql`time_entries.date >= ${filters.from}::date`);
  if (filters.to !== undefined) conditions.push(sql`time_entries.date <= ${filters.to}::date`);
  if (filters.billable !== undefined) conditions.push(sql`billable = ${filters.billable}`);
  return conditions;
}

/** Which counter answers the filters: none (several filters: count the entries), the whole list, one filter's value, or a range of days. */
function counterOf(
  filters: TimeEntryFilters,
):
  | { combined: true }
  | { combined: false; filter?: { dimension: string; value: string }; days?: { from?: string; to?: string } } {
  const given = (['client_id', 'user_id', 'billable'] as const).filter((key) => filters[key] !== undefined);
  const dated = filters.from !== undefined || filters.to !== undefined;
  if (given.length + (dated ? 1 : 0) > 1) return { combined: true };
  if (dated) return { combined: false, days: { from: filters.from, to: filters.to } };
  const [dimension] = given;
  return {
    combined: false,
    filter: dimension === undefined ? undefined : { dimension, value: String(filters[dimension]) },
  };
}

/**
 * The number of the filtered entries. The whole list and each single filter read list_counts
 * (kept by triggers): one row, or for `from`/`to` one per day between, whatever the tenant's size.
 */
async function countOf(reads: Db, tenantId: string, filters: TimeEntryFilters): Promise<number> {
  const counter = counterOf(filters);
  if (counter.combined) {
    const { rows } = await sql<{
      count: number;
    }>`SELECT count(*) AS count FROM time_entries WHERE tenant_id = ${tenantId}::uuid AND ${sql.join(filtersOf(filters), sql` AND `)}`.execute(
      reads,
    );
    return Number(rows[0]?.count ?? 0);
  }
  if (counter.days)
    return listCountRange(reads, { tenantId, list: 'time_entries', dimension: 'date', ...counter.days });
  return listCount(reads, { tenantId, list: 'time_entries', ...counter.filter });
}

/**
 * Their amounts and billable amounts per currency (entries with a rate only), the same way from
 * time_entry_amounts (same keys), or summed over the entries for several filters at once.
 */
function amountsOf(
  tenantId: string,
  filters: TimeEntryFilters,
): RawBuilder<{ currency: TimeEntry['currency']; amount: number; billable_amount: number }> {
  const counter = counterOf(filters);
  if (counter.combined) {
    return sql`SELECT currency, coalesce(sum(time_entry_amount(minutes, hourly_rate)), 0)::bigint AS amount,
        coalesce(sum(time_entry_amount(minutes, hourly_rate)) FILTER (WHERE billable), 0)::bigint AS billable_amount
      FROM time_entries WHERE tenant_id = ${tenantId}::uuid AND hourly_rate IS NOT NULL AND ${sql.join(filtersOf(filters), sql` AND `)}
      GROUP BY currency ORDER BY currency`;
  }
  const sums = sql`SELECT currency, sum(amount)::bigint AS amount, sum(billable_amount)::bigint AS billable_amount
    FROM time_entry_amounts WHERE tenant_id = ${tenantId}::uuid`;
  const where = counter.days
    ? sql`AND dimension = 'date' AND value >= ${counter.days.from ?? '0000-00-00'} AND value <= ${counter.days.to ?? '9999-99-99'}`
    : sql`AND dimension = ${counter.filter?.dimension ?? 'all'} AND value = ${counter.filter?.value ?? ''}`;
  return sql`${sums} ${where} GROUP BY currency HAVING sum(amount) <> 0 OR sum(billable_amount) <> 0 ORDER BY currency`;
}

/** Their minutes and billable minutes, the same way from time_entry_minutes (same keys as list_counts). */
function minutesOf(
  tenantId: string,
  filters: TimeEntryFilters,
): RawBuilder<{ minutes: number; billable_minutes: number }> {
  const counter = counterOf(filters);
  if (counter.combined) {
    return sql`SELECT coalesce(sum(minutes), 0)::bigint AS minutes, coalesce(sum(minutes) FILTER (WHERE billable), 0)::bigint AS billable_minutes
      FROM time_entries WHERE tenant_id = ${tenantId}::uuid AND ${sql.join(filtersOf(filters), sql` AND `)}`;
  }
  const sums = sql`SELECT coalesce(sum(minutes), 0)::bigint AS minutes, coalesce(sum(billable_minutes),
    0)::bigint AS billable_minutes FROM time_entry_minutes WHERE tenant_id = ${tenantId}::uuid`;
  // Dates sort as text (YYYY-MM-DD); an open end is every day that way.
  if (counter.days)
    return sql`${sums} AND dimension = 'date' AND value >= ${counter.days.from ?? '0000-00-00'} AND value <= ${counter.days.to ?? '9999-99-99'}`;
  return sql`${sums} AND dimension = ${counter.filter?.dimension ?? 'all'} AND value = ${counter.filter?.value ?? ''}`;
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

/** `reads`: where the list's page and total are read (the read replica with DATABASE_READ_URL); the rest reads `db`. */
export function createTimeEntriesRepository(db: Db, reads: Db = db) {
  /** A page in the list's order (by number or keyset) of the `scoped` entries, filtered. */
  function page(
    scope: ReturnType<typeof scoped>,
    filters: TimeEntryFilters,
    total: () => Promise<number>,
    request: PageRequest,
  ) {
    const filtered = filtersOf(filters).reduce((query, condition) => query.where(condition), scope);
    return pageOfList(request, {
      scope,
      order: ORDER,
      page: async (window, afterKey) =>
        (await inListOrder(filtered.selectAll(), ORDER, window, afterKey).execute()).map(toTimeEntry),
      total,
    });
  }
  const scoped = (tenantId: string) => reads.selectFrom('time_entries').where('tenant_id', '=', tenantId);

  return {
    async findById(tenantId: string, id: string): Promise<TimeEntry | null> {
      const row = await db
        .selectFrom('time_entries')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? toTimeEntry(row) : null;
    },

    /** Reads the entry and locks it until the transaction ends, so changes to one entry queue. */
    async findForUpdate(tenantId: string, id: string): Promise<TimeEntry | null> {
      const row = await db
        .selectFrom('time_entries')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return row ? toTimeEntry(row) : null;
    },

    /**
     * A ticket's entries in the list's order, and their number. The total is count(*) of the
     * ticket's entries through (ticket_id, date, …): bounded by the one ticket's entries, not by the
     * tenant's (no counter needed).
     */
    async listForTicket(
      tenantId: string,
      ticketId: string,
      request: PageRequest,
    ): Promise<{ items: TimeEntry[]; total: number }> {
      const scope = scoped(tenantId).where('ticket_id', '=', ticketId);
      return page(
        scope,
        {},
        async () => (await scope.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count,
        request,
      );
    },

    /**
     * A page of the filtered entries, and the number and minutes of all of them, from counters for
     * the whole list and each single filter (countOf, minutesOf); the page and the sums in parallel.
     */
    async list(
      tenantId: string,
      filters: TimeEntryFilters,
      request: PageRequest,
    ): Promise<{ items: TimeEntry[]; total: number; totals: TimeTotals }> {
      const [found, sums, amounts] = await Promise.all([
        page(scoped(tenantId), filters, () => countOf(reads, tenantId, filters), request),
        minutesOf(tenantId, filters).execute(reads),
        amountsOf(tenantId, filters).execute(reads),
      ]);
      const minutes = sums.rows[0];
      return {
        items: found.items,
        total: found.total,
        totals: {
          minutes: Number(minutes?.minutes ?? 0),
          billable_minutes: Number(minutes?.billable_minutes ?? 0),
          amounts: amounts.rows.map((sum) => ({
            currency: sum.currency,
            amount: Number(sum.amount),
            billable_amount: Number(sum.billable_amount),
          })),
        },
      };
    },

    /** `clientId` is the ticket's, read under the ticket's lock. */
    async create(
      tenantId: string,
      entry: Required<TimeEntryWrite> & { ticketId: string; clientId: string },
    ): Promise<TimeEntry> {
      // (hourlyRate and currency: the price the service decided, kept with the entry.)
      const row = await db
        .insertInto('time_entries')
        .values({
          tenant_id: tenantId,
          ticket_id: entry.ticketId,
          client_id: entry.clientId,
          user_id: entry.userId,
          minutes: entry.minutes,
          date: entry.date,
          billable: entry.billable,
          note: entry.note,
          hourly_rate: entry.hourlyRate,
          currency: entry.currency,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toTimeEntry(row);
    },

    async update(tenantId: string, id: string, changes: TimeEntryWrite): Promise<TimeEntry> {
      const row = await db
        .updateTable('time_entries')
        .set({
          user_id: changes.userId,
          minutes: changes.minutes,
          date: changes.date,
          billable: changes.billable,
          note: changes.note,
          hourly_rate: changes.hourlyRate,
          currency: changes.currency,
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toTimeEntry(row);
    },

    async remove(tenantId: string, id: string): Promise<void> {
      await db.deleteFrom('time_entries').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
    },
  };
}

export type TimeEntriesRepository = ReturnType<typeof createTimeEntriesRepository>;
