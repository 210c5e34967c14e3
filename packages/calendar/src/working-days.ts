/**
 * Working days on plain dates, for leave and working-time rules: the days of a span that are
 * working weekdays of a person and not public holidays of their region.
 */
import { WEEKDAYS, eachDate, isDateString, toEpochDay, weekdayOf, type Weekday } from './dates';
import { CalendarInputError, assertRegion, holidayEpochDays, isHoliday, type HolidayRegion } from './holidays';

export interface WorkingDaysOptions {
  /** Default: Monday to Friday. */
  workingWeekdays?: readonly Weekday[];
  /** Whose holidays are days off; null or absent: none. */
  region?: HolidayRegion | null;
  /** Further days off ('YYYY-MM-DD'), e.g. 15 August in a Bavarian commune that keeps it. */
  closedDays?: readonly string[];
}

const MONDAY_TO_FRIDAY: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri'];

/** The working days from `from` to `to`, both included, in order; empty when `to` is before `from`. */
export function workingDayList(from: string, to: string, options: WorkingDaysOptions = {}): string[] {
  const weekdays = new Set(options.workingWeekdays ?? MONDAY_TO_FRIDAY);
  for (const day of weekdays) {
    if (!(WEEKDAYS as readonly string[]).includes(day)) throw new RangeError(`not a weekday: ${JSON.stringify(day)}`);
  }
  const closed = new Set(options.closedDays ?? []);
  let dates: string[];
  try {
    dates = eachDate(from, to);
  } catch (error) {
    throw new CalendarInputError('invalid-date', error instanceof Error ? error.message : String(error), [from, to]);
  }
  return dates.filter(
    (date) =>
      weekdays.has(weekdayOf(date)) && !closed.has(date) && !(options.region && isHoliday(options.region, date)),
  );
}

/**
 * How many working days lie from `from` to `to`, both included: whole weeks times the working
 * weekdays, the days left over, less the holidays and closed days on working weekdays. The work
 * grows with the years the span covers (their holidays), not with its days.
 */
export function workingDays(from: string, to: string, options: WorkingDaysOptions = {}): number {
  const weekdays = new Set(options.workingWeekdays ?? MONDAY_TO_FRIDAY);
  for (const day of weekdays) {
    if (!(WEEKDAYS as readonly string[]).includes(day)) throw new RangeError(`not a weekday: ${JSON.stringify(day)}`);
  }
  for (const date of [from, to]) {
    if (!isDateString(date))
      throw new CalendarInputError('invalid-date', `not a calendar date (YYYY-MM-DD): ${JSON.stringify(date)}`, [
        from,
        to,
      ]);
  }
  if (options.region) assertRegion(options.region);
  const first = toEpochDay(from);
  const last = toEpochDay(to);
  if (last < first) return 0;
  // Monday 0 … Sunday 6 of a day since 1970-01-01 (a Thursday).
  const working = (epochDay: number) => weekdays.has(WEEKDAYS[(((epochDay + 3) % 7) + 7) % 7]!);
  const days = last - first + 1;
  const weeks = Math.floor(days / 7);
  let count = weeks * weekdays.size;
  for (let day = first + weeks * 7; day <= last; day++) if (working(day)) count++;
  const off = new Set<number>();
  for (const date of options.closedDays ?? []) {
    if (!isDateString(date)) continue; // as workingDayList: a string that is no date closes no day
    const day = toEpochDay(date);
    if (day >= first && day <= last) off.add(day);
  }
  if (options.region) {
    for (let year = Number(from.slice(0, 4)); year <= Number(to.slice(0, 4)); year++) {
      for (const day of holidayEpochDays(options.region, year)) if (day >= first && day <= last) off.add(day);
    }
  }
  for (const day of off) if (working(day)) count--;
  return count;
}
