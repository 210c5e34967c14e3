import { domainOf, personAccount } from '../runs/person-account';
import { deskClientProblems, probe, type StepPreview, type StepProblem } from '../runs/run-preview';
import type { RunKindDeps, RunRecord, RunStep } from '../runs/run-kind';
import type { RunTaskRecord } from '../runs/run-tasks.repository';
import { runTaskIdempotencyKey, type TaskOutcome } from '../runs/run-tasks';
import type { OffboardingStatus, OffboardingTaskName } from './offboarding.schemas';

export interface OffboardingRecord extends RunRecord {
  userId: string;
  successorId: string;
  email: string;
  managedTenantId: string | null;
  lastDay: Date;
  mailboxRetentionDays: number;
  status: OffboardingStatus;
  directoryUserId: string | null;
}

/** The columns of a new offboarding (the checked request). */
export type NewOffboarding = Pick<OffboardingRecord, 'userId' | 'successorId' | 'email' | 'managedTenantId' | 'lastDay' | 'mailboxRetentionDays'>;

const DAY_MS = 86_400_000;

/** Tickets still being worked on, in desk's words. */
const WORKED_ON = ['open', 'in_progress', 'pending'] as const;

/**
 * An offboarding's steps: the first three due when last_day has ended (midnight UTC after it),
 * the deletion `mailbox_retention_days` later; a time already past means now.
 */
export function offboardingSteps(deps: RunKindDeps<OffboardingRecord>): RunStep<OffboardingRecord, NewOffboarding>[] {
  const { desk } = deps;
  const leave = (input: NewOffboarding, now: Date) => new Date(Math.max(input.lastDay.getTime() + DAY_MS, now.getTime()));
  const remove = (input: NewOffboarding, now: Date) => new Date(Math.max(input.lastDay.getTime() + DAY_MS + input.mailboxRetentionDays * DAY_MS, now.getTime()));

  const { tenantOf, directoryAccount, previewAccount } = personAccount(deps);

  const steps: Record<OffboardingTaskName, (run: OffboardingRecord, task: RunTaskRecord) => Promise<TaskOutcome>> = {
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

    async delegate_mailbox(run, task) {
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
      }, { idempotencyKey: runTaskIdempotencyKey(task) });
      return { detail: `Opened desk ticket #${ticket.number} to delegate the mailbox.`, result: { ticket_id: ticket.id, ticket_number: ticket.number } };
    },

    async delete_account(run) {
      const { directory, userId } = await directoryAccount(run);
      const deleted = await directory.deleteUser(userId);
      return { detail: deleted ? `Deleted ${run.email} from the directory.` : `${run.email} was already gone from the directory.`, result: { directory_user_id: userId } };
    },
  };

  /** The dry run of each step: reads of the directory and desk only. */
  const previews: Record<OffboardingTaskName, (run: OffboardingRecord) => Promise<StepPreview>> = {
    async reassign_tickets(run) {
      const problems: StepProblem[] = [];
      let count = 0;
      for (const status of WORKED_ON) count += (await probe(problems, 'desk_refusing', () => desk.listTickets(run.ownerTenantId, { assigneeId: run.userId, status })))?.length ?? 0;
      return { plan: `reassign ${count} open ticket(s) of ${run.email} to the successor`, problems };
    },
    async disable_account(run) {
      const problems: StepProblem[] = [];
      await previewAccount(run, problems);
      return { plan: `disable ${run.email} in ${domainOf(run.email)}'s directory`, problems };
    },
    async delegate_mailbox(run) {
      const problems: StepProblem[] = [];
      const tenant = await probe(problems, 'tenant_missing', () => tenantOf(run, { dryRun: true }));
      if (tenant) await deskClientProblems(problems, desk, run.ownerTenantId, tenant.clientId);
      return { plan: `open an email ticket in desk to delegate the mailbox of ${run.email} to the successor`, problems };
    },
    // Its account problems are disable_account's: not listed twice.
    async delete_account(run) {
      return { plan: `delete ${run.email} from ${domainOf(run.email)}'s directory after ${run.mailboxRetentionDays} day(s)`, problems: [] };
    },
  };

  const step = (name: OffboardingTaskName, due: RunStep<OffboardingRecord, NewOffboarding>['due']): RunStep<OffboardingRecord, NewOffboarding> => ({
    name,
    due,
    execute: (run, task) => steps[name](run, task),
    preview: previews[name],
  });
  return [step('reassign_tickets', leave), step('disable_account', leave), step('delegate_mailbox', leave), step('delete_account', remove)];
}
