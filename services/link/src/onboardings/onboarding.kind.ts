import { AppError, conflict, unprocessable } from '@msp/http';
import type { Selectable } from 'kysely';
import { isDeskError } from '../desk/desk-client';
import type { Onboarding } from '../generated/kysely/database';
import { runColumnsOf } from '../runs/runs.repository';
import { activeDeskUser } from '../runs/desk-users';
import { runDate } from '../runs/run-dates';
import type { TenantRecord } from '../tenants/tenants.repository';
import type { RunKind, RunKindDeps } from '../runs/run-kind';
import { onboardingJson } from './onboarding.mapper';
import type { CreateOnboardingBody } from './onboarding.schemas';
import {
  equipmentTicketOf,
  isStaged,
  onboardingSteps,
  resolveEquipmentTicket,
  type NewOnboarding,
  type OnboardingRecord,
} from './onboarding.tasks';

/** The managed tenant named by `tenant_id`, or the one whose domain is the e-mail's; usable only when active with an enabled connector. */
async function directoryTenantFor(
  deps: Pick<RunKindDeps, 'tenants' | 'directories'>,
  ownerTenantId: string,
  email: string,
  tenantId: string | undefined,
): Promise<TenantRecord> {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const tenant = tenantId
    ? await deps.tenants.findById(ownerTenantId, tenantId)
    : await deps.tenants.findByDomain(ownerTenantId, domain);
  if (!tenant) {
    throw tenantId
      ? unprocessable(`tenant_id ${tenantId} is not one of your managed tenants.`, {
          errors: [{ field: 'tenant_id', message: 'does not name a managed tenant of yours' }],
        })
      : unprocessable(
          `None of your managed tenants has the domain ${domain}; register it, or name one with tenant_id.`,
          {
            errors: [{ field: 'email', message: `has a domain (${domain}) of no managed tenant of yours` }],
          },
        );
  }
  const field = tenantId ? 'tenant_id' : 'email';
  if (tenant.status !== 'active') {
    throw unprocessable(`The managed tenant ${tenant.domain} is suspended.`, {
      errors: [{ field, message: 'names a suspended managed tenant' }],
    });
  }
  if (!(await deps.directories.hasEnabledConnector(tenant.id))) {
    throw unprocessable(`The managed tenant ${tenant.domain} has no enabled connector to its directory.`, {
      errors: [{ field, message: 'names a managed tenant without an enabled connector' }],
    });
  }
  return tenant;
}

/** Onboarding as a kind of run: its table, its checks, its steps. */
export function onboardingKind(deps: RunKindDeps): RunKind<OnboardingRecord, CreateOnboardingBody, NewOnboarding> {
  return {
    name: 'onboarding',
    table: {
      table: 'onboardings',
      taskKey: 'onboarding_id',
      // One open onboarding per e-mail: the unique key holds even when two requests race.
      openColumn: 'open_email',
      openIndex: 'onboardings_owner_tenant_id_open_email_key',
      columnsOf: (input) => ({
        managed_tenant_id: input.managedTenantId,
        first_name: input.firstName,
        last_name: input.lastName,
        email: input.email,
        department: input.department,
        manager_id: input.managerId,
        manager_email: input.managerEmail,
        job_title: input.jobTitle,
        start_date: input.startDate,
        bundles: input.bundles,
        laptop: input.laptop,
        badge: input.badge,
        phone_extension: input.phoneExtension,
      }),
      toRun: (row: Selectable<Onboarding>, tasks) => ({
        ...runColumnsOf(row, tasks),
        status: row.status,
        managedTenantId: row.managed_tenant_id,
        firstName: row.first_name,
        lastName: row.last_name,
        email: row.email,
        department: row.department,
        managerId: row.manager_id,
        managerEmail: row.manager_email,
        jobTitle: row.job_title,
        startDate: row.start_date,
        bundles: row.bundles,
        laptop: row.laptop,
        badge: row.badge,
        phoneExtension: row.phone_extension,
        directoryUserId: row.directory_user_id,
      }),
    },
    steps: onboardingSteps(deps),
    json: onboardingJson,

    async prepare(ownerTenantId, body, now) {
      const startDate = runDate('start_date', body.start_date, now);
      const email = body.email.toLowerCase();
      const tenant = await directoryTenantFor(deps, ownerTenantId, email, body.tenant_id);
      const manager = await activeDeskUser(deps.desk, ownerTenantId, body.manager_id);
      if (!manager) {
        throw unprocessable(`manager_id ${body.manager_id} is not an active desk user of your tenant.`, {
          errors: [{ field: 'manager_id', message: 'does not name an active desk user of your tenant' }],
        });
      }
      return {
        managedTenantId: tenant.id,
        firstName: body.first_name,
        lastName: body.last_name,
        email,
        department: body.department,
        managerId: body.manager_id,
        managerEmail: manager.email || null,
        jobTitle: body.job_title ?? null,
        startDate,
        bundles: body.bundles,
        laptop: body.physical.laptop,
        badge: body.physical.badge,
        phoneExtension: body.physical.phone_extension,
      };
    },

    openKey: (run) => run.email,
    openConflict: (run) =>
      conflict(`An onboarding of ${run.email} is already scheduled or in progress.`, {
        errors: [{ field: 'email', message: 'is already being onboarded' }],
      }),

    cancel: {
      // Only a staged onboarding whose start date is still ahead, and not while its account is being made.
      refusal(run) {
        const activation = run.tasks.find((task) => task.name === 'activate_account');
        if (
          !isStaged(run) ||
          !activation ||
          activation.finishedAt !== null ||
          (run.status !== 'scheduled' && run.status !== 'in_progress')
        ) {
          return `The onboarding is ${run.status}: only a staged onboarding (start_date still ahead, account not yet activated) can be cancelled.`;
        }
        if (run.status === 'in_progress' && run.tasks.some((task) => task !== activation && task.finishedAt === null)) {
          return 'The staged account is still being prepared: cancel once its first tasks have finished.';
        }
        return null;
      },
      // Nobody starts: the equipment ticket is resolved (saying why), then the staged account goes.
      // The ticket first: should the directory then fail, a resolved ticket is reopened in a click,
      // and the cancel tried again finds it resolved and goes on.
      async undo(run) {
        try {
          await resolveEquipmentTicket(deps.desk, run);
        } catch (error) {
          if (!isDeskError(error)) throw error;
          const ticket = equipmentTicketOf(run);
          throw new AppError(
            503,
            `The helpdesk could not resolve the equipment ticket #${ticket?.ticket_number}: ${error.message}. Nothing was cancelled; try again.`,
            {
              code: 'desk-unavailable',
              title: 'Helpdesk unavailable',
              headers: error.retryable ? { 'Retry-After': '30' } : {},
              cause: error,
            },
          );
        }
        if (!run.directoryUserId) return;
        try {
          const directory = await deps.directories.open(run.managedTenantId);
          await directory.deleteUser(run.directoryUserId);
        } catch (error) {
          const retryable = deps.directories.isRetryable(error);
          throw new AppError(
            503,
            `The directory could not delete the staged account ${run.email}: ${(error as Error).message}. Nothing was cancelled; try again.`,
            {
              code: 'directory-unavailable',
              title: 'Directory unavailable',
              headers: retryable ? { 'Retry-After': '30' } : {},
              cause: error,
            },
          );
        }
      },
      detail(run) {
        const ticket = equipmentTicketOf(run);
        const undone = [
          ...(ticket ? [`the equipment ticket #${ticket.ticket_number} is resolved in desk`] : []),
          ...(run.directoryUserId ? ['the staged account was deleted from the directory'] : []),
        ];
        return `Cancelled before it was due${undone.length ? `; ${undone.join(' and ')}` : ''}.`;
      },
    },
  };
}
