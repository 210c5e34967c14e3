// The API JSON of a contract, for the answers, the employee's current contract and the events.
import type { ContractJson } from './contract.schemas';
import type { ContractRecord } from './contracts.repository';

export function contractJson(contract: ContractRecord): ContractJson {
  return {
    id: contract.id,
    employee_id: contract.employeeId,
    valid_from: contract.validFrom,
    weekly_minutes: contract.weeklyMinutes,
    working_days: [...contract.workingDays],
    vacation_days_per_year: contract.vacationDaysPerYear,
    state: contract.state,
    opening_balance_minutes: contract.openingBalanceMinutes,
    time_zone: contract.timeZone,
    created_at: contract.createdAt,
  };
}
