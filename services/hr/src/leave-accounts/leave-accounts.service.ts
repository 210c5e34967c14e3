import { yearOf } from '@msp/calendar';
import { AppError, notFound, validationFailed } from '@msp/http';
import { dateToDay } from '../calendar';
import type { ContractsRepository } from '../contracts/contracts.repository';
import type { EmployeeRecord, EmployeesRepository } from '../employees/employees.repository';
import { hrEvents } from '../events/hr-events';
import type { LeaveSettingsRepository } from '../leave-settings/leave-settings.repository';
import { leaveAccount, type AccountInputs, type LeaveAccount } from './leave-account-rules';
import { leaveAdjustmentJson } from './leave-account.mapper';
import type { LeaveAccountsRepository, LeaveAdjustmentRecord, NewLeaveAdjustment } from './leave-accounts.repository';

const noEmployee = (id: string) => notFound(`No employee ${id}.`);

export function createLeaveAccountsService(deps: {
  accounts: LeaveAccountsRepository;
  contracts: ContractsRepository;
  employees: EmployeesRepository;
  settings: LeaveSettingsRepository;
}) {
  const { accounts, contracts, employees, settings } = deps;

  async function employeeOf(tenantId: string, employeeId: string): Promise<EmployeeRecord> {
    // Another tenant's employee is as unknown as a missing one: no existence leaks.
    const employee = await employees.findById(tenantId, employeeId);
    if (!employee) throw noEmployee(employeeId);
    return employee;
  }

  /** Everything the accounts up to `lastYear` rest on: one query per table, whatever the number of days or years. */
  async function inputsOf(tenantId: string, employee: EmployeeRecord, lastYear: number) {
    const today = dateToDay(new Date());
    const rules = await settings.find(tenantId);
    const [history, adjustments, vacation] = await Promise.all([
      contracts.history(tenantId, { employeeId: employee.id }),
      accounts.adjustments(tenantId, employee.id, lastYear),
      accounts.vacationDays(tenantId, employee.userId, lastYear, today, rules.carryOverExpiry),
    ]);
    const sums = new Map<number, number>();
    for (const adjustment of adjustments) sums.set(adjustment.year, (sums.get(adjustment.year) ?? 0) + adjustment.days);
    const inputs: AccountInputs = {
      employmentStart: employee.employmentStart,
      employmentEnd: employee.employmentEnd,
      contracts: history,
      adjustments: sums,
      vacation,
      carryOverExpiry: rules.carryOverExpiry,
      today,
    };
    return { inputs, adjustments, allowNegativeBalance: rules.allowNegativeBalance, hasContract: history.length > 0 };
  }

  return {
    async account(
      tenantId: string,
      employeeId: string,
      year: number,
    ): Promise<{ account: LeaveAccount; adjustments: LeaveAdjustmentRecord[] }> {
      const employee = await employeeOf(tenantId, employeeId);
      const { inputs, adjustments } = await inputsOf(tenantId, employee, year);
      return {
        account: leaveAccount(inputs, year),
        adjustments: adjustments.filter((adjustment) => adjustment.year === year),
      };
    },

    async adjust(tenantId: string, employeeId: string, input: NewLeaveAdjustment): Promise<LeaveAdjustmentRecord> {
      await employeeOf(tenantId, employeeId);
      if (input.days === 0)
        throw validationFailed([{ field: 'days', message: 'must not be 0' }], 'The request body is not valid.');
      return accounts.createAdjustment(tenantId, employeeId, { ...input, reason: input.reason.trim() }, (tx, created) =>
        hrEvents.record(tx, {
          type: 'leave_adjustment.created',
          tenantId,
          resourceType: 'leave_adjustment',
          resourceId: created.id,
          object: leaveAdjustmentJson(created),
        }),
      );
    },

    /**
     * A vacation's working days must fit in what is left of each year they fall in:
     * `remaining_days − requested_days` (so requests cannot add up beyond the account), unless the
     * tenant allows negative balances. An employee without a contract has no account to check.
     */
    async assertVacationFits(tenantId: string, userId: string, days: readonly string[]): Promise<void> {
      if (days.length === 0) return;
      const employee = await employees.findByUserId(tenantId, userId);
      if (!employee) return;
      const lastYear = yearOf(days[days.length - 1]!);
      const { inputs, allowNegativeBalance, hasContract } = await inputsOf(tenantId, employee, lastYear);
      if (allowNegativeBalance || !hasContract) return;
      const perYear = new Map<number, number>();
      for (const day of days) perYear.set(yearOf(day), (perYear.get(yearOf(day)) ?? 0) + 1);
      for (const [year, needed] of perYear) {
        const account = leaveAccount(inputs, year);
        const available = Math.round((account.remainingDays - account.requestedDays) * 100) / 100;
        if (needed > available) {
          throw new AppError(
            422,
            `The vacation needs ${needed} working day${needed === 1 ? '' : 's'} in ${year}, but only ${available} ${available === 1 ? 'is' : 'are'} left ` +
              `(remaining_days ${account.remainingDays}, of which ${account.requestedDays} already requested).`,
            {
              code: 'insufficient_leave_balance',
              title: 'Insufficient leave balance',
              errors: [{ field: 'end_date', message: `needs ${needed} working days in ${year}; ${available} left` }],
              extensions: {
                year,
                needed_days: needed,
                remaining_days: account.remainingDays,
                requested_days: account.requestedDays,
                available_days: available,
              },
            },
          );
        }
      }
    },
  };
}

export type LeaveAccountsService = ReturnType<typeof createLeaveAccountsService>;
