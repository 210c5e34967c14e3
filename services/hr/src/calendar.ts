// Calendar days as the API writes them (`YYYY-MM-DD`) and as Prisma holds a PostgreSQL `date`
// (a Date at UTC midnight). Always UTC: a server's time zone must never shift a day.
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

/** Monday to Friday from `start` to `end`, both included (0 when `end` is before `start`). */
export function weekdaysBetween(start: string, end: string): number {
  const first = dayToDate(start).getTime();
  const days = Math.floor((dayToDate(end).getTime() - first) / DAY_MS) + 1;
  if (days <= 0) return 0;
  // Whole weeks hold five weekdays each; walk the remaining 0–6 days one by one.
  const rest = days % 7;
  let weekdays = ((days - rest) / 7) * 5;
  const firstWeekday = dayToDate(start).getUTCDay(); // 0 Sunday … 6 Saturday
  for (let i = 0; i < rest; i++) {
    const weekday = (firstWeekday + i) % 7;
    if (weekday !== 0 && weekday !== 6) weekdays++;
  }
  return weekdays;
}

/** A list's `from`/`to` query: `to` before `from` selects nothing by mistake, so it is a 400. */
export function assertDayRange(range: { from?: string; to?: string }): void {
  // `YYYY-MM-DD` text orders as the days do.
  if (range.from && range.to && range.to < range.from) {
    throw validationFailed([{ field: 'to', message: 'must not be before from' }], 'One or more query parameters are not valid.');
  }
}
