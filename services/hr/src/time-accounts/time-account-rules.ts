// The overtime account (Arbeitszeitkonto): what the contracts ask for, what was worked and what
// leave credits, a month at a time. Pure functions: no I/O.
import { addDays, workingDayList } from '@msp/calendar';
import type { ContractTerms } from '../contracts/contract-rules';

/** The days the employee is employed: from `start` (null: since ever) to `end` (null: still employed), both included. */
export interface Employment {
  start: string | null;
  end: string | null;
}

/**
 * A working day's target: the contract's weekly minutes spread evenly over its working days,
 * rounded to whole minutes per day (2400 over five days: 480), so months add up exactly to the
 * balance carried.
 */
export const dailyTarget = (contract: ContractTerms): number => (contract.workingDays.length === 0 ? 0 : Math.round(contract.weeklyMinutes / contract.workingDays.length));

/**
 * Every day from `from` to `to` (both included) with a target, and its minutes: a working day of
 * the contract valid that day that is no public holiday of the contract's state (@msp/calendar),
 * inside the employment. No contract on a day: no target. One calendar call per contract the span
 * touches (a few thousand days for years of history), not one query per day.
 */
export function targetDays(contracts: readonly ContractTerms[], employment: Employment, from: string, to: string): Map<string, number> {
  const first = employment.start !== null && employment.start > from ? employment.start : from;
  const last = employment.end !== null && employment.end < to ? employment.end : to;
  const days = new Map<string, number>();
  contracts.forEach((contract, index) => {
    const next = contracts[index + 1];
    const start = contract.validFrom > first ? contract.validFrom : first;
    const end = next && addDays(next.validFrom, -1) < last ? addDays(next.validFrom, -1) : last;
    if (start > end) return;
    const minutes = dailyTarget(contract);
    for (const day of workingDayList(start, end, { workingWeekdays: contract.workingDays, region: contract.state })) days.set(day, minutes);
  });
  return days;
}

/** What a span of days comes to. */
export interface AccountSums {
  targetMinutes: number;
  workedMinutes: number;
  creditedMinutes: number;
}

/**
 * Sums a span: the target of its target days, the worked minutes given, and the target of each day
 * of approved leave (a leave day that has no target credits nothing; a day under two leaves, such as
 * a sick leave over a vacation, is credited once).
 */
export function accountSums(targets: ReadonlyMap<string, number>, workedMinutes: number, leaveDays: Iterable<string>): AccountSums {
  let targetMinutes = 0;
  for (const minutes of targets.values()) targetMinutes += minutes;
  let creditedMinutes = 0;
  for (const day of new Set(leaveDays)) creditedMinutes += targets.get(day) ?? 0;
  return { targetMinutes, workedMinutes, creditedMinutes };
}

export const balanceOf = (sums: AccountSums): number => sums.workedMinutes + sums.creditedMinutes - sums.targetMinutes;

/** `YYYY-MM` → its first and last day. */
export function monthSpan(period: string): { first: string; last: string } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return { first: `${period}-01`, last: `${period}-${String(lastDay).padStart(2, '0')}` };
}
