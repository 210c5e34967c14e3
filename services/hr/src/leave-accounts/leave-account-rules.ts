// The leave account of a year under the Bundesurlaubsgesetz, from what the database summed up
// (per year, never per day): pure functions, so every rule is one place to read.
import { addDays, daysBetween, yearOf } from '@msp/calendar';
import { dayOfYear, daysInMonth } from '../calendar';
import { contractOn, type ContractTerms } from '../contracts/contract-rules';

/** A year's vacation working days (vacation leave days a sick leave covers are already left out, §9 BUrlG). */
export interface VacationDays {
  /** Approved, on or before today. */
  taken: number;
  /** Approved, after today. */
  planned: number;
  /** Requested (not yet approved). */
  requested: number;
  /** Approved, on or before the year's carry-over expiry day: what may use carried-over days. */
  beforeExpiry: number;
}

export interface AccountInputs {
  employmentStart: string | null;
  employmentEnd: string | null;
  /** Ascending `validFrom`. */
  contracts: readonly ContractTerms[];
  /** Sum of the adjustments per year. */
  adjustments: ReadonlyMap<number, number>;
  vacation: ReadonlyMap<number, VacationDays>;
  /** `MM-DD`. */
  carryOverExpiry: string;
  /** `YYYY-MM-DD` (UTC). */
  today: string;
}

export interface LeaveAccount {
  year: number;
  entitlementDays: number;
  carriedOverDays: number;
  carryOverExpiresOn: string;
  expiredDays: number;
  adjustmentsDays: number;
  takenDays: number;
  plannedDays: number;
  requestedDays: number;
  remainingDays: number;
}

const NONE: VacationDays = { taken: 0, planned: 0, requested: 0, beforeExpiry: 0 };

/** Two decimals, so sums of thirds and twelfths do not show floating-point dust. */
const round2 = (value: number) => Math.round(value * 100) / 100;

/** The same day `months` later (the month's last day when it is shorter, §188 (3) BGB). */
function addMonths(day: string, months: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const index = m - 1 + months;
  const year = y + Math.floor(index / 12);
  const month = (index % 12) + 1;
  const date = Math.min(d, daysInMonth(year, month));
  return dayOfYear(year, `${String(month).padStart(2, '0')}-${String(date).padStart(2, '0')}`);
}

/** Full months of employment from `from` to `to` (both included): a month from the 15th ends on the 14th. */
export function fullMonths(from: string, to: string): number {
  let months = 0;
  while (addDays(addMonths(from, months + 1), -1) <= to) months++;
  return months;
}

/** §4 BUrlG: the waiting period is complete at the end of this day (six months from the first day). */
export function waitingPeriodEnd(employmentStart: string): string {
  return addDays(addMonths(employmentStart, 6), -1);
}

/** §5 (2) BUrlG: a fraction of at least half a day is rounded up to a whole day; a smaller one is kept. */
export function roundEntitlement(days: number): number {
  const exact = round2(days);
  const whole = Math.floor(exact);
  return exact - whole >= 0.5 ? whole + 1 : exact;
}

/**
 * `vacation_days_per_year` spread over the days `from`..`to` by the contract valid on each day
 * (days before the first contract count with the first), as a yearly figure: one step per contract.
 */
function annualDays(contracts: readonly ContractTerms[], from: string, to: string): number {
  if (contracts.length === 0 || to < from) return 0;
  const span = daysBetween(from, to) + 1;
  let weighted = 0;
  let day = from;
  while (day <= to) {
    const contract = contractOn(contracts, day) ?? contracts[0]!;
    const next = contracts.find((c) => c.validFrom > day);
    const last = next && addDays(next.validFrom, -1) < to ? addDays(next.validFrom, -1) : to;
    weighted += contract.vacationDaysPerYear * (daysBetween(day, last) + 1);
    day = addDays(last, 1);
  }
  return weighted / span;
}

/** The first day of employment: the one set, else the first contract's. */
export function employmentStartOf(inputs: Pick<AccountInputs, 'employmentStart' | 'contracts'>): string | null {
  return inputs.employmentStart ?? inputs.contracts[0]?.validFrom ?? null;
}

/**
 * A year's entitlement (§§3–5 BUrlG). The whole year's once the six-month waiting period (§4) is
 * complete within the year or before it; otherwise 1/12 per full month of employment in the year:
 * in the year of entry when the waiting period ends only the next year (§5 (1) a), when the
 * employment ends before the waiting period is complete (§5 (1) b), and in the year of exit when
 * it ends on or before 30 June (§5 (1) c). Rounded by §5 (2).
 */
export function entitlement(inputs: AccountInputs, year: number): number {
  const start = employmentStartOf(inputs);
  const end = inputs.employmentEnd;
  if (!start || year < yearOf(start) || (end && year > yearOf(end))) return 0;
  const first = dayOfYear(year, '01-01');
  const last = dayOfYear(year, '12-31');
  const from = start > first ? start : first;
  const to = end && end < last ? end : last;
  const annual = annualDays(inputs.contracts, from, to);
  const waitingComplete = waitingPeriodEnd(start) <= to;
  const leavesInFirstHalf = end !== null && yearOf(end) === year && end <= dayOfYear(year, '06-30');
  const share = waitingComplete && !leavesInFirstHalf ? 1 : fullMonths(from, to) / 12;
  return roundEntitlement(annual * share);
}

/**
 * The account of `year`, carrying over year by year from the first year of employment: what is
 * left at the end of a year (negative too, when the tenant allows it) is carried into the next;
 * carried-over days are used first and what is not used by the expiry day expires after it.
 */
export function leaveAccount(inputs: AccountInputs, year: number): LeaveAccount {
  const start = employmentStartOf(inputs);
  const firstYear = start ? Math.min(yearOf(start), year) : year;
  let carried = 0;
  let account: LeaveAccount | undefined;
  for (let y = firstYear; y <= year; y++) {
    const days = inputs.vacation.get(y) ?? NONE;
    const expiresOn = dayOfYear(y, inputs.carryOverExpiry);
    const usedFromCarried = Math.min(Math.max(carried, 0), days.beforeExpiry);
    // Only once the expiry day is over; a debt (negative carry-over) never expires.
    const expired = carried > 0 && inputs.today > expiresOn ? round2(carried - usedFromCarried) : 0;
    const entitled = entitlement(inputs, y);
    const adjustments = inputs.adjustments.get(y) ?? 0;
    const remaining = round2(entitled + carried - expired + adjustments - days.taken - days.planned);
    account = {
      year: y,
      entitlementDays: entitled,
      carriedOverDays: carried,
      carryOverExpiresOn: expiresOn,
      expiredDays: expired,
      adjustmentsDays: round2(adjustments),
      takenDays: days.taken,
      plannedDays: days.planned,
      requestedDays: days.requested,
      remainingDays: remaining,
    };
    carried = remaining;
  }
  return account!;
}
