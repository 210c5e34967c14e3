/**
 * Plain calendar dates ('YYYY-MM-DD'): a day on a wall calendar, with no time of day and no time
 * zone. Arithmetic runs on whole days since 1970-01-01 (UTC is only the counting scale here, never
 * a zone), so no daylight-saving change can shift a date.
 */

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const DAY_MS = 86_400_000;
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a well-formed 'YYYY-MM-DD' that names a real day (no 2026-02-30). */
export function isDateString(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = DATE_PATTERN.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

// Date.UTC reads years 0–99 as 1900–1999; setUTCFullYear takes them as they are.
function utcMidnight(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime();
}

/** Days since 1970-01-01 of year, month (1–12) and day, unchecked (day 0 is the month's eve, as Date.UTC has it). */
export function epochDayOf(year: number, month: number, day: number): number {
  return utcMidnight(year, month, day) / DAY_MS;
}

export function daysInMonth(year: number, month: number): number {
  return new Date(utcMidnight(year, month + 1, 0)).getUTCDate();
}

function assertDate(date: string): void {
  if (!isDateString(date)) throw new RangeError(`not a calendar date (YYYY-MM-DD): ${JSON.stringify(date)}`);
}

/** Days since 1970-01-01 of a 'YYYY-MM-DD'. */
export function toEpochDay(date: string): number {
  assertDate(date);
  return epochDayOf(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)));
}

/** The 'YYYY-MM-DD' of a count of days since 1970-01-01. */
export function fromEpochDay(epochDay: number): string {
  return new Date(epochDay * DAY_MS).toISOString().slice(0, 10);
}

/** The date of year, month (1–12) and day; throws a RangeError for a day that does not exist. */
export function dateOf(year: number, month: number, day: number): string {
  const date = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  assertDate(date);
  return date;
}

export function addDays(date: string, days: number): string {
  return fromEpochDay(toEpochDay(date) + days);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return toEpochDay(to) - toEpochDay(from);
}

/** -1, 0 or 1, for sorting: 'YYYY-MM-DD' strings also sort as text, this one checks them. */
export function compareDates(a: string, b: string): number {
  return Math.sign(toEpochDay(a) - toEpochDay(b));
}

export function weekdayOf(date: string): Weekday {
  // 1970-01-01 was a Thursday (index 3 from Monday).
  return WEEKDAYS[(((toEpochDay(date) + 3) % 7) + 7) % 7]!;
}

export function yearOf(date: string): number {
  assertDate(date);
  return Number(date.slice(0, 4));
}

/** Every date from `from` to `to`, both included; empty when `to` is before `from`. */
export function eachDate(from: string, to: string): string[] {
  const first = toEpochDay(from);
  const last = toEpochDay(to);
  const dates: string[] = [];
  for (let day = first; day <= last; day++) dates.push(fromEpochDay(day));
  return dates;
}

/**
 * The ISO 8601 week of a date: weeks start on Monday and week 1 is the one holding the year's
 * first Thursday, so 2026-12-31 is in 2026-W53 and 2027-01-01 too, while 2024-12-30 is 2025-W01.
 */
export function isoWeek(date: string): { year: number; week: number } {
  const epochDay = toEpochDay(date);
  const weekdayIndex = WEEKDAYS.indexOf(weekdayOf(date));
  const thursday = epochDay - weekdayIndex + 3;
  const year = yearOf(fromEpochDay(thursday));
  const firstDay = toEpochDay(`${String(year).padStart(4, '0')}-01-01`);
  return { year, week: Math.floor((thursday - firstDay) / 7) + 1 };
}

/** The ISO week as text: '2026-W01'. */
export function isoWeekString(date: string): string {
  const { year, week } = isoWeek(date);
  return `${year}-W${String(week).padStart(2, '0')}`;
}
