// Calendar days as the API writes them (`YYYY-MM-DD`) and as Prisma holds a PostgreSQL `date`
// (a Date at UTC midnight). Always UTC: a server's time zone must never shift a day.
import { instantOf, isTimeZone, offsetAt, toEpochDay, type Weekday } from '@msp/calendar';
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

/** The number of days of a month (1–12) of a year. setUTCFullYear, not Date.UTC, which reads years 0–99 as 1900–1999. */
export function daysInMonth(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
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
    throw validationFailed(
      [{ field: 'to', message: 'must not be before from' }],
      'One or more query parameters are not valid.',
    );
  }
}

// ---- Wall clocks: the local times of a day in an IANA time zone, and the real minutes between them.

/** The zone a contract without one records in (every contract was Berlin's before zones were kept). */
export const DEFAULT_TIME_ZONE = 'Europe/Berlin';

const MINUTE_MS = 60_000;

/** How the local times `HH:MM` of one day map onto real time, in one time zone. */
export interface DayClock {
  date: string;
  timeZone: string;
  /**
   * The real minute (minutes since 1970-01-01T00:00Z) at which the zone's clocks show `minute`
   * (0–1440; 1440 is the next midnight) of the day. A time the clocks skip is read as after the
   * gap, a time they show twice as the first of the two (@msp/calendar's instantOf).
   */
  at(minute: number): number;
  /** Whether the zone's clocks show `minute` of the day at all (02:30 on the day summer time begins does not). */
  shows(minute: number): boolean;
}

/** The wall clock of `date` in `timeZone` (an IANA zone @msp/calendar knows). */
export function dayClock(timeZone: string, date: string): DayClock {
  const midnight = toEpochDay(date) * DAY_MS;
  return {
    date,
    timeZone,
    at: (minute) => Math.round(instantOf(timeZone, date, minute) / MINUTE_MS),
    shows(minute) {
      const instant = instantOf(timeZone, date, minute);
      return instant + offsetAt(timeZone, instant) === midnight + minute * MINUTE_MS;
    },
  };
}

/**
 * The IANA name of a zone as the tz database spells it (`europe/berlin` → `Europe/Berlin`), or
 * null when it is no zone @msp/calendar knows.
 */
export function canonicalTimeZone(name: string): string | null {
  if (!isTimeZone(name)) return null;
  let canonical: string;
  try {
    // eslint-disable-next-line no-restricted-globals -- Intl's canonical spelling, which stored zones follow; only a zone being written loads it
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return name; // a zone of the system's database that Intl does not know: kept as given
  }
  // Intl's spelling, when the zone database that computes the offsets knows it too.
  return isTimeZone(canonical) ? canonical : name;
}
