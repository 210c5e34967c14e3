import type { Logger } from '@msp/http';
import { isDeskError, type DeskClient } from '../desk/desk-client';
import type { Directories } from '../runs/directory';
import type { RunTenantsRepository } from '../runs/managed-tenants.repository';
import type { RunTaskRecord, RunTasksRepository } from '../runs/run-tasks.repository';
import { finalStatus, isUnfinished, runTask, TaskFailure, type TaskOutcome, type TaskPolicy } from '../runs/run-tasks';
import type { OnboardingTaskName } from './onboarding.schemas';
import type { OnboardingRecord, OnboardingsRepository } from './onboardings.repository';
import { recordOnboardingEnd } from './onboardings.service';

export interface OnboardingRunnerDeps {
  onboardings: OnboardingsRepository;
  tasks: RunTasksRepository;
  tenants: RunTenantsRepository;
  directories: Directories;
  desk: DeskClient;
  logger: Logger;
  /** Tries of one step through an outage (desk or directory) before it fails for good. */
  maxAttempts: number;
}

const dateOnly = (date: Date) => date.toISOString().slice(0, 10);
const needed = (yes: boolean) => (yes ? 'needed' : 'not needed');

/**
 * Executes an onboarding's steps in order, resuming after the last finished one: a retried or
 * duplicated job, or one picked up after a restart, never repeats a finished step.
 */
export function createOnboardingRunner(deps: OnboardingRunnerDeps) {
  const { onboardings, tasks, tenants, directories, desk, logger } = deps;
  const policy: TaskPolicy = {
    maxAttempts: deps.maxAttempts,
    isRetryable: (error) => (isDeskError(error) ? error.retryable : directories.isRetryable(error)),
    logger,
  };

  const steps: Record<OnboardingTaskName, (run: OnboardingRecord, task: RunTaskRecord) => Promise<TaskOutcome>> = {
    async create_account(run, task) {
      const directory = await directories.open(run.managedTenantId);
      // A try that was cut off (a restart, a timeout) may have created the account already.
      const earlier = task.attempts > 1 ? await directory.findUserByUserName(run.email) : null;
      const user =
        earlier ??
        (await directory.createUser({ userName: run.email, givenName: run.firstName, familyName: run.lastName, email: run.email, department: run.department }));
      await onboardings.setDirectoryUserId(run.id, user.id);
      run.directoryUserId = user.id;
      return { detail: `Created ${run.email} in the directory (id ${user.id}).`, result: { directory_user_id: user.id } };
    },

    async assign_bundles(run) {
      if (run.bundles.length === 0) return { detail: 'No bundles to assign.', result: { assigned: [], missing: [] } };
      const directory = await directories.open(run.managedTenantId);
      const assigned: string[] = [];
      const missing: string[] = [];
      for (const bundle of run.bundles) {
        const group = await directory.findGroupByDisplayName(bundle);
        if (!group) {
          missing.push(bundle);
          continue;
        }
        await directory.addGroupMember(group.id, run.directoryUserId!);
        assigned.push(bundle);
      }
      const result = { assigned, missing };
      if (missing.length) {
        const names = missing.map((name) => `"${name}"`).join(', ');
        return {
          status: 'failed',
          detail: `The directory has no group named ${names}: not assigned. ${assigned.length ? `Assigned: ${assigned.join(', ')}.` : 'No bundle was assigned.'}`,
          result,
        };
      }
      return { detail: `Added to ${assigned.join(', ')}.`, result };
    },

    async equipment_ticket(run) {
      const tenant = await tenants.findById(run.ownerTenantId, run.managedTenantId);
      if (!tenant) throw new TaskFailure('The managed tenant no longer exists, so there is no desk client to open the ticket for.');
      const name = `${run.firstName} ${run.lastName}`;
      const ticket = await desk.createTicket(run.ownerTenantId, {
        title: `Equipment for ${name}, starting ${dateOnly(run.startDate)}`,
        description: [
          `New employee: ${name} <${run.email}>, ${run.department}.`,
          `Start date: ${dateOnly(run.startDate)}.`,
          `Laptop: ${run.laptop}.`,
          `Badge: ${needed(run.badge)}.`,
          `Phone extension: ${needed(run.phoneExtension)}.`,
          `Manager (desk user): ${run.managerId}.`,
          `Opened by link's onboarding ${run.id}.`,
        ].join('\n'),
        category: 'hardware',
        client_id: tenant.clientId,
      });
      return { detail: `Opened desk ticket #${ticket.number}.`, result: { ticket_id: ticket.id, ticket_number: ticket.number } };
    },
  };

  return async function runOnboarding(runId: string): Promise<void> {
    const run = await onboardings.findForRun(runId);
    if (!run || (run.status !== 'scheduled' && run.status !== 'in_progress')) return;
    await onboardings.markStarted(runId);
    for (const task of run.tasks) {
      if (!isUnfinished(task)) continue;
      const step = steps[task.name as OnboardingTaskName];
      const outcome = await runTask(tasks, task, (current) => step(run, current), policy);
      if (task.name === 'create_account' && outcome === 'failed') {
        await tasks.skipRest({ onboardingId: runId }, task.position + 1, 'Skipped: the account could not be created.');
        await onboardings.finish(runId, 'failed', recordOnboardingEnd);
        return;
      }
    }
    const done = await onboardings.findForRun(runId);
    await onboardings.finish(runId, finalStatus(done!.tasks), recordOnboardingEnd);
  };
}
