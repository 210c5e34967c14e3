import { listCountRangeSql, listCountSql, sqlRows, type SqlQuery } from '@msp/db';
import type { RecordChange, Sql } from '@msp/events';
import type { ListWindow } from '@msp/http';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../list-pages';
import { dayToDate } from '../calendar';
import type { Db } from '../db';
import { countDifference, dayShifted } from '../list-pages';
import { BLOCKING_STATUSES, type LeaveStatus } from './leave-status';
import type { LeaveType } from './leave.schemas';

export interface LeaveRecord {
  id: string;
  userId: string;
  type: LeaveType;
  status: LeaveStatus;
  startDate: Date;
  endDate: Date;
  workingDays: number;
  /** Of a vacation: its working days a requested or approved sick leave covers (§9 BUrlG). */
  returnedDays: number;
  note: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewLeave {
  userId: string;
  type: LeaveType;
  /** `YYYY-MM-DD`, inclusive. */
  startDate: string;
  endDate: string;
  workingDays: number;
  /** The working days under a contract (`YYYY-MM-DD`), stored one row each for the leave accounts. */
  days: string[];
  note: string | null;
}

export interface LeaveFilter {
  userId?: string;
  status?: LeaveStatus;
  type?: LeaveType;
  /** Leaves that end on or after this day. */
  from?: string;
  /** Leaves that start on or before this day. */
  to?: string;
}

const columns = {
  id: true,
  userId: true,
  type: true,
  status: true,
  startDate: true,
  endDate: true,
  workingDays: true,
  note: true,
  createdAt: true,
  updatedAt: true,
} as const satisfies Prisma.LeaveSelect;

type Row = Prisma.LeaveGetPayload<{ select: typeof columns }>;

// The columns hold only what the API wrote (and CHECK constraints say so).
const toRecord = (row: Row, returnedDays = 0): LeaveRecord => ({ ...row, type: row.type as LeaveType, status: row.status as LeaveStatus, returnedDays });

/**
 * A vacation day that a requested or approved sick leave of the same user covers is no vacation day
 * (§9 BUrlG): it returns to the account. The leaves' working days are rows of `leave_days`, so this
 * is an index lookup per day, not a calendar walk. `d` is the vacation's `leave_days` row.
 */
export const SICK_COVERS_DAY = Prisma.sql`EXISTS (SELECT 1 FROM leave_days sd JOIN leaves s ON s.id = sd.leave_id
  WHERE sd.tenant_id = d.tenant_id AND sd.user_id = d.user_id AND sd.day = d.day AND s.type = 'sick' AND s.status IN ('requested', 'approved'))`;

/**
 * The records of `rows` with each vacation's `returnedDays`: its days (leave_days) that a requested
 * or approved sick leave of the same user covers. One statement for any number of leaves.
 */
async function withReturnedDays(client: Sql, rows: Row[]): Promise<LeaveRecord[]> {
  const vacations = rows.filter((row) => row.type === 'vacation').map((row) => row.id);
  if (vacations.length === 0) return rows.map((row) => toRecord(row));
  const query = Prisma.sql`SELECT d.leave_id, count(*)::int AS days FROM leave_days d
    WHERE d.leave_id = ANY(${vacations}::uuid[]) AND ${SICK_COVERS_DAY} GROUP BY d.leave_id`;
  const counted = await client.$queryRawUnsafe<{ leave_id: string; days: number }[]>(query.text, ...query.values);
  const returned = new Map(counted.map((row) => [row.leave_id, row.days]));
  return rows.map((row) => toRecord(row, returned.get(row.id) ?? 0));
}

/**
 * The list's columns as plain SQL on the pool (sqlRows of @msp/db, as employees' and timesheets'
 * lists are), each vacation's `returned_days` (withReturnedDays' count) in the same statement.
 */
const LEAVE_COLUMNS = Prisma.sql`l.id, l.user_id, l.type, l.status, to_char(l.start_date, 'YYYY-MM-DD') AS start_date,
  to_char(l.end_date, 'YYYY-MM-DD') AS end_date, l.working_days, l.note, l.created_at, l.updated_at,
  CASE WHEN l.type = 'vacation' THEN (SELECT count(*)::int FROM leave_days d WHERE d.leave_id = l.id AND ${SICK_COVERS_DAY}) ELSE 0 END AS returned_days`;

interface LeaveSqlRow {
  id: string;
  user_id: string;
  type: LeaveType;
  status: LeaveStatus;
  start_date: string;
  end_date: string;
  working_days: number;
  note: string | null;
  created_at: string | Date;
  updated_at: string | Date;
  returned_days: number;
}

const fromSql = (row: LeaveSqlRow): LeaveRecord => ({
  id: row.id,
  userId: row.user_id,
  type: row.type,
  status: row.status,
  startDate: dayToDate(row.start_date),
  endDate: dayToDate(row.end_date),
  workingDays: row.working_days,
  returnedDays: row.returned_days,
  note: row.note,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

/**
 * The exact total of the list for at most one kind of filter, from list_counts: the whole list, a
 * user, a status, a type, or `from`/`to` (the leaves touching the range are all of them but those
 * ending before `from` and those starting after `to`; none is both, as no leave ends before it
 * starts and `to` is not before `from`). Null for filters combined: count(*) then.
 */
function countedTotal(tenantId: string, filter: LeaveFilter): SqlQuery | null {
  const given = [filter.userId, filter.status, filter.type].filter((value) => value !== undefined).length;
  const ranged = filter.from !== undefined || filter.to !== undefined;
  if (given + (ranged ? 1 : 0) > 1) return null;
  // Ids as PostgreSQL writes them (lower case); the API takes either case.
  if (filter.userId !== undefined) return listCountSql(tenantId, 'leaves', { dimension: 'user_id', value: filter.userId.toLowerCase() });
  if (filter.status !== undefined) return listCountSql(tenantId, 'leaves', { dimension: 'status', value: filter.status });
  if (filter.type !== undefined) return listCountSql(tenantId, 'leaves', { dimension: 'type', value: filter.type });
  if (!ranged) return listCountSql(tenantId, 'leaves');
  return countDifference(
    listCountSql(tenantId, 'leaves'),
    ...(filter.from === undefined ? [] : [listCountRangeSql(tenantId, 'leaves', 'end_date', { to: dayShifted(filter.from, -1) })]),
    ...(filter.to === undefined ? [] : [listCountRangeSql(tenantId, 'leaves', 'start_date', { from: dayShifted(filter.to, 1) })]),
  );
}

/** Every query is bounded by the caller's tenant: another tenant's leaves are simply not found. */
export function createLeavesRepository(db: Db) {
  const rows = sqlRows(db, db.pool);
  return {
    /**
     * A page and the exact total in one round trip (keysetListPage); latest start first, the id keeping
     * pages stable among leaves starting the same day; by number or after a leave (keyset, at any
     * depth). Each single filter has an index in the list's order (user, status, type; from/to
     * range over the list's own index) and its total from list_counts (countedTotal).
     */
    async list(tenantId: string, filter: LeaveFilter, window: ListWindow): Promise<{ items: LeaveRecord[]; total: number }> {
      // The scope unqualified: it bounds the after item (k) too.
      const scope = Prisma.sql`tenant_id = ${tenantId}::uuid`;
      const filters = [
        ...(filter.userId === undefined ? [] : [Prisma.sql`l.user_id = ${filter.userId}::uuid`]),
        ...(filter.status === undefined ? [] : [Prisma.sql`l.status = ${filter.status}`]),
        ...(filter.type === undefined ? [] : [Prisma.sql`l.type = ${filter.type}`]),
        ...(filter.from === undefined ? [] : [Prisma.sql`l.end_date >= ${filter.from}::date`]),
        ...(filter.to === undefined ? [] : [Prisma.sql`l.start_date <= ${filter.to}::date`]),
      ];
      const { items, total } = await lists.keysetListPage<LeaveSqlRow>(
        rows,
        window,
        {
          table: 'leaves',
          alias: 'l',
          select: LEAVE_COLUMNS,
          scope,
          filters,
          columns: ['start_date', 'id'],
          direction: 'desc',
          total: countedTotal(tenantId, filter) ?? Prisma.sql`SELECT count(*) FROM leaves l WHERE ${Prisma.join([scope, ...filters], ' AND ')}`,
        },
      );
      return { items: items.map(fromSql), total };
    },

    async findById(tenantId: string, id: string): Promise<LeaveRecord | null> {
      const row = await db.leave.findFirst({ where: { id, tenantId }, select: columns });
      return row && (await withReturnedDays(db, [row]))[0]!;
    },

    /**
     * Inserts the leave unless a requested or approved leave of the same user overlaps it; then
     * nothing is written and that leave is returned as `overlapping`. A sick leave may overlap an
     * approved vacation (§9 BUrlG: the vacation's days it covers return to the account). A transaction-scoped
     * advisory lock per (tenant, user) serialises the check and the insert of concurrent
     * requests, so two overlapping leaves can never both pass (no other path creates a blocking
     * leave: rejected and cancelled ones never come back). `guard`, when given, runs under the same
     * lock before the insert (a throw writes nothing), so the checks it makes against the user's other
     * leaves (the leave balance) hold for concurrent requests too. `record` records the new leave's
     * event in the same transaction.
     */
    createUnlessOverlapping(
      tenantId: string,
      input: NewLeave,
      record: RecordChange<LeaveRecord>,
      guard?: () => Promise<void>,
    ): Promise<{ created: LeaveRecord } | { overlapping: LeaveRecord }> {
      const startDate = dayToDate(input.startDate);
      const endDate = dayToDate(input.endDate);
      return db.$transaction(async (tx) => {
        // Through ::uuid first, so a user id sent in capitals takes the same lock as in lower case.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${tenantId}::uuid::text), hashtext(${input.userId}::uuid::text))`;
        const mayOverlap: Prisma.LeaveWhereInput[] = input.type === 'sick' ? [{ NOT: { type: 'vacation', status: 'approved' } }] : [];
        const overlapping = await tx.leave.findFirst({
          where: { tenantId, userId: input.userId, status: { in: [...BLOCKING_STATUSES] }, startDate: { lte: endDate }, endDate: { gte: startDate }, AND: mayOverlap },
          orderBy: { startDate: 'asc' },
          select: columns,
        });
        if (overlapping) return { overlapping: toRecord(overlapping) };
        if (guard) await guard();
        const { days, ...leave } = input;
        const row = await tx.leave.create({ data: { tenantId, ...leave, status: 'requested', startDate, endDate }, select: columns });
        await tx.leaveDay.createMany({ data: days.map((day) => ({ leaveId: row.id, tenantId, userId: input.userId, day: dayToDate(day) })) });
        const [created] = await withReturnedDays(tx, [row]);
        await record(tx, created!);
        return { created: created! };
      });
    },

    /**
     * Moves the status only if it is still `from`, and `record`s the move's event: a concurrent
     * move in between makes this a no-op (null), and the caller judges the move again against the
     * new state. The update locks the row until the event is written with it.
     */
    moveStatus(tenantId: string, id: string, from: LeaveStatus, to: LeaveStatus, record: RecordChange<LeaveRecord>): Promise<LeaveRecord | null> {
      return db.$transaction(async (tx) => {
        const { count } = await tx.leave.updateMany({ where: { id, tenantId, status: from }, data: { status: to, updatedAt: new Date() } });
        if (count === 0) return null;
        const [moved] = await withReturnedDays(tx, [await tx.leave.findUniqueOrThrow({ where: { id }, select: columns })]);
        await record(tx, moved!);
        return moved!;
      });
    },
  };
}

export type LeavesRepository = ReturnType<typeof createLeavesRepository>;
