import { isDeskError, type DeskClient } from '../desk/desk-client';
import type { RunKindDeps, RunRecord, RunStep } from '../runs/run-kind';
import type { RunTaskRecord } from '../runs/run-tasks.repository';
import {
  deskClientProblems,
  groupPlans,
  missingGroups,
  problem,
  probe,
  type StepPreview,
  type StepProblem,
} from '../runs/run-preview';
import { startOfDay } from '../runs/run-dates';
import { runTaskIdempotencyKey, TaskFailure, type TaskOutcome } from '../runs/run-tasks';
import type { OnboardingStatus, OnboardingTaskName } from './onboarding.schemas';

export interface OnboardingRecord extends RunRecord {
  managedTenantId: string;
  status: OnboardingStatus;
  firstName: string;
  lastName: string;
  email: string;
  department: string;
  managerId: string;
  /** The manager's e-mail as desk had it at creation: their directory account's userName. */
  managerEmail: string | null;
  jobTitle: string | null;
  /** YYYY-MM-DD. */
  startDate: string;
  bundles: string[];
  laptop: string;
  badge: boolean;
  phoneExtension: boolean;
  directoryUserId: string | null;
}

/** The columns of a new onboarding (the checked request). */
export type NewOnboarding = Omit<OnboardingRecord, keyof RunRecord | 'directoryUserId'>;

const needed = (yes: boolean) => (yes ? 'needed' : 'not needed');

/** Whether the run is staged: its start date was ahead when it was created, so its account waits inactive. */
export const isStaged = (run: { tasks: { name: string }[] }) =>
  run.tasks.some((task) => task.name === 'activate_account');

/** The equipment ticket the run opened in desk, if it did. */
export function equipmentTicketOf(run: OnboardingRecord): { ticket_id: string; ticket_number: number } | null {
  const task = run.tasks.find((candidate) => candidate.name === 'equipment_ticket' && candidate.status === 'succeeded');
  return (task?.result as { ticket_id: string; ticket_number: number } | undefined) ?? null;
}

/** Tries of the resolve when someone else changes the ticket between its read and its change (412). */
const RESOLVE_TRIES = 3;

/**
 * When a staged onboarding is cancelled, nobody comes for the equipment: its ticket is resolved,
 * after an internal comment telling the technicians why. A ticket already resolved or closed (a
 * technician was quicker), or gone, is left as it is. The comment carries an Idempotency-Key of
 * the run, so a cancel tried again after an outage adds it once; the change carries the ETag of
 * the ticket as read (If-Match), so a technician's change in between is never overwritten: the
 * ticket is read again and decided on again.
 */
export async function resolveEquipmentTicket(desk: DeskClient, run: OnboardingRecord): Promise<void> {
  const ticket = equipmentTicketOf(run);
  if (!ticket) return;
  const done = (ticketStatus: string) => ticketStatus === 'resolved' || ticketStatus === 'closed';
  const first = await desk.getTicket(run.ownerTenantId, ticket.ticket_id);
  if (!first || done(first.ticket.status)) return;
  const name = `${run.firstName} ${run.lastName}`;
  await desk.commentOnTicket(
    run.ownerTenantId,
    ticket.ticket_id,
    {
      body:
        `The onboarding of ${name} <${run.email}>, due to start on ${run.startDate}, was cancelled before the ` +
        `start date (link's onboarding ${run.id}): the equipment is no longer needed, so link resolves this ticket.`,
      internal: true,
    },
    { idempotencyKey: `link-onboarding-cancel-${run.id}` },
  );
  for (let attempt = 1; ; attempt += 1) {
    const read = await desk.getTicket(run.ownerTenantId, ticket.ticket_id);
    if (!read || done(read.ticket.status)) return;
    try {
      await desk.updateTicket(run.ownerTenantId, ticket.ticket_id, { status: 'resolved' }, { ifMatch: read.etag });
      return;
    } catch (error) {
      if (!(isDeskError(error) && error.status === 412) || attempt >= RESOLVE_TRIES) throw error;
    }
  }
}

/**
 * An onboarding's steps and what each does. The first three are due as soon as the run is created
 * (the account must exist before the start date). When the start date is still ahead, the account
 * is made inactive (staged: licences and groups ready) and `activate_account` is due at the start
 * of the start date (UTC); otherwise that step is not part of the run.
 */
export function onboardingSteps(deps: RunKindDeps): RunStep<OnboardingRecord, NewOnboarding>[] {
  const { directories, desk, tenants, save } = deps;
  const now = (_input: NewOnboarding, at: Date) => at;

  const steps: Record<OnboardingTaskName, (run: OnboardingRecord, task: RunTaskRecord) => Promise<TaskOutcome>> = {
    async create_account(run, task) {
      const directory = await directories.open(run.managedTenantId);
      // A try that was cut off (a restart, a timeout) may have created the account already.
      const earlier = task.attempts > 1 ? await directory.findUserByUserName(run.email) : null;
      const user =
        earlier ??
        (await directory.createUser({
          userName: run.email,
          givenName: run.firstName,
          familyName: run.lastName,
          email: run.email,
          department: run.department,
          active: !isStaged(run),
          ...(run.jobTitle ? { title: run.jobTitle } : {}),
          ...(run.managerEmail ? { managerUserName: run.managerEmail } : {}),
        }));
      await save(run.id, { directoryUserId: user.id });
      if ('initialPasswordSealed' in user && user.initialPasswordSealed && user.userName)
        await deps.credentials?.store(run.id, user.userName, user.initialPasswordSealed);
      run.directoryUserId = user.id;
      const managerNote =
        'managerSet' in user && user.managerSet === false
          ? ` The manager ${run.managerEmail} has no account in the directory: set the manager by hand, or by a move once they have one.`
          : '';
      return {
        detail: `Created ${run.email} in the directory (id ${user.id}).${managerNote}`,
        result: { directory_user_id: user.id },
      };
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
          detail:
            `The directory has no group named ${names}: not assigned. ` +
            `${assigned.length ? `Assigned: ${assigned.join(', ')}.` : 'No bundle was assigned.'}`,
          result,
        };
      }
      return { detail: `Added to ${assigned.join(', ')}.`, result };
    },

    async equipment_ticket(run, task) {
      const tenant = await tenants.findById(run.ownerTenantId, run.managedTenantId);
      if (!tenant)
        throw new TaskFailure(
          'The managed tenant no longer exists, so there is no desk client to open the ticket for.',
        );
      const name = `${run.firstName} ${run.lastName}`;
      const ticket = await desk.createTicket(
        run.ownerTenantId,
        {
          title: `Equipment for ${name}, starting ${run.startDate}`,
          description: [
            `New employee: ${name} <${run.email}>, ${run.department}.`,
            `Start date: ${run.startDate}.`,
            `Laptop: ${run.laptop}.`,
            `Badge: ${needed(run.badge)}.`,
            `Phone extension: ${needed(run.phoneExtension)}.`,
            `Manager (desk user): ${run.managerId}.`,
            `Opened by link's onboarding ${run.id}.`,
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

    async activate_account(run) {
      if (!run.directoryUserId)
        throw new TaskFailure('The account was never created, so there is nothing to activate.');
      const directory = await directories.open(run.managedTenantId);
      await directory.activateUser(run.directoryUserId);
      return {
        detail: `Activated ${run.email} in the directory on ${run.startDate}.`,
        result: { directory_user_id: run.directoryUserId },
      };
    },
  };
  /** The dry run of each step: reads of the directory and desk only. */
  async function tenantAndDirectory(run: OnboardingRecord, problems: StepProblem[]) {
    const tenant = await tenants.findById(run.ownerTenantId, run.managedTenantId);
    const directory = await probe(problems, 'directory_unreachable', () => directories.open(run.managedTenantId));
    return { domain: tenant?.domain ?? 'the managed tenant', clientId: tenant?.clientId ?? null, directory };
  }
  const previews: Record<OnboardingTaskName, (run: OnboardingRecord) => Promise<StepPreview>> = {
    async create_account(run) {
      const problems: StepProblem[] = [];
      const { domain, directory } = await tenantAndDirectory(run, problems);
      const existing = directory
        ? await probe(problems, 'directory_unreachable', () => directory.findUserByUserName(run.email))
        : null;
      if (existing)
        problems.push(
          problem('account_exists', `The directory of ${domain} already has an account with userName ${run.email}.`),
        );
      const describe = directory?.describe;
      if (describe && !problems.some((p) => p.code !== 'account_exists')) {
        // The entry it would get, and whether the domain would take link's initial password.
        const dn = await probe(problems, 'directory_unreachable', () =>
          describe.newUserName({
            userName: run.email,
            givenName: run.firstName,
            familyName: run.lastName,
            email: run.email,
            department: run.department,
            active: !isStaged(run),
          }),
        );
        const refusal = dn ? await probe(problems, 'directory_unreachable', () => describe.passwordProblem()) : null;
        if (refusal) problems.push(problem('password_policy', refusal));
        if (dn)
          return {
            plan: `create ${dn} in ${describe.where}${isStaged(run) ? ` (disabled until ${run.startDate})` : ''}`,
            problems,
          };
      }
      return {
        plan: `create user ${run.email} in ${domain}'s directory${isStaged(run) ? ` (inactive until ${run.startDate})` : ''}`,
        problems,
      };
    },
    async assign_bundles(run) {
      const problems: StepProblem[] = [];
      if (run.bundles.length === 0) return { plan: 'assign no bundles', problems };
      const { directory } = await tenantAndDirectory(run, problems);
      if (directory?.describe)
        return {
          plan: await groupPlans(
            problems,
            directory.describe,
            run.bundles.map((name) => ['add to', name]),
          ),
          problems,
        };
      if (directory) await missingGroups(problems, directory, run.bundles);
      return { plan: run.bundles.map((name) => `add to group ${name}`).join(', '), problems };
    },
    async equipment_ticket(run) {
      const problems: StepProblem[] = [];
      const tenant = await tenants.findById(run.ownerTenantId, run.managedTenantId);
      if (tenant) await deskClientProblems(problems, desk, run.ownerTenantId, tenant.clientId);
      return {
        plan: `open a hardware ticket in desk for the equipment of ${run.firstName} ${run.lastName} (laptop ${run.laptop})`,
        problems,
      };
    },
    async activate_account(run) {
      return { plan: `activate ${run.email} in the directory on ${run.startDate}`, problems: [] };
    },
  };

  // A staged account is activated at the start of the start date (midnight UTC).
  const onStartDate = (input: NewOnboarding, at: Date) =>
    startOfDay(input.startDate).getTime() > at.getTime() ? startOfDay(input.startDate) : null;

  return [
    {
      name: 'create_account',
      preview: previews.create_account,
      due: now,
      execute: steps.create_account,
      skipRestOnFailure: 'Skipped: the account could not be created.',
    },
    { name: 'assign_bundles', preview: previews.assign_bundles, due: now, execute: steps.assign_bundles },
    { name: 'equipment_ticket', preview: previews.equipment_ticket, due: now, execute: steps.equipment_ticket },
    { name: 'activate_account', preview: previews.activate_account, due: onStartDate, execute: steps.activate_account },
  ];
}
