import type { RecordChange } from '@msp/events';
import type { Prisma } from '../generated/prisma/client';
import { dayToDate } from '../calendar';
import type { Db } from '../db';
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
const toRecord = (row: Row): LeaveRecord => ({ ...row, type: row.type as LeaveType, status: row.status as LeaveStatus });

/** Every query is bounded by the caller's tenant: another tenant's leaves are simply not found. */
export function createLeavesRepository(db: Db) {
  return {
    async list(tenantId: string, filter: LeaveFilter, window: { skip: number; take: number }): Promise<{ items: LeaveRecord[]; total: number }> {
      const where: Prisma.LeaveWhereInput = {
        tenantId,
        userId: filter.userId,
        status: filter.status,
        type: filter.type,
        endDate: filter.from ? { gte: dayToDate(filter.from) } : undefined,
        startDate: filter.to ? { lte: dayToDate(filter.to) } : undefined,
      };
      // Latest start first; the id keeps pages stable among leaves starting the same day.
      const [rows, total] = await db.$transaction([
        db.leave.findMany({ where, orderBy: [{ startDate: 'desc' }, { id: 'desc' }], select: columns, ...window }),
        db.leave.count({ where }),
      ]);
      return { items: rows.map(toRecord), total };
    },

    async findById(tenantId: string, id: string): Promise<LeaveRecord | null> {
      const row = await db.leave.findFirst({ where: { id, tenantId }, select: columns });
      return row && toRecord(row);
    },

    /**
     * Inserts the leave unless a requested or approved leave of the same user overlaps it; then
     * nothing is written and that leave is returned as `overlapping`. A transaction-scoped
     * advisory lock per (tenant, user) serialises the check and the insert of concurrent
     * requests, so two overlapping leaves can never both pass (no other path creates a blocking
     * leave: rejected and cancelled ones never come back). `record` records the new leave's event
     * in the same transaction.
     */
    createUnlessOverlapping(tenantId: string, input: NewLeave, record: RecordChange<LeaveRecord>): Promise<{ created: LeaveRecord } | { overlapping: LeaveRecord }> {
      const startDate = dayToDate(input.startDate);
      const endDate = dayToDate(input.endDate);
      return db.$transaction(async (tx) => {
        // Through ::uuid first, so a user id sent in capitals takes the same lock as in lower case.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${tenantId}::uuid::text), hashtext(${input.userId}::uuid::text))`;
        const overlapping = await tx.leave.findFirst({
          where: { tenantId, userId: input.userId, status: { in: [...BLOCKING_STATUSES] }, startDate: { lte: endDate }, endDate: { gte: startDate } },
          orderBy: { startDate: 'asc' },
          select: columns,
        });
        if (overlapping) return { overlapping: toRecord(overlapping) };
        const created = toRecord(await tx.leave.create({ data: { tenantId, ...input, status: 'requested', startDate, endDate }, select: columns }));
        await record(tx, created);
        return { created };
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
        const moved = toRecord(await tx.leave.findUniqueOrThrow({ where: { id }, select: columns }));
        await record(tx, moved);
        return moved;
      });
    },
  };
}

export type LeavesRepository = ReturnType<typeof createLeavesRepository>;
