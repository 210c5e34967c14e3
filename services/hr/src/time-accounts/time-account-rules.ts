// The overtime account (Arbeitszeitkonto): what the contracts ask for, what was worked and what
// leave credits, a month at a time. Pure functions: no I/O.
import { addDays, holidays, isHoliday, weekdayOf, yearOf } from '@msp/calendar';
import { daysInMonth, weekdayCount } from '../calendar';
import { contractOn, type ContractTerms } from '../contracts/contract-rules';

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
export const dailyTarget = (contract: ContractTerms): number =>
  contract.workingDays.length === 0 ? 0 : Math.round(contract.weeklyMinutes / contract.workingDays.length);

const FIRST_HOLIDAY_YEAR = 1000;

/** The days of `from`..`to` (both included) that are inside the employment, or null when none is. */
function withinEmployment(employment: Employment, from: string, to: string): { first: string; last: string } | null {
  const first = employment.start !== null && employment.start > from ? employment.start : from;
  const last = employment.end !== null && employment.end < to ? employment.end : to;
  return first <= last ? { first, last } : null;
}

/** The public holidays of `state` from `from` to `to` that fall on a working day of the contract, each date once: from each year's list. */
function holidaysOnWorkingDays(contract: ContractTerms, from: string, to: string): number {
  const working = new Set(contract.workingDays);
  const dates = new Set<string>();
  // The calendar lists holidays from year 1000 on; a day stored before hr took 1900–2199 only may lie earlier.
  for (let year = Math.max(yearOf(from), FIRST_HOLIDAY_YEAR); year <= yearOf(to); year++) {
    for (const holiday of holidays(contract.state, year)) {
      if (holiday.date >= from && holiday.date <= to && working.has(weekdayOf(holiday.date))) dates.add(holiday.date);
    }
  }
  return dates.size;
}

/**
 * The target minutes of the days from `from` to `to` (both included): on each working day of the
 * contract valid that day that is no public holiday of its state (@msp/calendar) and lies inside
 * the employment, the contract's daily target. Counted, not walked: per contract the span touches,
 * its working weekdays in closed form less the holidays from each year's list, so a month costs as
 * much as the centuries before it.
 */
export function targetMinutes(
  contracts: readonly ContractTerms[],
  employment: Employment,
  from: string,
  to: string,
): number {
  const span = withinEmployment(employment, from, to);
  if (!span) return 0;
  let minutes = 0;
  contracts.forEach((contract, index) => {
    const next = contracts[index + 1];
    const start = contract.validFrom > span.first ? contract.validFrom : span.first;
    const end = next && addDays(next.validFrom, -1) < span.last ? addDays(next.validFrom, -1) : span.last;
    if (start > end) return;
    minutes +=
      dailyTarget(contract) *
      (weekdayCount(start, end, contract.workingDays) - holidaysOnWorkingDays(contract, start, end));
  });
  return minutes;
}

/** The target of one day (0 on a day off, a holiday, a day without contract or outside the employment). */
export function targetOn(contracts: readonly ContractTerms[], employment: Employment, day: string): number {
  if (!withinEmployment(employment, day, day)) return 0;
  const contract = contractOn(contracts, day);
  if (!contract || !contract.workingDays.includes(weekdayOf(day)) || isHoliday(contract.state, day)) return 0;
  return dailyTarget(contract);
}

/** What a span of days comes to. */
export interface AccountSums {
  targetMinutes: number;
  workedMinutes: number;
  creditedMinutes: number;
}

/**
 * Sums the span `from`..`to`: its target, the worked minutes given, and the target of each day of
 * approved leave in it (a leave day that has no target credits nothing; a day under two leaves, such
 * as a sick leave over a vacation, is credited once). The leave days are the caller's own records,
 * so their number, not the span's length, is the work.
 */
export function accountSums(
  contracts: readonly ContractTerms[],
  employment: Employment,
  span: { from: string; to: string },
  workedMinutes: number,
  leaveDays: Iterable<string>,
): AccountSums {
  let creditedMinutes = 0;
  for (const day of new Set(leaveDays)) {
    if (day >= span.from && day <= span.to) creditedMinutes += targetOn(contracts, employment, day);
  }
  return { targetMinutes: targetMinutes(contracts, employment, span.from, span.to), workedMinutes, creditedMinutes };
}

export const balanceOf = (sums: AccountSums): number => sums.workedMinutes + sums.creditedMinutes - sums.targetMinutes;

/**
 * Where the account of a month ending on `last` starts, and with what: on the `validFrom` of the
 * latest contract by then that carries an opening balance, from that balance (never before the
 * employment); else on the employment's start (or the first contract's) from 0; null: no start is
 * known, only the sheets count.
 */
export function accountStart(
  contracts: readonly ContractTerms[],
  employmentStart: string | null,
  last: string,
): { since: string | null; balance: number } {
  const opening = contracts
    .filter((contract) => contract.openingBalanceMinutes !== null && contract.validFrom <= last)
    .at(-1);
  if (opening) {
    return {
      since: employmentStart !== null && employmentStart > opening.validFrom ? employmentStart : opening.validFrom,
      balance: opening.openingBalanceMinutes!,
    };
  }
  return { since: employmentStart ?? contracts[0]?.validFrom ?? null, balance: 0 };
}

/** `YYYY-MM` → its first and last day. */
export function monthSpan(period: string): { first: string; last: string } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  const lastDay = daysInMonth(year, month);
  return { first: `${period}-01`, last: `${period}-${String(lastDay).padStart(2, '0')}` };
}
