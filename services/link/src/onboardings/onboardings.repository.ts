import type { RecordChange } from '@msp/events';
import { lockRow, violatedUniqueConstraint, type Db } from '../db';
import { TASK_ORDER, taskColumns, type RunTaskRecord } from '../runs/run-tasks.repository';
import type { OnboardingStatus } from './onboarding.schemas';

export interface OnboardingRecord {
  id: string;
  ownerTenantId: string;
  managedTenantId: string;
  status: OnboardingStatus;
  firstName: string;
  lastName: string;
  email: string;
  department: string;
  managerId: string;
  startDate: Date;
  bundles: string[];
  laptop: string;
  badge: boolean;
  phoneExtension: boolean;
  directoryUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  tasks: RunTaskRecord[];
}

export type NewOnboarding = Omit<OnboardingRecord, 'id' | 'ownerTenantId' | 'status' | 'directoryUserId' | 'createdAt' | 'updatedAt' | 'startedAt' | 'finishedAt' | 'tasks'>;

/** How a run ended (`status`), and the run before and after. */
export interface OnboardingEnd {
  status: 'completed' | 'completed_with_errors' | 'failed';
  before: OnboardingRecord;
  after: OnboardingRecord;
}

/** An onboarding of this e-mail is already scheduled or in progress. */
export class OpenOnboardingExists extends Error {
  constructor(readonly email: string) {
    super(`an onboarding of ${email} is already open`);
    this.name = 'OpenOnboardingExists';
  }
}

// Prisma's name for @@unique([ownerTenantId, openEmail]).
const OPEN_EMAIL_KEY = 'onboardings_owner_tenant_id_open_email_key';

const columns = {
  id: true,
  ownerTenantId: true,
  managedTenantId: true,
  status: true,
  firstName: true,
  lastName: true,
  email: true,
  department: true,
  managerId: true,
  startDate: true,
  bundles: true,
  laptop: true,
  badge: true,
  phoneExtension: true,
  directoryUserId: true,
  createdAt: true,
  updatedAt: true,
  startedAt: true,
  finishedAt: true,
  tasks: { select: taskColumns, orderBy: TASK_ORDER },
} as const;

const OPEN: OnboardingStatus[] = ['scheduled', 'in_progress'];

export function createOnboardingsRepository(db: Db) {
  return {
    /** The run and its tasks in one transaction; the open-e-mail key refuses a second open run. */
    async create(ownerTenantId: string, input: NewOnboarding, taskNames: readonly string[]): Promise<OnboardingRecord> {
      try {
        return await db.onboarding.create({
          data: {
            ownerTenantId,
            ...input,
            openEmail: input.email,
            tasks: { create: taskNames.map((name, position) => ({ name, position })) },
          },
          select: columns,
        });
      } catch (error) {
        if (violatedUniqueConstraint(error) === OPEN_EMAIL_KEY) throw new OpenOnboardingExists(input.email);
        throw error;
      }
    },

    async list(ownerTenantId: string, filter: { status?: OnboardingStatus }, window: { skip: number; take: number }) {
      const where = { ownerTenantId, status: filter.status };
      const [items, total] = await db.$transaction([
        db.onboarding.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: columns, ...window }),
        db.onboarding.count({ where }),
      ]);
      return { items: items as OnboardingRecord[], total };
    },

    async findById(ownerTenantId: string, id: string): Promise<OnboardingRecord | null> {
      return db.onboarding.findFirst({ where: { id, ownerTenantId }, select: columns }) as Promise<OnboardingRecord | null>;
    },

    /** For the worker, which acts for whoever created the run. */
    async findForRun(id: string): Promise<OnboardingRecord | null> {
      return db.onboarding.findUnique({ where: { id }, select: columns }) as Promise<OnboardingRecord | null>;
    },

    async markStarted(id: string): Promise<void> {
      await db.onboarding.updateMany({ where: { id, status: 'scheduled' }, data: { status: 'in_progress', startedAt: new Date() } });
    },

    async setDirectoryUserId(id: string, directoryUserId: string): Promise<void> {
      await db.onboarding.update({ where: { id }, data: { directoryUserId } });
    },

    /** The end, `record`ed in the same transaction: the e-mail is free for a new onboarding again. */
    finish(id: string, status: OnboardingEnd['status'], record: RecordChange<OnboardingEnd>): Promise<void> {
      return db.$transaction(async (tx) => {
        const before = (await lockRow(tx, 'onboardings', id)) && ((await tx.onboarding.findUnique({ where: { id }, select: columns })) as OnboardingRecord | null);
        // Already ended (a duplicated job): nothing changes, nothing is recorded.
        if (!before || !OPEN.includes(before.status)) return;
        const after = (await tx.onboarding.update({ where: { id }, data: { status, finishedAt: new Date(), openEmail: null }, select: columns })) as OnboardingRecord;
        await record(tx, { status, before, after });
      });
    },

    /** Runs not finished (to make sure each has its job after a restart). */
    async openIds(): Promise<string[]> {
      const rows = await db.onboarding.findMany({ where: { status: { in: OPEN } }, select: { id: true } });
      return rows.map((row) => row.id);
    },
  };
}

export type OnboardingsRepository = ReturnType<typeof createOnboardingsRepository>;
