import type { Logger } from '@msp/http';
import { isDeskError, type DeskClient } from '../desk/desk-client';
import type { Directories, Directory } from '../runs/directory';
import type { RunTenant, RunTenantsRepository } from '../runs/managed-tenants.repository';
import type { RunTaskRecord, RunTasksRepository } from '../runs/run-tasks.repository';
import { finalStatus, isUnfinished, runTask, TaskFailure, type TaskOutcome, type TaskPolicy } from '../runs/run-tasks';
import type { OffboardingTaskName } from './offboarding.schemas';
import type { OffboardingRecord, OffboardingsRepository } from './offboardings.repository';
import { recordOffboardingEnd } from './offboardings.service';

export interface OffboardingRunnerDeps {
  offboardings: OffboardingsRepository;
  tasks: RunTasksRepository;
  tenants: RunTenantsRepository;
  directories: Directories;
  desk: DeskClient;
  logger: Logger;
  maxAttempts: number;
  /** The clock (tests of due times pass their own). */
  now?: () => Date;
}

/** Tickets still being worked on, in desk's words. */
const WORKED_ON = ['open', 'in_progress', 'pending'] as const;

/**
 * Executes the offboarding's tasks that are due, in order. A job that arrives early, twice, or for
 * a cancelled run does nothing: the run's rows decide, not the job.
 */
export function createOffboardingRunner(deps: OffboardingRunnerDeps) {
  const { offboardings, tasks, tenants, directories, desk, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const policy: TaskPolicy = {
    maxAttempts: deps.maxAttempts,
    isRetryable: (error) => (isDeskError(error) ? error.retryable : directories.isRetryable(error)),
    logger,
  };

  async function tenantOf(run: OffboardingRecord): Promise<RunTenant> {
    const domain = run.email.slice(run.email.lastIndexOf('@') + 1);
    const tenant = run.managedTenantId ? await tenants.findById(run.ownerTenantId, run.managedTenantId) : await tenants.findByDomain(run.ownerTenantId, domain);
    if (!tenant) throw new TaskFailure(`None of your managed tenants has the domain ${domain}, so the directory account of ${run.email} cannot be reached.`);
    if (!run.managedTenantId) {
      await offboardings.setManagedTenant(run.id, tenant.id);
      run.managedTenantId = tenant.id;
    }
    return tenant;
  }

  async function directoryAccount(run: OffboardingRecord): Promise<{ directory: Directory; userId: string }> {
    const tenant = await tenantOf(run);
    const directory = await directories.open(tenant.id);
    if (run.directoryUserId) return { directory, userId: run.directoryUserId };
    const account = await directory.findUserByUserName(run.email);
    if (!account) throw new TaskFailure(`The directory of ${tenant.domain} has no account with userName ${run.email}.`);
    await offboardings.setDirectoryUserId(run.id, account.id);
    run.directoryUserId = account.id;
    return { directory, userId: account.id };
  }

  const steps: Record<OffboardingTaskName, (run: OffboardingRecord) => Promise<TaskOutcome>> = {
    async reassign_tickets(run) {
      const moved: number[] = [];
      for (const status of WORKED_ON) {
        for (const ticket of await desk.listTickets(run.ownerTenantId, { assigneeId: run.userId, status })) {
          await desk.updateTicket(run.ownerTenantId, ticket.id, { assignee_id: run.successorId });
          moved.push(ticket.number);
        }
      }
      moved.sort((a, b) => a - b);
      return {
        detail: moved.length ? `Reassigned ${moved.length} ticket(s) to the successor: ${moved.map((n) => `#${n}`).join(', ')}.` : 'No open tickets to reassign.',
        result: { reassigned: moved },
      };
    },

    async disable_account(run) {
      const { directory, userId } = await directoryAccount(run);
      await directory.deactivateUser(userId);
      return { detail: `Disabled ${run.email} in the directory (id ${userId}).`, result: { directory_user_id: userId } };
    },

    async delegate_mailbox(run) {
      const tenant = await tenantOf(run);
      const successor = await desk.getUser(run.ownerTenantId, run.successorId);
      const to = successor ? `${successor.name} <${successor.email}>` : `desk user ${run.successorId}`;
      const ticket = await desk.createTicket(run.ownerTenantId, {
        title: `Delegate the mailbox of ${run.email} to ${successor?.email ?? run.successorId}`,
        description: [
          `${run.email} left on ${run.lastDay.toISOString().slice(0, 10)}.`,
          `Delegate the mailbox to ${to} (SCIM cannot express mailbox delegation).`,
          `Keep it ${run.mailboxRetentionDays} day(s); link deletes the account afterwards.`,
          `Opened by link's offboarding ${run.id}.`,
        ].join('\n'),
        category: 'email',
        client_id: tenant.clientId,
      });
      return { detail: `Opened desk ticket #${ticket.number} to delegate the mailbox.`, result: { ticket_id: ticket.id, ticket_number: ticket.number } };
    },

    async delete_account(run) {
      const { directory, userId } = await directoryAccount(run);
      const deleted = await directory.deleteUser(userId);
      return { detail: deleted ? `Deleted ${run.email} from the directory.` : `${run.email} was already gone from the directory.`, result: { directory_user_id: userId } };
    },
  };

  return async function runOffboarding(runId: string): Promise<void> {
    const run = await offboardings.findForRun(runId);
    if (!run || (run.status !== 'scheduled' && run.status !== 'in_progress')) return;
    const due = (task: RunTaskRecord) => isUnfinished(task) && task.dueAt !== null && task.dueAt.getTime() <= now().getTime();
    if (!run.tasks.some(due)) return;
    // Lost to a cancel that came first: nothing is touched.
    if (!(await offboardings.markStarted(runId))) return;
    for (const task of run.tasks) {
      if (!due(task)) continue;
      await runTask(tasks, task, () => steps[task.name as OffboardingTaskName](run), policy);
    }
    const after = await offboardings.findForRun(runId);
    if (after!.tasks.some(isUnfinished)) return;
    await offboardings.finish(runId, after!.tasks.some((task) => task.status === 'succeeded') ? finalStatus(after!.tasks) : 'failed', recordOffboardingEnd);
  };
}
