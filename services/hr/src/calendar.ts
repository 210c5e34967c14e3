// Calendar days as the API writes them (`YYYY-MM-DD`) and as Prisma holds a PostgreSQL `date`
// (a Date at UTC midnight). Always UTC: a server's time zone must never shift a day.
import type { Weekday } from '@msp/calendar';
import { validationFailed } from '@msp/http';

const DAY_MS = 86_400_000;

/** `2026-10-29` → the Date Prisma reads and writes for that `date`. */
export function dayToDate(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

/**
 * `MM-DD` of `year` as a day, `YYYY-MM-DD`: the year written with four digits, as every day is
 * (year 201 as `0201`; an unpadded `201-01-01` is no date).
 */
export function dayOfYear(year: number, monthDay: string): string {
  return `${String(year).padStart(4, '0')}-${monthDay}`;
}

/** The Date of a `date` column → `2026-10-29`. */
export function dateToDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

const WEEK: readonly Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']; // getUTCDay's order
const MONDAY_TO_FRIDAY: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri'];

/**
 * How many days from `start` to `end` (both included) fall on one of `weekdays` (0 when `end` is
 * before `start`): whole weeks hold each weekday once, the 0–6 days left are looked at one by one.
 * The same work for a week as for centuries.
 */
export function weekdayCount(start: string, end: string, weekdays: readonly Weekday[]): number {
  const first = dayToDate(start).getTime();
  const days = Math.floor((dayToDate(end).getTime() - first) / DAY_MS) + 1;
  if (days <= 0) return 0;
  const wanted = new Set(weekdays);
  const rest = days % 7;
  let count = ((days - rest) / 7) * wanted.size;
  const firstWeekday = dayToDate(start).getUTCDay();
  for (let i = 0; i < rest; i++) if (wanted.has(WEEK[(firstWeekday + i) % 7]!)) count++;
  return count;
}

/** Monday to Friday from `start` to `end`, both included (0 when `end` is before `start`). */
export function weekdaysBetween(start: string, end: string): number {
  return weekdayCount(start, end, MONDAY_TO_FRIDAY);
}

/** A list's `from`/`to` query: `to` before `from` selects nothing by mistake, so it is a 400. */
export function assertDayRange(range: { from?: string; to?: string }): void {
  // `YYYY-MM-DD` text orders as the days do.
  if (range.from && range.to && range.to < range.from) {
    throw validationFailed([{ field: 'to', message: 'must not be before from' }], 'One or more query parameters are not valid.');
  }
}
