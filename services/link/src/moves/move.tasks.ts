import { domainOf, personAccount } from '../runs/person-account';
import {
  deskClientProblems,
  groupPlans,
  missingGroups,
  problem,
  probe,
  type StepPreview,
  type StepProblem,
} from '../runs/run-preview';
import type { RunKindDeps, RunRecord, RunStep } from '../runs/run-kind';
import type { RunTaskRecord } from '../runs/run-tasks.repository';
import { startOfDay } from '../runs/run-dates';
import { runTaskIdempotencyKey, TaskFailure, type TaskOutcome } from '../runs/run-tasks';
import type { MoveStatus, MoveTaskName } from './move.schemas';

export interface MovePhysical {
  laptop?: string;
  badge?: boolean;
  phone_extension?: boolean;
  notes?: string;
}

export interface MoveRecord extends RunRecord {
  userId: string;
  email: string;
  managedTenantId: string | null;
  /** YYYY-MM-DD. */
  effectiveDate: string;
  department: string | null;
  managerId: string | null;
  /** The manager's e-mail as desk had it at creation: their directory account's userName. */
  managerEmail: string | null;
  jobTitle: string | null;
  bundlesAdd: string[];
  bundlesRemove: string[];
  physical: MovePhysical | null;
  status: MoveStatus;
  directoryUserId: string | null;
}

/** The columns of a new move (the checked request). */
// `physical` left out rather than null: a JSON column is only left empty by omission.
export type NewMove = Omit<MoveRecord, keyof RunRecord | 'directoryUserId' | 'physical'> & { physical?: MovePhysical };

/** The start of the effective date (UTC), or now when that has passed. */
export const moveDue = (input: Pick<NewMove, 'effectiveDate'>, now: Date) =>
  new Date(Math.max(startOfDay(input.effectiveDate).getTime(), now.getTime()));

/**
 * A move's steps, all due at the start of the effective date: the account's profile, its groups,
 * and (with `physical`) a desk ticket for the equipment.
 */
export function moveSteps(deps: RunKindDeps): RunStep<MoveRecord, NewMove>[] {
  const { desk } = deps;
  const { tenantOf, directoryAccount, previewAccount } = personAccount(deps);

  const steps: Record<MoveTaskName, (run: MoveRecord, task: RunTaskRecord) => Promise<TaskOutcome>> = {
    async update_account(run) {
      const { directory, userId, tenant } = await directoryAccount(run);
      let managerId: string | undefined;
      if (run.managerEmail) {
        const manager = await directory.findUserByUserName(run.managerEmail);
        if (!manager)
          throw new TaskFailure(
            `The directory of ${tenant.domain} has no account with userName ${run.managerEmail} (the new manager): nothing was changed.`,
          );
        managerId = manager.id;
      }
      const profile = { title: run.jobTitle ?? undefined, department: run.department ?? undefined, managerId };
      const changed = Object.entries({
        title: profile.title,
        department: profile.department,
        manager: profile.managerId,
      })
        .filter(([, value]) => value !== undefined)
        .map(([key]) => key);
      if (changed.length === 0)
        return { detail: 'No title, department or manager to change.', result: { directory_user_id: userId, changed } };
      await directory.updateUserProfile(userId, profile);
      return {
        detail: `Updated ${changed.join(', ')} of ${run.email} in the directory (id ${userId}).`,
        result: { directory_user_id: userId, changed, ...(managerId ? { manager_directory_id: managerId } : {}) },
      };
    },

    async change_bundles(run) {
      if (run.bundlesAdd.length === 0 && run.bundlesRemove.length === 0)
        return { detail: 'No bundles to change.', result: { added: [], removed: [], missing: [] } };
      const { directory, userId } = await directoryAccount(run);
      const added: string[] = [];
      const removed: string[] = [];
      const missing: string[] = [];
      for (const [names, done, change] of [
        [run.bundlesAdd, added, (groupId: string) => directory.addGroupMember(groupId, userId)],
        [run.bundlesRemove, removed, (groupId: string) => directory.removeGroupMember(groupId, userId)],
      ] as const) {
        for (const name of names) {
          const group = await directory.findGroupByDisplayName(name);
          if (!group) {
            missing.push(name);
            continue;
          }
          await change(group.id);
          done.push(name);
        }
      }
      const result = { added, removed, missing };
      const did = [
        added.length ? `Added to ${added.join(', ')}.` : '',
        removed.length ? `Removed from ${removed.join(', ')}.` : '',
      ]
        .filter(Boolean)
        .join(' ');
      if (missing.length) {
        // Reported, not retried: the rest of the groups were changed all the same.
        return {
          status: 'failed',
          detail: `The directory has no group named ${missing.map((name) => `"${name}"`).join(', ')}: not changed. ${did || 'No group was changed.'}`,
          result,
        };
      }
      return { detail: did, result };
    },

    async equipment_ticket(run, task) {
      const tenant = await tenantOf(run);
      const physical = run.physical ?? {};
      const ticket = await desk.createTicket(
        run.ownerTenantId,
        {
          title: `Equipment for the move of ${run.email} on ${run.effectiveDate}`,
          description: [
            `${run.email} moves on ${run.effectiveDate}.`,
            ...(run.jobTitle ? [`New title: ${run.jobTitle}.`] : []),
            ...(run.department ? [`New department: ${run.department}.`] : []),
            ...(physical.laptop ? [`Laptop: ${physical.laptop}.`] : []),
            ...(physical.badge !== undefined ? [`Badge: ${physical.badge ? 'to change' : 'unchanged'}.`] : []),
            ...(physical.phone_extension !== undefined
              ? [`Phone extension: ${physical.phone_extension ? 'to move' : 'unchanged'}.`]
              : []),
            ...(physical.notes ? [`Notes: ${physical.notes}`] : []),
            `Opened by link's move ${run.id}.`,
          ].join('\n'),
          category: 'hardware',
          client_id: tenant.clientId,
        },
        { idempotencyKey: runTaskIdempotencyKey(task) },
      );
      return {
        detail: `Opened desk ticket #${ticket.number}.`,
        result: { ticket_id: ticket.id, ticket_number: ticket.number },
      };
    },
  };

  /** The dry run of each step: reads of the directory and desk only. */
  const previews: Record<MoveTaskName, (run: MoveRecord) => Promise<StepPreview>> = {
    async update_account(run) {
      const problems: StepProblem[] = [];
      const found = await previewAccount(run, problems);
      if (found && run.managerEmail) {
        const manager = await probe(problems, 'directory_unreachable', () =>
          found.directory.findUserByUserName(run.managerEmail!),
        );
        if (!manager && !problems.length)
          problems.push(
            problem(
              'account_not_found',
              `The directory of ${found.tenant.domain} has no account with userName ${run.managerEmail} (the new manager).`,
            ),
          );
      }
      const changes = [
        ...(run.jobTitle ? [`title "${run.jobTitle}"`] : []),
        ...(run.department ? [`department "${run.department}"`] : []),
        ...(run.managerEmail ? [`manager ${run.managerEmail}`] : []),
      ];
      const describe = found?.directory.describe;
      const dn =
        describe && changes.length
          ? await probe(problems, 'directory_unreachable', () => describe.userName(found!.userId))
          : null;
      if (describe && dn) {
        const ou = run.department ? describe.departmentOu(run.department) : null;
        return {
          plan: `set ${changes.join(', ')} of ${dn} in ${describe.where}${ou ? `, and move it to ${ou}` : ''}`,
          problems,
        };
      }
      return {
        plan: changes.length
          ? `set ${changes.join(', ')} of ${run.email} in ${domainOf(run.email)}'s directory`
          : `change nothing of ${run.email}'s profile`,
        problems,
      };
    },
    async change_bundles(run) {
      const problems: StepProblem[] = [];
      const plan = [
        ...run.bundlesAdd.map((name) => `add to group ${name}`),
        ...run.bundlesRemove.map((name) => `remove from group ${name}`),
      ].join(', ');
      if (!plan) return { plan: 'change no groups', problems };
      const found = await previewAccount(run, problems);
      if (found?.directory.describe) {
        const changes: [string, string][] = [
          ...run.bundlesAdd.map((name): [string, string] => ['add to', name]),
          ...run.bundlesRemove.map((name): [string, string] => ['remove from', name]),
        ];
        return { plan: await groupPlans(problems, found.directory.describe, changes), problems };
      }
      if (found) await missingGroups(problems, found.directory, [...run.bundlesAdd, ...run.bundlesRemove]);
      return { plan, problems };
    },
    async equipment_ticket(run) {
      const problems: StepProblem[] = [];
      const tenant = await probe(problems, 'tenant_missing', () => tenantOf(run, { dryRun: true }));
      if (tenant) await deskClientProblems(problems, desk, run.ownerTenantId, tenant.clientId);
      return { plan: `open a hardware ticket in desk for the move of ${run.email}`, problems };
    },
  };

  return [
    { name: 'update_account', due: moveDue, execute: steps.update_account, preview: previews.update_account },
    { name: 'change_bundles', due: moveDue, execute: steps.change_bundles, preview: previews.change_bundles },
    {
      name: 'equipment_ticket',
      due: (input, now) => (input.physical ? moveDue(input, now) : null),
      execute: steps.equipment_ticket,
      preview: previews.equipment_ticket,
    },
  ];
}
