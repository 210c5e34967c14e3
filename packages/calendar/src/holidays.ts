/**
 * German public holidays, per state, as `date-holidays` has them (code ISC, data CC BY-SA 3.0;
 * written out as rules in german-holidays.ts and held to the library by the tests): the state
 * rules (Frauentag in Berlin since 2019 and Mecklenburg-Vorpommern since 2023, Weltkindertag in
 * Thüringen since 2019, Reformationstag in the northern states since 2018 and everywhere in 2017,
 * Buß- und Bettag in Sachsen, Berlin's one-off days such as 8 May 2025, …) are the library's; only
 * its days of type 'public' are kept (not 'bank' days such as 24 December, nor school or church days).
 *
 * A state's answer holds the holidays of the whole state. Mariä Himmelfahrt (15 August) is a
 * holiday only in Bavaria's predominantly Catholic communes (Munich and Augsburg among them, not
 * all of Bavaria), so `DE-BY` leaves it out, as it leaves out Augsburg's Friedensfest and, in
 * Sachsen and Thüringen, Fronleichnam of some communes: a calendar of a commune that keeps such a
 * day lists it in its `closed_days` (`closedDays` for working days). Leaving out is the choice that
 * can be corrected that way; a day included for the whole state could not be taken out again.
 */
import { isDateString, toEpochDay, yearOf } from './dates';
import { germanHolidays } from './german-holidays';

export const GERMAN_STATES = [
  'DE-BW',
  'DE-BY',
  'DE-BE',
  'DE-BB',
  'DE-HB',
  'DE-HH',
  'DE-HE',
  'DE-MV',
  'DE-NI',
  'DE-NW',
  'DE-RP',
  'DE-SL',
  'DE-SN',
  'DE-ST',
  'DE-SH',
  'DE-TH',
] as const;
export type GermanState = (typeof GERMAN_STATES)[number];
/** 'DE' alone: the holidays of all Germany (federal law: Tag der Deutschen Einheit, and those every state keeps). */
export type HolidayRegion = 'DE' | GermanState;

export interface Holiday {
  /** 'YYYY-MM-DD' */
  date: string;
  /** The German name, e.g. 'Heilige Drei Könige'. */
  name: string;
}

/**
 * A region that is not a German state (nor 'DE'), or a date that is not a date: bad input from a
 * caller, never a bug. `code` and `field` let a service answer it with a 400 naming the field.
 */
export class CalendarInputError extends Error {
  readonly code: 'unknown-region' | 'invalid-date';
  readonly value: unknown;

  constructor(code: CalendarInputError['code'], message: string, value: unknown) {
    super(message);
    this.name = 'CalendarInputError';
    this.code = code;
    this.value = value;
  }
}

export function isCalendarInputError(error: unknown): error is CalendarInputError {
  return error instanceof CalendarInputError;
}

export function isHolidayRegion(value: unknown): value is HolidayRegion {
  return value === 'DE' || (GERMAN_STATES as readonly unknown[]).includes(value);
}

export function assertRegion(region: unknown): asserts region is HolidayRegion {
  if (!isHolidayRegion(region)) {
    throw new CalendarInputError(
      'unknown-region',
      `unknown holiday region ${JSON.stringify(region)}: use 'DE' or a German state such as 'DE-BY'`,
      region,
    );
  }
}

// A year's holidays for a region never change while the process runs: computed once, and kept
// for the years asked about lately (callers choose years: the cache must not grow with them).
const cache = new Map<string, { list: Holiday[]; dates: Set<string>; days: number[] }>();
const MAX_CACHED_YEARS = 2_000;

function yearOfRegion(region: HolidayRegion, year: number) {
  const key = `${region}:${year}`;
  let entry = cache.get(key);
  if (!entry) {
    const list = germanHolidays(region === 'DE' ? undefined : region.slice(3), year);
    entry = {
      list,
      dates: new Set(list.map((holiday) => holiday.date)),
      days: list.map((holiday) => toEpochDay(holiday.date)).sort((a, b) => a - b),
    };
    if (cache.size >= MAX_CACHED_YEARS) cache.clear();
    cache.set(key, entry);
  }
  return entry;
}

/** The region's public holidays of a year as days since 1970-01-01, in order (business-time's sums). */
export function holidayEpochDays(region: HolidayRegion, year: number): readonly number[] {
  return yearOfRegion(region, year).days;
}

/** The public holidays of a region in a year, in date order. */
export function holidays(region: HolidayRegion, year: number): Holiday[] {
  assertRegion(region);
  if (!Number.isInteger(year) || year < 1000 || year > 9999) {
    throw new CalendarInputError('invalid-date', `not a year: ${JSON.stringify(year)}`, year);
  }
  return yearOfRegion(region, year).list.map((holiday) => ({ ...holiday }));
}

/** isHoliday without the checks, for callers that made the date themselves (business-time's loop). */
export function isHolidayUnchecked(region: HolidayRegion, date: string): boolean {
  return yearOfRegion(region, Number(date.slice(0, 4))).dates.has(date);
}

/** Whether a 'YYYY-MM-DD' is a public holiday in a region. */
export function isHoliday(region: HolidayRegion, date: string): boolean {
  assertRegion(region);
  if (!isDateString(date))
    throw new CalendarInputError('invalid-date', `not a calendar date (YYYY-MM-DD): ${JSON.stringify(date)}`, date);
  return yearOfRegion(region, yearOf(date)).dates.has(date);
}
