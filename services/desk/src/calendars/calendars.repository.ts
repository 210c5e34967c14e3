import type { BusinessCalendar } from '@msp/calendar';
import { inListOrder, listCount, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import type { Selectable } from 'kysely';
import { jsonb, type Db } from '../db';
import type { Calendar as CalendarRow } from '../generated/kysely/database';
import { pageOfList } from '../shared/lists';
import type { Calendar } from './calendar.schemas';

/** A calendar as stored, without the bookkeeping: what @msp/calendar computes with. */
export type CalendarDefinition = BusinessCalendar & { name: string };

function toCalendar(row: Selectable<CalendarRow>): Calendar {
  return {
    id: row.id,
    name: row.name,
    time_zone: row.time_zone,
    hours: row.hours as Calendar['hours'],
    holidays: row.holidays as Calendar['holidays'],
    closed_days: row.closed_days,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toColumns(calendar: CalendarDefinition) {
  return {
    name: calendar.name,
    time_zone: calendar.time_zone,
    hours: jsonb(calendar.hours),
    holidays: jsonb(calendar.holidays ?? null),
    closed_days: calendar.closed_days,
  };
}

/** Newest first, off (tenant_id, created_at, id). */
const ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'desc' };

/** `reads`: where the list's page and total are read (the read replica with DATABASE_READ_URL); the rest reads `db`. */
export function createCalendarsRepository(db: Db, reads: Db = db) {
  async function findById(tenantId: string, id: string): Promise<Calendar | null> {
    const row = await db
      .selectFrom('calendars')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    return row ? toCalendar(row) : null;
  }

  return {
    findById,

    /** Newest first, off (tenant_id, created_at, id); the total from list_counts. */
    async list(tenantId: string, page: PageRequest): Promise<{ items: Calendar[]; total: number }> {
      const scope = reads.selectFrom('calendars').where('tenant_id', '=', tenantId);
      const found = await pageOfList(page, {
        scope,
        order: ORDER,
        page: (window, afterKey) => inListOrder(scope.selectAll(), ORDER, window, afterKey).execute(),
        total: () => listCount(reads, { tenantId, list: 'calendars' }),
      });
      return { items: found.items.map(toCalendar), total: found.total };
    },

    /** Reads the calendar and locks it until the transaction ends (a policy naming it, or its deletion, waits). */
    async findForUpdate(tenantId: string, id: string): Promise<Calendar | null> {
      const row = await db
        .selectFrom('calendars')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return row ? toCalendar(row) : null;
    },

    /** Throws a unique violation when the tenant already has a calendar of that name. */
    async create(tenantId: string, calendar: CalendarDefinition): Promise<Calendar> {
      return toCalendar(
        await db
          .insertInto('calendars')
          .values({ ...toColumns(calendar), tenant_id: tenantId })
          .returningAll()
          .executeTakeFirstOrThrow(),
      );
    },

    /** Throws a unique violation when the new name is taken. */
    async update(tenantId: string, id: string, calendar: CalendarDefinition): Promise<Calendar> {
      const row = await db
        .updateTable('calendars')
        .set({ ...toColumns(calendar), updated_at: new Date() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toCalendar(row);
    },

    async isUsedByPolicy(tenantId: string, id: string): Promise<boolean> {
      const used = await db
        .selectFrom('sla_policies')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('calendar_id', '=', id)
        .limit(1)
        .executeTakeFirst();
      return used !== undefined;
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await db.deleteFrom('calendars').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
    },
  };
}

export type CalendarsRepository = ReturnType<typeof createCalendarsRepository>;
