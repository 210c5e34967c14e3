import type { BusinessCalendar } from '@msp/calendar';
import { isoOf, listCountSql, sqlRows, type Queryable } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type Calendar as CalendarRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { Calendar } from './calendar.schemas';

/** A calendar as stored, without the bookkeeping: what @msp/calendar computes with. */
export type CalendarDefinition = BusinessCalendar & { name: string };

function toCalendar(row: CalendarRow): Calendar {
  return {
    id: row.id,
    name: row.name,
    time_zone: row.timeZone,
    hours: row.hours as Calendar['hours'],
    holidays: row.holidays as Calendar['holidays'],
    closed_days: row.closedDays,
    created_at: isoOf(row.createdAt),
    updated_at: isoOf(row.updatedAt),
  };
}

function toData(calendar: CalendarDefinition) {
  return {
    name: calendar.name,
    timeZone: calendar.time_zone,
    hours: calendar.hours as object,
    holidays: (calendar.holidays ?? undefined) as object | undefined,
    closedDays: calendar.closed_days,
  };
}

/** `reads`: where the list's page and total are read when given (the read replica's pool, DATABASE_READ_URL); the rest reads the primary. */
export function createCalendarsRepository(db: DbTx, reads?: Queryable) {
  async function findById(tenantId: string, id: string): Promise<Calendar | null> {
    const row = await db.calendar.findFirst({ where: { id, tenantId } });
    return row && toCalendar(row);
  }

  return {
    findById,

    /** Newest first, off (tenant_id, created_at, id); the total from list_counts. */
    async list(tenantId: string, page: PageRequest): Promise<{ items: Calendar[]; total: number }> {
      const found = await lists.keysetListPage<CalendarRow>(
        sqlRows(db, reads),
        listWindow(page),
        {
          table: 'calendars',
          select: Prisma.raw(`id, tenant_id AS "tenantId", name::text AS name, time_zone AS "timeZone", hours, holidays, closed_days AS "closedDays", created_at AS "createdAt", updated_at AS "updatedAt"`),
          scope: Prisma.sql`tenant_id = ${tenantId}::uuid`,
          columns: ['created_at', 'id'],
          direction: 'desc',
          total: listCountSql(tenantId, 'calendars'),
        },
      );
      return { items: found.items.map(toCalendar), total: found.total };
    },

    /** Reads the calendar and locks it until the transaction ends (a policy naming it, or its deletion, waits). */
    async findForUpdate(tenantId: string, id: string): Promise<Calendar | null> {
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM calendars WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      return locked.length ? findById(tenantId, id) : null;
    },

    /** Throws a unique violation when the tenant already has a calendar of that name. */
    async create(tenantId: string, calendar: CalendarDefinition): Promise<Calendar> {
      const data = toData(calendar);
      return toCalendar(await db.calendar.create({ data: { ...data, holidays: data.holidays ?? Prisma.DbNull, tenantId } }));
    },

    /** Throws a unique violation when the new name is taken. */
    async update(tenantId: string, id: string, calendar: CalendarDefinition): Promise<Calendar> {
      const data = toData(calendar);
      return toCalendar(await db.calendar.update({ where: { id, tenantId }, data: { ...data, holidays: data.holidays ?? Prisma.DbNull } }));
    },

    async isUsedByPolicy(tenantId: string, id: string): Promise<boolean> {
      return (await db.slaPolicy.count({ where: { tenantId, calendarId: id } })) > 0;
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await db.calendar.delete({ where: { id, tenantId } });
    },
  };
}

export type CalendarsRepository = ReturnType<typeof createCalendarsRepository>;
