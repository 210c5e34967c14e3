/**
 * Working days on plain dates, for leave and working-time rules: the days of a span that are
 * working weekdays of a person and not public holidays of their region.
 */
import { WEEKDAYS, eachDate, weekdayOf, type Weekday } from './dates';
import { CalendarInputError, isHoliday, type HolidayRegion } from './holidays';

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
  return dates.filter((date) => weekdays.has(weekdayOf(date)) && !closed.has(date) && !(options.region && isHoliday(options.region, date)));
}

/** How many working days lie from `from` to `to`, both included. */
export function workingDays(from: string, to: string, options: WorkingDaysOptions = {}): number {
  return workingDayList(from, to, options).length;
}
