import type { RecordChange } from '@msp/events';
import { conflict, notFound, pageWindow, unprocessable, type Logger, type PageRequest } from '@msp/http';
import type { DeskClient } from '../desk/desk-client';
import { linkEvents } from '../events/link-events';
import { activeDeskUser } from '../runs/desk-users';
import type { RunTenantsRepository } from '../runs/managed-tenants.repository';
import { jobIdOf, OFFBOARDING_QUEUE, type RunQueue } from '../runs/run-queue';
import { OFFBOARDING_TASKS, type CreateOffboardingBody, type OffboardingStatus } from './offboarding.schemas';
import { offboardingJson } from './offboarding.mapper';
import { OpenOffboardingExists, type OffboardingEnd, type OffboardingRecord, type OffboardingsRepository } from './offboardings.repository';

export interface OffboardingsServiceDeps {
  offboardings: OffboardingsRepository;
  tenants: RunTenantsRepository;
  desk: DeskClient;
  queue: RunQueue;
  logger: Logger;
}

const DAY_MS = 86_400_000;

/**
 * When each task is due: the first three when last_day has ended (midnight UTC after it), the
 * deletion `retentionDays` later; a time already past means now.
 */
export function dueTimes(lastDay: string, retentionDays: number, now = new Date()): Record<(typeof OFFBOARDING_TASKS)[number], Date> {
  const endOfLastDay = Date.parse(`${lastDay}T00:00:00Z`) + DAY_MS;
  const leave = new Date(Math.max(endOfLastDay, now.getTime()));
  const remove = new Date(Math.max(endOfLastDay + retentionDays * DAY_MS, now.getTime()));
  return { reassign_tickets: leave, disable_account: leave, delegate_mailbox: leave, delete_account: remove };
}

/** One job per distinct due time; its id is stable, so sending it again (after a restart) is a no-op. */
export const offboardingJobId = (runId: string, dueAt: Date) => jobIdOf('offboarding', runId, dueAt.toISOString());

export async function enqueueOffboarding(queue: RunQueue, runId: string, due: Date[]): Promise<void> {
  const distinct = [...new Set(due.map((date) => date.getTime()))].map((ms) => new Date(ms));
  for (const startAfter of distinct) {
    await queue.send(OFFBOARDING_QUEUE, { runId }, { id: offboardingJobId(runId, startAfter), startAfter });
  }
}

/** A run's end is its event (`offboarding.completed`, …, `offboarding.cancelled`): the run as it is now, `changes.status` from what it was. */
export const recordOffboardingEnd: RecordChange<OffboardingEnd> = (tx, { status, before, after }) =>
  linkEvents.record(tx, {
    type: `offboarding.${status}`,
    tenantId: after.ownerTenantId,
    resourceType: 'offboarding',
    resourceId: after.id,
    object: offboardingJson(after),
    before: offboardingJson(before),
  });

export function createOffboardingsService(deps: OffboardingsServiceDeps) {
  const { offboardings, tenants, desk, queue, logger } = deps;

  async function get(ownerTenantId: string, id: string): Promise<OffboardingRecord> {
    const run = await offboardings.findById(ownerTenantId, id);
    if (!run) throw notFound(`No offboarding ${id}.`);
    return run;
  }

  return {
    get,

    list(ownerTenantId: string, filter: { status?: OffboardingStatus }, page: PageRequest) {
      return offboardings.list(ownerTenantId, filter, pageWindow(page));
    },

    async create(ownerTenantId: string, body: CreateOffboardingBody): Promise<OffboardingRecord> {
      if (body.user_id === body.successor_id) {
        throw unprocessable('successor_id must be someone other than the leaving user.', { errors: [{ field: 'successor_id', message: 'must differ from user_id' }] });
      }
      const user = await activeDeskUser(desk, ownerTenantId, body.user_id);
      const successor = await activeDeskUser(desk, ownerTenantId, body.successor_id);
      const errors = [
        ...(user ? [] : [{ field: 'user_id', message: 'does not name an active desk user of your tenant' }]),
        ...(successor ? [] : [{ field: 'successor_id', message: 'does not name an active desk user of your tenant' }]),
      ];
      if (errors.length) throw unprocessable(`${errors.map((e) => e.field).join(' and ')} must name active desk users of your tenant.`, { errors });

      const email = user!.email.toLowerCase();
      // The directory is known now if its managed tenant is registered; if not, it is looked up
      // again when the tasks are due (the tenant may be registered by then).
      const tenant = await tenants.findByDomain(ownerTenantId, email.slice(email.lastIndexOf('@') + 1));
      const due = dueTimes(body.last_day, body.mailbox_retention_days);
      let run: OffboardingRecord;
      try {
        run = await offboardings.create(
          ownerTenantId,
          {
            userId: body.user_id,
            successorId: body.successor_id,
            email,
            managedTenantId: tenant?.id ?? null,
            lastDay: new Date(`${body.last_day}T00:00:00Z`),
            mailboxRetentionDays: body.mailbox_retention_days,
          },
          OFFBOARDING_TASKS.map((name) => ({ name, dueAt: due[name] })),
        );
      } catch (error) {
        if (error instanceof OpenOffboardingExists) {
          throw conflict(`An offboarding of user ${body.user_id} is already scheduled or in progress.`, { errors: [{ field: 'user_id', message: 'is already being offboarded' }] });
        }
        throw error;
      }
      await enqueueOffboarding(queue, run.id, Object.values(due)).catch((error: unknown) => {
        logger.error('could not enqueue an offboarding; the next start enqueues it', { offboarding_id: run.id, error: (error as Error).message });
      });
      return run;
    },

    /** Only while nothing has run: a scheduled run becomes cancelled, its jobs are dropped. */
    async cancel(ownerTenantId: string, id: string): Promise<OffboardingRecord> {
      const run = await get(ownerTenantId, id);
      if (!(await offboardings.cancel(ownerTenantId, id, recordOffboardingEnd))) {
        const now = await get(ownerTenantId, id);
        throw conflict(`The offboarding is ${now.status}: only a scheduled offboarding, of which nothing has run yet, can be cancelled.`, {
          extensions: { current_status: now.status },
        });
      }
      // The worker checks the run's state anyway; dropping the jobs keeps the queue tidy.
      for (const dueAt of new Set(run.tasks.map((task) => task.dueAt!.toISOString()))) {
        await queue.cancel(OFFBOARDING_QUEUE, offboardingJobId(id, new Date(dueAt))).catch(() => undefined);
      }
      return get(ownerTenantId, id);
    },
  };
}

export type OffboardingsService = ReturnType<typeof createOffboardingsService>;
