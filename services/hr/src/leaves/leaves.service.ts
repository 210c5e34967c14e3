import {
  API_BASE_PATH,
  conflict,
  listWindow,
  notFound,
  transitionProblem,
  unprocessable,
  type FieldError,
  type PageRequest,
} from '@msp/http';
import { assertDayRange } from '../calendar';
import { leaveWorkingDays } from '../contracts/contract-rules';
import type { ContractsRepository } from '../contracts/contracts.repository';
import type { EmployeesRepository } from '../employees/employees.repository';
import type { LeaveAccountsService } from '../leave-accounts/leave-accounts.service';
import { hrEvents } from '../events/hr-events';
import { latestEndDate, MAX_LEAVE_YEARS } from './leave-span';
import { allowedTransitions, canTransition, isFinal, type LeaveStatus } from './leave-status';
import { leaveJson } from './leave.mapper';
import type { LeaveType } from './leave.schemas';
import type { LeaveFilter, LeaveRecord, LeavesRepository } from './leaves.repository';

const missing = (id: string) => notFound(`No leave ${id}.`);

export interface LeaveRequest {
  userId: string;
  type: LeaveType;
  startDate: string;
  endDate: string;
  note?: string;
}

function overlap(existing: LeaveRecord) {
  const range = `${existing.startDate} to ${existing.endDate}`;
  return conflict(
    `The leave overlaps the user's ${existing.status} ${existing.type} leave ${existing.id} (${range}).`,
    {
      errors: [{ field: 'start_date', message: `overlaps leave ${existing.id} (${range}, ${existing.status})` }],
      extensions: { existing_id: existing.id, existing_url: `${API_BASE_PATH}/leaves/${existing.id}` },
    },
  );
}

function illegalMove(leave: LeaveRecord, to: LeaveStatus) {
  const allowed = allowedTransitions(leave.status);
  const detail = isFinal(leave.status)
    ? `A ${leave.status} leave is final and cannot move to ${to}; request a new leave instead.`
    : `A leave cannot move from ${leave.status} to ${to}; allowed: ${allowed.join(', ')}.`;
  return transitionProblem(leave.status, allowed, detail);
}

export function createLeavesService(deps: {
  leaves: LeavesRepository;
  employees: EmployeesRepository;
  contracts: ContractsRepository;
  accounts: LeaveAccountsService;
}) {
  const { leaves, employees, contracts, accounts } = deps;

  return {
    list(tenantId: string, filter: LeaveFilter, page: PageRequest) {
      assertDayRange(filter);
      return leaves.list(tenantId, filter, listWindow(page));
    },

    async get(tenantId: string, id: string): Promise<LeaveRecord> {
      // Another tenant's leave is as unknown as a missing one: no existence leaks.
      const leave = await leaves.findById(tenantId, id);
      if (!leave) throw missing(id);
      return leave;
    },

    /** A new leave starts `requested`; it may not overlap the user's requested or approved leaves (a sick leave may overlap an approved vacation, §9 BUrlG). */
    async request(tenantId: string, input: LeaveRequest): Promise<LeaveRecord> {
      const errors: FieldError[] = [];
      if (!(await employees.isEmployee(tenantId, input.userId)))
        errors.push({ field: 'user_id', message: 'is not the user_id of an employee of your tenant' });
      // The dates are `YYYY-MM-DD`: text order is day order.
      if (input.endDate < input.startDate)
        errors.push({ field: 'end_date', message: `must not be before start_date (${input.startDate})` });
      if (errors.length > 0) {
        throw unprocessable(
          errors.length === 1 ? `${errors[0]!.field} ${errors[0]!.message}.` : 'The leave breaks 2 rules; see errors.',
          { errors },
        );
      }
      const latest = latestEndDate(input.startDate);
      if (input.endDate > latest) {
        throw unprocessable(
          `A leave spans at most ${MAX_LEAVE_YEARS} years (parental leave, the longest, ends by the child's third birthday, §15 (2) BEEG): ` +
            `from ${input.startDate}, end_date must be on or before ${latest}.`,
          {
            errors: [
              {
                field: 'end_date',
                message: `must be on or before ${latest} (at most ${MAX_LEAVE_YEARS} years after start_date)`,
              },
            ],
            extensions: { latest_end_date: latest },
          },
        );
      }
      // The contract valid on each day decides whether it is a working day; its state's holidays are not.
      const days = leaveWorkingDays(
        await contracts.history(tenantId, { userId: input.userId }),
        input.startDate,
        input.endDate,
      );
      const leave = {
        userId: input.userId,
        type: input.type,
        startDate: input.startDate,
        endDate: input.endDate,
        workingDays: days.count,
        days: days.contracted,
        note: input.note ?? null,
      };
      // A vacation must fit in the account; judged under the user's lock, so two requests cannot both take the last days.
      const fits =
        input.type === 'vacation'
          ? () => accounts.assertVacationFits(tenantId, input.userId, days.contracted)
          : undefined;
      const outcome = await leaves.createUnlessOverlapping(
        tenantId,
        leave,
        (tx, created) =>
          hrEvents.record(tx, {
            type: 'leave.requested',
            tenantId,
            resourceType: 'leave',
            resourceId: created.id,
            object: leaveJson(created),
          }),
        fits,
      );
      if ('overlapping' in outcome) throw overlap(outcome.overlapping);
      return outcome.created;
    },

    /**
     * Moves the status along the machine. Asking for the state the leave is already in changes
     * nothing, not even `updated_at` (as desk does for tickets).
     */
    async move(tenantId: string, id: string, to: LeaveStatus): Promise<LeaveRecord> {
      // A concurrent move between reading and writing makes the write a no-op: judge again.
      for (;;) {
        const leave = await leaves.findById(tenantId, id);
        if (!leave) throw missing(id);
        if (leave.status === to) return leave;
        if (!canTransition(leave.status, to)) throw illegalMove(leave, to);
        const moved = await leaves.moveStatus(tenantId, id, leave.status, to, (tx, moved) => {
          // Each status has its event (`leave.approved`, …); only the status moved (and updated_at, which changes leave out).
          const object = leaveJson(moved);
          return hrEvents.record(tx, {
            type: `leave.${to}`,
            tenantId,
            resourceType: 'leave',
            resourceId: id,
            object,
            before: { ...object, status: leave.status },
          });
        });
        if (moved) return moved;
      }
    },
  };
}

export type LeavesService = ReturnType<typeof createLeavesService>;
