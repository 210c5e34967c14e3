// What a contract means for a day: which contract holds, which days are working days (the
// contract's weekdays minus its state's public holidays, from @msp/calendar) and the legal
// minimum of paid leave. Pure functions: no I/O, so every feature can ask them.
import { addDays, workingDayList, type GermanState, type Weekday } from '@msp/calendar';
import { weekdaysBetween } from '../calendar';

/** What the rules need of a contract (a ContractRecord has all of it). */
export interface ContractTerms {
  /** `YYYY-MM-DD`: the contract holds from this day until the day before the next one's. */
  validFrom: string;
  weeklyMinutes: number;
  workingDays: Weekday[];
  vacationDaysPerYear: number;
  state: GermanState;
  /** Overtime (minutes) the time account starts from on `validFrom`; null: the account carries on. */
  openingBalanceMinutes: number | null;
  /** The IANA zone whose local times the employee's timesheets record while the contract holds. */
  timeZone: string;
}

/**
 * The contract valid on `day`: the one with the latest `validFrom` on or before it, or null
 * before the first. `contracts` in ascending `validFrom` order.
 */
export function contractOn<C extends ContractTerms>(contracts: readonly C[], day: string): C | null {
  let found: C | null = null;
  for (const contract of contracts) {
    if (contract.validFrom > day) break;
    found = contract;
  }
  return found;
}

/**
 * §3 BUrlG: at least 24 working days a year on six working days a week, i.e. four weeks: 4 × the
 * contract's working days a week (20 on five, 16 on four, …).
 */
export function minimumVacationDays(workingDaysPerWeek: number): number {
  return 4 * workingDaysPerWeek;
}

/** The working days of a leave: how many, and which of them fall under a contract. */
export interface LeaveWorkingDays {
  count: number;
  /**
   * The working days (`YYYY-MM-DD`) on which a contract holds, in order: what leave accounts
   * count. Days before the first contract are only counted, never listed (no entitlement to book
   * them against; and a leave of an employee without contracts may span centuries).
   */
  contracted: string[];
}

/**
 * The working days from `from` to `to` (both included) under the contract valid on each day: its
 * weekdays, minus the public holidays of its state. Days before the first contract (or with none
 * at all) count Monday to Friday, as before contracts existed. One calendar call per contract the
 * span touches, not one per day.
 */
export function leaveWorkingDays(contracts: readonly ContractTerms[], from: string, to: string): LeaveWorkingDays {
  const first = contracts[0];
  const beforeEnd = first && first.validFrom <= to ? addDays(first.validFrom, -1) : to;
  const count = from <= beforeEnd ? weekdaysBetween(from, beforeEnd) : 0;
  const contracted: string[] = [];
  contracts.forEach((contract, index) => {
    const next = contracts[index + 1];
    const start = contract.validFrom > from ? contract.validFrom : from;
    const lastDay = next ? addDays(next.validFrom, -1) : to;
    const end = lastDay < to ? lastDay : to;
    if (start <= end)
      contracted.push(...workingDayList(start, end, { workingWeekdays: contract.workingDays, region: contract.state }));
  });
  return { count: count + contracted.length, contracted };
}
