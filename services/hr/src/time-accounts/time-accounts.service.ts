import { addDays } from '@msp/calendar';
import { notFound } from '@msp/http';
import type { ContractsRepository } from '../contracts/contracts.repository';
import type { EmployeesRepository } from '../employees/employees.repository';
import { accountStart, accountSums, balanceOf, monthSpan, type AccountSums } from './time-account-rules';
import type { TimeAccountsRepository } from './time-accounts.repository';

export interface TimeAccount extends AccountSums {
  period: string;
  balanceMinutes: number;
  openingBalanceMinutes: number;
  closingBalanceMinutes: number;
}

export function createTimeAccountsService(deps: {
  accounts: TimeAccountsRepository;
  contracts: ContractsRepository;
  employees: EmployeesRepository;
}) {
  const { accounts, contracts, employees } = deps;

  return {
    /**
     * The month `period` (`YYYY-MM`) of the employee's overtime account, and the balance carried
     * into it: from the latest contract with an opening balance that starts by the month's end (its
     * balance, from its `valid_from`), else every day since the employment started (or the first
     * contract; without either, since the first sheet), from one query per table.
     */
    async month(tenantId: string, employeeId: string, period: string): Promise<TimeAccount> {
      const employee = await employees.findById(tenantId, employeeId);
      if (!employee) throw notFound(`No employee ${employeeId}.`);
      const history = await contracts.history(tenantId, { employeeId });
      const { first, last } = monthSpan(period);
      const start = accountStart(history, employee.employmentStart, last);
      const since = start.since;
      const employment = { start: since, end: employee.employmentEnd };
      const facts = await accounts.facts(tenantId, employee.userId, since, first, last);

      const month = accountSums(history, employment, { from: first, to: last }, facts.workedIn, facts.leaveDaysIn);
      // Before the period: from the employment's start; without any start, only the sheets count (no contract, no target).
      const before =
        since !== null && since < first
          ? accountSums(
              history,
              employment,
              { from: since, to: addDays(first, -1) },
              facts.workedBefore,
              facts.leaveDaysBefore,
            )
          : { targetMinutes: 0, workedMinutes: facts.workedBefore, creditedMinutes: 0 };
      const opening = start.balance + balanceOf(before);
      const balance = balanceOf(month);
      return {
        period,
        ...month,
        balanceMinutes: balance,
        openingBalanceMinutes: opening,
        closingBalanceMinutes: opening + balance,
      };
    },
  };
}

export type TimeAccountsService = ReturnType<typeof createTimeAccountsService>;
