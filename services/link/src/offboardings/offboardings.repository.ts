import type { RecordChange } from '@msp/events';
import type { Prisma } from '../generated/prisma/client';
import { lockRow, violatedUniqueConstraint, type Db } from '../db';
import { TASK_ORDER, taskColumns, type RunTaskRecord } from '../runs/run-tasks.repository';
import type { OffboardingStatus } from './offboarding.schemas';

export interface OffboardingRecord {
  id: string;
  ownerTenantId: string;
  userId: string;
  successorId: string;
  email: string;
  managedTenantId: string | null;
  lastDay: Date;
  mailboxRetentionDays: number;
  status: OffboardingStatus;
  directoryUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  cancelledAt: Date | null;
  tasks: RunTaskRecord[];
}

export interface NewOffboarding {
  userId: string;
  successorId: string;
  email: string;
  managedTenantId: string | null;
  lastDay: Date;
  mailboxRetentionDays: number;
}

/** How a run ended (`status`), and the run before and after. */
export interface OffboardingEnd {
  status: 'completed' | 'completed_with_errors' | 'failed' | 'cancelled';
  before: OffboardingRecord;
  after: OffboardingRecord;
}

/** An offboarding of this user is already scheduled or in progress. */
export class OpenOffboardingExists extends Error {
  constructor(readonly userId: string) {
    super(`an offboarding of ${userId} is already open`);
    this.name = 'OpenOffboardingExists';
  }
}

// Prisma's name for @@unique([ownerTenantId, openUserId]).
const OPEN_USER_KEY = 'offboardings_owner_tenant_id_open_user_id_key';

const columns = {
  id: true,
  ownerTenantId: true,
  userId: true,
  successorId: true,
  email: true,
  managedTenantId: true,
  lastDay: true,
  mailboxRetentionDays: true,
  status: true,
  directoryUserId: true,
  createdAt: true,
  updatedAt: true,
  startedAt: true,
  finishedAt: true,
  cancelledAt: true,
  tasks: { select: taskColumns, orderBy: TASK_ORDER },
} as const;

const OPEN: OffboardingStatus[] = ['scheduled', 'in_progress'];

/**
 * Ends the run (locked, still in one of `from`) with `data` and whatever `alsoChange` does, and
 * gives the end to `record` (its event) in the same transaction. False when the run is not (or
 * no longer) in `from`: nothing changes, nothing is recorded.
 */
async function end(
  tx: Prisma.TransactionClient,
  id: string,
  move: { from: OffboardingStatus[]; to: OffboardingEnd['status'] },
  data: Prisma.OffboardingUpdateInput,
  record: RecordChange<OffboardingEnd>,
  alsoChange?: () => Promise<unknown>,
): Promise<boolean> {
  const { from, to } = move;
  const before = (await lockRow(tx, 'offboardings', id)) && ((await tx.offboarding.findUnique({ where: { id }, select: columns })) as OffboardingRecord | null);
  if (!before || !from.includes(before.status)) return false;
  await alsoChange?.();
  const after = (await tx.offboarding.update({ where: { id }, data: { ...data, status: to }, select: columns })) as OffboardingRecord;
  await record(tx, { status: to, before, after });
  return true;
}

export function createOffboardingsRepository(db: Db) {
  return {
    /** The run and its tasks (each with its due time) in one transaction; one open run per user. */
    async create(ownerTenantId: string, input: NewOffboarding, tasks: { name: string; dueAt: Date }[]): Promise<OffboardingRecord> {
      try {
        return await db.offboarding.create({
          data: { ownerTenantId, ...input, openUserId: input.userId, tasks: { create: tasks.map((task, position) => ({ ...task, position })) } },
          select: columns,
        });
      } catch (error) {
        if (violatedUniqueConstraint(error) === OPEN_USER_KEY) throw new OpenOffboardingExists(input.userId);
        throw error;
      }
    },

    async list(ownerTenantId: string, filter: { status?: OffboardingStatus }, window: { skip: number; take: number }) {
      const where = { ownerTenantId, status: filter.status };
      const [items, total] = await db.$transaction([
        db.offboarding.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: columns, ...window }),
        db.offboarding.count({ where }),
      ]);
      return { items: items as OffboardingRecord[], total };
    },

    async findById(ownerTenantId: string, id: string): Promise<OffboardingRecord | null> {
      return db.offboarding.findFirst({ where: { id, ownerTenantId }, select: columns }) as Promise<OffboardingRecord | null>;
    },

    async findForRun(id: string): Promise<OffboardingRecord | null> {
      return db.offboarding.findUnique({ where: { id }, select: columns }) as Promise<OffboardingRecord | null>;
    },

    /**
     * scheduled → in_progress, guarded by the status as `cancel` is (both lock the row), so of a
     * cancel and the first due task exactly one wins. Answers whether the run is (now) in progress.
     */
    async markStarted(id: string): Promise<boolean> {
      const moved = await db.offboarding.updateMany({ where: { id, status: 'scheduled' }, data: { status: 'in_progress', startedAt: new Date() } });
      if (moved.count === 1) return true;
      const now = await db.offboarding.findUnique({ where: { id }, select: { status: true } });
      return now?.status === 'in_progress';
    },

    /** scheduled → cancelled, its tasks skipped, `record`ed; false when the run is not (or no longer) scheduled. */
    async cancel(ownerTenantId: string, id: string, record: RecordChange<OffboardingEnd>): Promise<boolean> {
      return db.$transaction(async (tx) => {
        // Another owner's run is not touched (the service has answered 404 for it already).
        if (!(await tx.offboarding.count({ where: { id, ownerTenantId } }))) return false;
        const now = new Date();
        const skipTasks = () => tx.runTask.updateMany({ where: { offboardingId: id }, data: { status: 'skipped', detail: 'Cancelled before it was due.', finishedAt: now } });
        return end(tx, id, { from: ['scheduled'], to: 'cancelled' }, { cancelledAt: now, finishedAt: now, openUserId: null }, record, skipTasks);
      });
    },

    async setManagedTenant(id: string, managedTenantId: string): Promise<void> {
      await db.offboarding.update({ where: { id }, data: { managedTenantId } });
    },

    async setDirectoryUserId(id: string, directoryUserId: string): Promise<void> {
      await db.offboarding.update({ where: { id }, data: { directoryUserId } });
    },

    /** The end, `record`ed: the user may be offboarded again (e.g. after a rehire). */
    async finish(id: string, status: 'completed' | 'completed_with_errors' | 'failed', record: RecordChange<OffboardingEnd>): Promise<void> {
      await db.$transaction((tx) => end(tx, id, { from: OPEN, to: status }, { finishedAt: new Date(), openUserId: null }, record));
    },

    /** Runs not finished, with the due times of their unfinished tasks (to re-enqueue after a restart). */
    async openRuns(): Promise<{ id: string; dueTimes: Date[] }[]> {
      const rows = await db.offboarding.findMany({
        where: { status: { in: OPEN } },
        select: { id: true, tasks: { where: { finishedAt: null }, select: { dueAt: true } } },
      });
      return rows.map((row) => ({ id: row.id, dueTimes: row.tasks.map((task) => task.dueAt!).filter(Boolean) }));
    },
  };
}

export type OffboardingsRepository = ReturnType<typeof createOffboardingsRepository>;
