import { domainOf, personAccount } from '../runs/person-account';
import { deskClientProblems, probe, type StepPreview, type StepProblem } from '../runs/run-preview';
import type { RunKindDeps, RunRecord, RunStep } from '../runs/run-kind';
import type { RunTaskRecord } from '../runs/run-tasks.repository';
import { startOfDay } from '../runs/run-dates';
import { runTaskIdempotencyKey, type TaskOutcome } from '../runs/run-tasks';
import type { OffboardingStatus, OffboardingTaskName } from './offboarding.schemas';

export interface OffboardingRecord extends RunRecord {
  userId: string;
  successorId: string;
  email: string;
  managedTenantId: string | null;
  /** YYYY-MM-DD. */
  lastDay: string;
  mailboxRetentionDays: number;
  status: OffboardingStatus;
  directoryUserId: string | null;
}

/** The columns of a new offboarding (the checked request). */
export type NewOffboarding = Pick<
  OffboardingRecord,
  'userId' | 'successorId' | 'email' | 'managedTenantId' | 'lastDay' | 'mailboxRetentionDays'
>;

const DAY_MS = 86_400_000;

/** Tickets still being worked on, in desk's words. */
const WORKED_ON = ['open', 'in_progress', 'pending'] as const;

/**
 * An offboarding's steps: all but the deletion due when last_day has ended (midnight UTC after
 * it), the deletion `mailbox_retention_days` later; a time already past means now.
 */
export function offboardingSteps(deps: RunKindDeps): RunStep<OffboardingRecord, NewOffboarding>[] {
  const { desk } = deps;
  const afterLastDay = (input: NewOffboarding) => startOfDay(input.lastDay).getTime() + DAY_MS;
  const leave = (input: NewOffboarding, now: Date) => new Date(Math.max(afterLastDay(input), now.getTime()));
  const remove = (input: NewOffboarding, now: Date) =>
    new Date(Math.max(afterLastDay(input) + input.mailboxRetentionDays * DAY_MS, now.getTime()));

  const { tenantOf, directoryAccount, previewAccount } = personAccount(deps);

  /** The leaver's tickets still being worked on, by number. */
  async function workedOn(run: OffboardingRecord) {
    const tickets = [];
    for (const status of WORKED_ON)
      tickets.push(...(await desk.listTickets(run.ownerTenantId, { assigneeId: run.userId, status })));
    return tickets.sort((a, b) => a.number - b.number);
  }
  const numbers = (list: { number: number }[]) => list.map((ticket) => `#${ticket.number}`).join(', ');

  const steps: Record<OffboardingTaskName, (run: OffboardingRecord, task: RunTaskRecord) => Promise<TaskOutcome>> = {
    async reassign_tickets(run) {
      const moved = await workedOn(run);
      for (const ticket of moved)
        await desk.updateTicket(run.ownerTenantId, ticket.id, { assignee_id: run.successorId });
      return {
        detail: moved.length
          ? `Reassigned ${moved.length} ticket(s) to the successor: ${numbers(moved)}.`
          : 'No open tickets to reassign.',
        result: { reassigned: moved.map((ticket) => ticket.number) },
      };
    },

    // After reassign_tickets: desk unassigns the tickets of a user it deactivates, so a ticket still
    // assigned now (the reassignment failed, or one came in since) would lose its owner. Such a
    // ticket keeps the user active until it is dealt with and the offboarding retried.
    async deactivate_user(run) {
      const left = await workedOn(run);
      if (left.length) {
        return {
          status: 'failed',
          detail:
            `Not deactivated: ${left.length} ticket(s) still assigned to ${run.email} (${numbers(left)}) ` +
            'would be left unassigned. Reassign them, then retry the offboarding.',
          result: { user_id: run.userId, deactivated: false, still_assigned: left.map((ticket) => ticket.number) },
        };
      }
      const deactivated = await desk.deactivateUser(run.ownerTenantId, run.userId);
      return {
        detail: deactivated ? `Deactivated ${run.email} in desk.` : `${run.email} was already inactive in desk.`,
        result: { user_id: run.userId, deactivated },
      };
    },

    async disable_account(run) {
      const { directory, userId } = await directoryAccount(run);
      const outcome = (await directory.deactivateUser(userId, { note: `Left ${run.lastDay}` })) || {};
      const removed = outcome.removedGroups ?? [];
      const extra = [
        removed.length ? ` Removed from ${removed.join(', ')}.` : '',
        outcome.movedTo ? ` Moved to ${outcome.movedTo}.` : '',
      ].join('');
      return {
        detail: `Disabled ${run.email} in the directory (id ${userId}).${extra}`,
        result: {
          directory_user_id: userId,
          ...(outcome.removedGroups ? { removed_groups: removed } : {}),
          ...(outcome.movedTo ? { moved_to: outcome.movedTo } : {}),
        },
      };
    },

    async delegate_mailbox(run, task) {
      const tenant = await tenantOf(run);
      const successor = await desk.getUser(run.ownerTenantId, run.successorId);
      const to = successor ? `${successor.name} <${successor.email}>` : `desk user ${run.successorId}`;
      const ticket = await desk.createTicket(
        run.ownerTenantId,
        {
          title: `Delegate the mailbox of ${run.email} to ${successor?.email ?? run.successorId}`,
          description: [
            `${run.email} left on ${run.lastDay}.`,
            `Delegate the mailbox to ${to} (SCIM cannot express mailbox delegation).`,
            `Keep it ${run.mailboxRetentionDays} day(s); link deletes the account afterwards.`,
            `Opened by link's offboarding ${run.id}.`,
          ].join('\n'),
          category: 'email',
          client_id: tenant.clientId,
        },
        { idempotencyKey: runTaskIdempotencyKey(task) },
      );
      return {
        detail: `Opened desk ticket #${ticket.number} to delegate the mailbox.`,
        result: { ticket_id: ticket.id, ticket_number: ticket.number },
      };
    },

    async delete_account(run) {
      const { directory, userId } = await directoryAccount(run);
      const deleted = await directory.deleteUser(userId);
      return {
        detail: deleted
          ? `Deleted ${run.email} from the directory.`
          : `${run.email} was already gone from the directory.`,
        result: { directory_user_id: userId },
      };
    },
  };

  /** The dry run of each step: reads of the directory and desk only. */
  const previews: Record<OffboardingTaskName, (run: OffboardingRecord) => Promise<StepPreview>> = {
    async reassign_tickets(run) {
      const problems: StepProblem[] = [];
      let count = 0;
      for (const status of WORKED_ON)
        count +=
          (
            await probe(problems, 'desk_refusing', () =>
              desk.listTickets(run.ownerTenantId, { assigneeId: run.userId, status }),
            )
          )?.length ?? 0;
      return { plan: `reassign ${count} open ticket(s) of ${run.email} to the successor`, problems };
    },
    // The leaver was checked active when the run was prepared; its tickets are reassign_tickets' problems.
    async deactivate_user(run) {
      return { plan: `deactivate the desk user ${run.email} once their tickets are reassigned`, problems: [] };
    },
    async disable_account(run) {
      const problems: StepProblem[] = [];
      const found = await previewAccount(run, problems);
      const describe = found?.directory.describe;
      const dn = describe
        ? await probe(problems, 'directory_unreachable', () => describe.userName(found!.userId))
        : null;
      if (describe && dn)
        return {
          plan: `disable ${dn} in ${describe.where}, remove it from its groups and note "Left ${run.lastDay}"`,
          problems,
        };
      return { plan: `disable ${run.email} in ${domainOf(run.email)}'s directory`, problems };
    },
    async delegate_mailbox(run) {
      const problems: StepProblem[] = [];
      const tenant = await probe(problems, 'tenant_missing', () => tenantOf(run, { dryRun: true }));
      if (tenant) await deskClientProblems(problems, desk, run.ownerTenantId, tenant.clientId);
      return {
        plan: `open an email ticket in desk to delegate the mailbox of ${run.email} to the successor`,
        problems,
      };
    },
    // Its account problems are disable_account's: not listed twice.
    async delete_account(run) {
      return {
        plan: `delete ${run.email} from ${domainOf(run.email)}'s directory after ${run.mailboxRetentionDays} day(s)`,
        problems: [],
      };
    },
  };

  const step = (
    name: OffboardingTaskName,
    due: RunStep<OffboardingRecord, NewOffboarding>['due'],
  ): RunStep<OffboardingRecord, NewOffboarding> => ({
    name,
    due,
    execute: (run, task) => steps[name](run, task),
    preview: previews[name],
  });
  return [
    step('reassign_tickets', leave),
    step('deactivate_user', leave),
    step('disable_account', leave),
    step('delegate_mailbox', leave),
    step('delete_account', remove),
  ];
}
