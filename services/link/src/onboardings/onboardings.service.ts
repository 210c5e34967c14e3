import type { RecordChange } from '@msp/events';
import { conflict, notFound, pageWindow, unprocessable, type Logger, type PageRequest } from '@msp/http';
import type { DeskClient } from '../desk/desk-client';
import { linkEvents } from '../events/link-events';
import { activeDeskUser } from '../runs/desk-users';
import type { Directories } from '../runs/directory';
import type { RunTenant, RunTenantsRepository } from '../runs/managed-tenants.repository';
import { jobIdOf, ONBOARDING_QUEUE, type RunQueue } from '../runs/run-queue';
import { ONBOARDING_TASKS, type CreateOnboardingBody, type OnboardingStatus } from './onboarding.schemas';
import { onboardingJson } from './onboarding.mapper';
import { OpenOnboardingExists, type OnboardingEnd, type OnboardingRecord, type OnboardingsRepository } from './onboardings.repository';

export interface OnboardingsServiceDeps {
  onboardings: OnboardingsRepository;
  tenants: RunTenantsRepository;
  directories: Directories;
  desk: DeskClient;
  queue: RunQueue;
  logger: Logger;
}

export const onboardingJobId = (runId: string) => jobIdOf('onboarding', runId);

/** The managed tenant named by `tenant_id`, or the one whose domain is the e-mail's; usable only when active with an enabled connector. */
export async function directoryTenantFor(
  deps: Pick<OnboardingsServiceDeps, 'tenants' | 'directories'>,
  ownerTenantId: string,
  email: string,
  tenantId: string | undefined,
): Promise<RunTenant> {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const tenant = tenantId ? await deps.tenants.findById(ownerTenantId, tenantId) : await deps.tenants.findByDomain(ownerTenantId, domain);
  if (!tenant) {
    throw tenantId
      ? unprocessable(`tenant_id ${tenantId} is not one of your managed tenants.`, { errors: [{ field: 'tenant_id', message: 'does not name a managed tenant of yours' }] })
      : unprocessable(`None of your managed tenants has the domain ${domain}; register it, or name one with tenant_id.`, {
          errors: [{ field: 'email', message: `has a domain (${domain}) of no managed tenant of yours` }],
        });
  }
  const field = tenantId ? 'tenant_id' : 'email';
  if (tenant.status !== 'active') {
    throw unprocessable(`The managed tenant ${tenant.domain} is suspended.`, { errors: [{ field, message: 'names a suspended managed tenant' }] });
  }
  if (!(await deps.directories.hasEnabledConnector(tenant.id))) {
    throw unprocessable(`The managed tenant ${tenant.domain} has no enabled connector to its directory.`, {
      errors: [{ field, message: 'names a managed tenant without an enabled connector' }],
    });
  }
  return tenant;
}

/** A run's end is its event (`onboarding.completed`, …): the run as it is now, `changes.status` from what it was. */
export const recordOnboardingEnd: RecordChange<OnboardingEnd> = (tx, { status, before, after }) =>
  linkEvents.record(tx, {
    type: `onboarding.${status}`,
    tenantId: after.ownerTenantId,
    resourceType: 'onboarding',
    resourceId: after.id,
    object: onboardingJson(after),
    before: onboardingJson(before),
  });

export function createOnboardingsService(deps: OnboardingsServiceDeps) {
  const { onboardings, desk, queue, logger } = deps;

  return {
    list(ownerTenantId: string, filter: { status?: OnboardingStatus }, page: PageRequest) {
      return onboardings.list(ownerTenantId, filter, pageWindow(page));
    },

    async get(ownerTenantId: string, id: string): Promise<OnboardingRecord> {
      const run = await onboardings.findById(ownerTenantId, id);
      if (!run) throw notFound(`No onboarding ${id}.`);
      return run;
    },

    async create(ownerTenantId: string, body: CreateOnboardingBody): Promise<OnboardingRecord> {
      const email = body.email.toLowerCase();
      const tenant = await directoryTenantFor(deps, ownerTenantId, email, body.tenant_id);
      if (!(await activeDeskUser(desk, ownerTenantId, body.manager_id))) {
        throw unprocessable(`manager_id ${body.manager_id} is not an active desk user of your tenant.`, {
          errors: [{ field: 'manager_id', message: 'does not name an active desk user of your tenant' }],
        });
      }
      let run: OnboardingRecord;
      try {
        run = await onboardings.create(
          ownerTenantId,
          {
            managedTenantId: tenant.id,
            firstName: body.first_name,
            lastName: body.last_name,
            email,
            department: body.department,
            managerId: body.manager_id,
            startDate: new Date(`${body.start_date}T00:00:00Z`),
            bundles: body.bundles,
            laptop: body.physical.laptop,
            badge: body.physical.badge,
            phoneExtension: body.physical.phone_extension,
          },
          ONBOARDING_TASKS,
        );
      } catch (error) {
        if (error instanceof OpenOnboardingExists) {
          throw conflict(`An onboarding of ${email} is already scheduled or in progress.`, { errors: [{ field: 'email', message: 'is already being onboarded' }] });
        }
        throw error;
      }
      // The account must exist before the start date: the run starts now. Should the queue not
      // take the job, the start-up sweep of open runs enqueues it again.
      await queue.send(ONBOARDING_QUEUE, { runId: run.id }, { id: onboardingJobId(run.id) }).catch((error: unknown) => {
        logger.error('could not enqueue an onboarding; the next start enqueues it', { onboarding_id: run.id, error: (error as Error).message });
      });
      return run;
    },
  };
}

export type OnboardingsService = ReturnType<typeof createOnboardingsService>;
