/**
 * Business-hours calendars: when a clock that only runs in opening hours (an SLA) reaches a number
 * of minutes, and how many such minutes lie between two instants. Nothing goes a minute, nor a day,
 * at a time: the timeline is cut where the zone's offset changes (twice a year where clocks change),
 * and each piece of one offset is a span of wall-clock time, whose business minutes are whole
 * weeks times the week's minutes, the days left over, less the holidays and closed days inside.
 * So a daylight-saving change, a holiday or a closed day is just a shorter, or an empty, day, and
 * the work grows with the years a span covers (their holidays), not with its days.
 */
import { WEEKDAYS, isDateString, type Weekday } from './dates';
import { GERMAN_STATES, assertRegion, holidayEpochDays, type GermanState, type HolidayRegion } from './holidays';
import { isTimeZone, nextOffsetChange, offsetAt } from './zone';

export interface BusinessInterval {
  /** 'HH:MM', local time of the calendar's zone. */
  start: string;
  /** 'HH:MM' after start; '24:00' is the end of the day. */
  end: string;
}

export type BusinessHours = Record<Weekday, BusinessInterval[]>;

export interface HolidaySource {
  country: 'DE';
  /** A German state; absent or null: the nationwide holidays only. */
  region?: GermanState | null;
}

export interface BusinessCalendar {
  /** IANA time zone, e.g. 'Europe/Berlin'. */
  time_zone: string;
  hours: BusinessHours;
  holidays: HolidaySource | null;
  /** Further days without business hours ('YYYY-MM-DD'), e.g. 24 December. */
  closed_days: string[];
}

/** `null` is a calendar that is always open (24×7, no holidays). */
export type CalendarOrAlwaysOpen = BusinessCalendar | null;

export interface FieldError {
  field: string;
  message: string;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const TIME_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** How far a business clock looks for enough open time (100 years): past that it gives up (BusinessTimeRangeError). */
export const BUSINESS_TIME_HORIZON_DAYS = 36_525;
/** The last instant a clock can answer: the API's instants are in the years 0001–9999. */
export const LAST_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * A business clock that cannot be answered: the calendar gives too few business minutes within
 * BUSINESS_TIME_HORIZON_DAYS of the start (`horizon`), or the answer lies after 9999-12-31
 * (`last-instant`). `limit` names the bound in words, for a 422 to the caller.
 */
export class BusinessTimeRangeError extends RangeError {
  constructor(
    readonly code: 'horizon' | 'last-instant',
    readonly limit: string,
    message: string,
  ) {
    super(message);
    this.name = 'BusinessTimeRangeError';
  }
}

export function isBusinessTimeRangeError(error: unknown): error is BusinessTimeRangeError {
  return error instanceof BusinessTimeRangeError;
}

/** Minutes after midnight of an 'HH:MM' (00:00–23:59, and '24:00' if `end`), or null. */
export function parseTime(value: unknown, end = false): number | null {
  if (typeof value !== 'string') return null;
  if (end && value === '24:00') return 1440;
  const match = TIME_PATTERN.exec(value);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

interface Compiled {
  timeZone: string;
  /** Open intervals per weekday (0 Monday … 6 Sunday), in ms after midnight, in order. */
  week: Array<Array<[number, number]>>;
  /** The open ms of each weekday, and of the whole week. */
  dayMs: number[];
  weekMs: number;
  region: HolidayRegion | null;
  /** The closed days as days since 1970-01-01, in order. */
  closed: number[];
}

/** Monday 0 … Sunday 6 of a day since 1970-01-01 (a Thursday). */
const weekdayOf = (epochDay: number) => (((epochDay + 3) % 7) + 7) % 7;
const yearOfDay = (epochDay: number) => new Date(epochDay * DAY_MS).getUTCFullYear();

/** Epoch days of 'YYYY-MM-DD' strings, unchecked (the calendar was validated). */
function epochDayOfDate(date: string): number {
  const utc = new Date(0);
  utc.setUTCFullYear(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)));
  return utc.getTime() / DAY_MS;
}

function compile(calendar: BusinessCalendar): Compiled {
  const week = WEEKDAYS.map((day) => {
    const intervals = (calendar.hours[day] ?? [])
      .map((interval): [number, number] => [
        (parseTime(interval.start) ?? NaN) * MINUTE_MS,
        (parseTime(interval.end, true) ?? NaN) * MINUTE_MS,
      ])
      .sort((a, b) => a[0] - b[0]);
    if (intervals.some(([start, end]) => !(start < end)))
      throw new RangeError(`malformed business hours on ${day}: check the calendar with validateCalendar`);
    return intervals;
  });
  const dayMs = week.map((intervals) => intervals.reduce((sum, [start, end]) => sum + end - start, 0));
  const weekMs = dayMs.reduce((sum, ms) => sum + ms, 0);
  if (weekMs === 0) throw new RangeError('the calendar has no business hours: check it with validateCalendar');
  const region = calendar.holidays ? (calendar.holidays.region ?? 'DE') : null;
  if (region) assertRegion(region);
  const closed = [...new Set(calendar.closed_days.map(epochDayOfDate))].sort((a, b) => a - b);
  return { timeZone: calendar.time_zone, week, dayMs, weekMs, region, closed };
}

/** The first index of `sorted` whose value is ≥ `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The days from `first` to before `end` on which the calendar would be open but is not: its holidays and closed days there. */
function daysOff(c: Compiled, first: number, end: number): Set<number> {
  const off = new Set<number>();
  if (end <= first) return off;
  for (let i = lowerBound(c.closed, first); i < c.closed.length && c.closed[i]! < end; i++) off.add(c.closed[i]!);
  if (c.region) {
    for (let year = yearOfDay(first), last = yearOfDay(end - 1); year <= last; year++) {
      for (const day of holidayEpochDays(c.region, year)) if (day >= first && day < end) off.add(day);
    }
  }
  return off;
}

function isDayOff(c: Compiled, epochDay: number): boolean {
  const closed = lowerBound(c.closed, epochDay);
  if (c.closed[closed] === epochDay) return true;
  return c.region !== null && holidayEpochDays(c.region, yearOfDay(epochDay)).includes(epochDay);
}

/** Open ms of one day between `from` and `to` (ms after its midnight, 0–DAY_MS). */
function openInDay(c: Compiled, epochDay: number, from: number, to: number): number {
  const intervals = c.week[weekdayOf(epochDay)]!;
  if (intervals.length === 0 || to <= from || isDayOff(c, epochDay)) return 0;
  let open = 0;
  for (const [start, end] of intervals) open += Math.max(0, Math.min(end, to) - Math.max(start, from));
  return open;
}

/** Open ms of the whole days from `first` to before `end`: whole weeks, the days left over, less the days off. */
function openInDays(c: Compiled, first: number, end: number): number {
  if (end <= first) return 0;
  const days = end - first;
  const weeks = Math.floor(days / 7);
  let open = weeks * c.weekMs;
  for (let day = first + weeks * 7; day < end; day++) open += c.dayMs[weekdayOf(day)]!;
  for (const day of daysOff(c, first, end)) open -= c.dayMs[weekdayOf(day)]!;
  return open;
}

/** Open ms of wall-clock time from `from` to `to` (wall ms: an instant plus the zone's offset). */
function openInWall(c: Compiled, from: number, to: number): number {
  if (to <= from) return 0;
  const firstDay = Math.floor(from / DAY_MS);
  const lastDay = Math.floor((to - 1) / DAY_MS);
  if (firstDay === lastDay) return openInDay(c, firstDay, from - firstDay * DAY_MS, to - firstDay * DAY_MS);
  return (
    openInDay(c, firstDay, from - firstDay * DAY_MS, DAY_MS) +
    openInDays(c, firstDay + 1, lastDay) +
    openInDay(c, lastDay, 0, to - lastDay * DAY_MS)
  );
}

/**
 * The wall-clock instant in [from, to] at which `need` (> 0, at most openInWall(from, to)) open ms
 * have passed since `from`: the day is found by halving, then its intervals are walked. Running
 * out at closing time is closing time.
 */
function wallAfter(c: Compiled, from: number, to: number, need: number): number {
  let low = Math.floor(from / DAY_MS);
  let high = Math.floor((to - 1) / DAY_MS);
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (openInWall(c, from, Math.min((middle + 1) * DAY_MS, to)) >= need) high = middle;
    else low = middle + 1;
  }
  const start = Math.max(low * DAY_MS, from);
  const end = Math.min((low + 1) * DAY_MS, to);
  let left = need - openInWall(c, from, start);
  for (const [open, close] of c.week[weekdayOf(low)]!) {
    const s = Math.max(low * DAY_MS + open, start);
    const e = Math.min(low * DAY_MS + close, end);
    if (e <= s) continue;
    if (e - s >= left) return s + left;
    left -= e - s;
  }
  return end; // only by rounding: the day held what was needed
}

/**
 * The timeline from `from` to `to` cut where the zone's offset changes: [start, end, offset] of
 * each piece. Business hours are wall-clock hours: open while the zone's clocks show a time inside
 * an interval of an open day, so the hour the clocks skip when summer time begins is no business
 * time, and the hour they show twice when it ends is business time twice.
 */
function* pieces(c: Compiled, from: number, to: number): Generator<[number, number, number]> {
  for (let start = from; start < to;) {
    const end = Math.min(nextOffsetChange(c.timeZone, start), to);
    yield [start, end, offsetAt(c.timeZone, start)];
    start = end;
  }
}

function epochOf(value: Date, name: string): number {
  const epochMs = value instanceof Date ? value.getTime() : NaN;
  if (!Number.isFinite(epochMs)) throw new RangeError(`${name} must be a valid Date`);
  return epochMs;
}

const pastLastInstant = (minutes: number) =>
  new BusinessTimeRangeError(
    'last-instant',
    'the year 9999',
    `${minutes} business minutes from then end after 9999-12-31T23:59:59.999Z, the last instant there is`,
  );

/**
 * The instant `minutes` business minutes after `from`: `from` itself for 0, else the moment the
 * last of those minutes ends, so a clock that runs out exactly at closing time is due at closing
 * time, not at the next opening. `from` may lie outside business hours (the clock waits for the
 * next opening). Throws BusinessTimeRangeError when the calendar gives fewer minutes than that
 * within BUSINESS_TIME_HORIZON_DAYS, or the answer would lie after the year 9999.
 */
export function addBusinessMinutes(calendar: CalendarOrAlwaysOpen, from: Date, minutes: number): Date {
  const start = epochOf(from, 'from');
  if (!Number.isFinite(minutes) || minutes < 0) throw new RangeError('minutes must be a finite number ≥ 0');
  if (minutes === 0) return new Date(start);
  if (calendar == null) {
    if (start + minutes * MINUTE_MS > LAST_INSTANT_MS) throw pastLastInstant(minutes);
    return new Date(start + minutes * MINUTE_MS);
  }
  const c = compile(calendar);
  const end = Math.min(start + BUSINESS_TIME_HORIZON_DAYS * DAY_MS, LAST_INSTANT_MS + 1);
  let remaining = minutes * MINUTE_MS;
  for (const [pieceStart, pieceEnd, offset] of pieces(c, start, end)) {
    const open = openInWall(c, pieceStart + offset, pieceEnd + offset);
    if (open >= remaining) return new Date(wallAfter(c, pieceStart + offset, pieceEnd + offset, remaining) - offset);
    remaining -= open;
  }
  if (end > LAST_INSTANT_MS) throw pastLastInstant(minutes);
  throw new BusinessTimeRangeError(
    'horizon',
    `${BUSINESS_TIME_HORIZON_DAYS} days (100 years)`,
    `the calendar has fewer than ${minutes} business minutes within ${BUSINESS_TIME_HORIZON_DAYS} days (100 years) of the start`,
  );
}

/**
 * The business minutes between two instants: how far a business clock runs from `from` to `to`.
 * Negative when `to` is before `from` (an overdue SLA), fractional when the instants are not on
 * whole minutes. The inverse of addBusinessMinutes: businessMinutesBetween(c, t, addBusinessMinutes(c, t, n)) === n.
 */
export function businessMinutesBetween(calendar: CalendarOrAlwaysOpen, from: Date, to: Date): number {
  const start = epochOf(from, 'from');
  const end = epochOf(to, 'to');
  if (end < start) return -businessMinutesBetween(calendar, to, from);
  if (calendar == null) return (end - start) / MINUTE_MS;
  const c = compile(calendar);
  let total = 0;
  for (const [pieceStart, pieceEnd, offset] of pieces(c, start, end))
    total += openInWall(c, pieceStart + offset, pieceEnd + offset);
  return total / MINUTE_MS;
}

/** Whether a business clock runs at an instant (the calendar is open then). */
export function isBusinessTime(calendar: CalendarOrAlwaysOpen, at: Date): boolean {
  const instant = epochOf(at, 'at');
  if (calendar == null) return true;
  const c = compile(calendar);
  const wall = instant + offsetAt(c.timeZone, instant);
  const day = Math.floor(wall / DAY_MS);
  const time = wall - day * DAY_MS;
  return c.week[weekdayOf(day)]!.some(([open, close]) => open <= time && time < close) && !isDayOff(c, day);
}

/**
 * The business minutes of the calendar's regular week (no holiday, no closed day, no change of
 * the clocks): what a policy's targets are held to (SLA policies refuse targets a calendar would
 * take years to reach).
 */
export function weeklyBusinessMinutes(calendar: BusinessCalendar): number {
  return compile(calendar).weekMs / MINUTE_MS;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The field-level errors of a calendar (empty when it is valid), in the shape of the problem
 * document's `errors`: fields named like 'hours.mon[0].end', under `prefix` when one is given
 * ('calendar' gives 'calendar.hours.mon[0].end'). `null` (24×7) is valid.
 */
export function validateCalendar(value: unknown, prefix = ''): FieldError[] {
  const errors: FieldError[] = [];
  const at = (field: string) => (prefix ? `${prefix}.${field}` : field);
  const fail = (field: string, message: string) => errors.push({ field: at(field), message });
  if (value === null) return errors;
  if (!isObject(value)) {
    errors.push({ field: prefix || '(body)', message: 'must be an object or null' });
    return errors;
  }

  if (typeof value.time_zone !== 'string') fail('time_zone', 'is required: an IANA time zone such as Europe/Berlin');
  else if (!isTimeZone(value.time_zone)) fail('time_zone', 'is not a known IANA time zone (such as Europe/Berlin)');

  if (!isObject(value.hours)) fail('hours', `is required: an object with ${WEEKDAYS.join(', ')}`);
  else {
    let intervals = 0;
    for (const key of Object.keys(value.hours)) {
      if (!(WEEKDAYS as readonly string[]).includes(key))
        fail(`hours.${key}`, `is not a day: use ${WEEKDAYS.join(', ')}`);
    }
    for (const day of WEEKDAYS) {
      const list = value.hours[day];
      if (!Array.isArray(list)) {
        fail(`hours.${day}`, 'is required: a list of {start, end} (empty when closed)');
        continue;
      }
      const parsed: Array<{ index: number; start: number; end: number }> = [];
      list.forEach((interval: unknown, index) => {
        const field = `hours.${day}[${index}]`;
        if (!isObject(interval)) {
          fail(field, 'must be an object {start, end}');
          return;
        }
        const start = parseTime(interval.start);
        const end = parseTime(interval.end, true);
        if (start === null) fail(`${field}.start`, 'must be a time HH:MM from 00:00 to 23:59');
        if (end === null) fail(`${field}.end`, 'must be a time HH:MM from 00:01 to 24:00');
        if (start === null || end === null) return;
        if (start >= end) fail(`${field}.end`, 'must be after start');
        else parsed.push({ index, start, end });
      });
      parsed.sort((a, b) => a.start - b.start);
      for (let i = 1; i < parsed.length; i++) {
        const [previous, current] = [parsed[i - 1]!, parsed[i]!];
        if (current.start < previous.end)
          fail(`hours.${day}[${current.index}]`, `overlaps hours.${day}[${previous.index}]`);
      }
      intervals += parsed.length;
    }
    if (intervals === 0 && errors.every((error) => !error.field.startsWith(at('hours')))) {
      fail('hours', 'must have business hours on at least one day');
    }
  }

  if (!('holidays' in value)) fail('holidays', 'is required: {country, region} or null');
  else if (value.holidays !== null) {
    const source = value.holidays;
    if (!isObject(source)) fail('holidays', 'must be {country, region} or null');
    else {
      if (source.country !== 'DE') fail('holidays.country', 'must be DE');
      if (source.region != null && !(GERMAN_STATES as readonly unknown[]).includes(source.region)) {
        fail('holidays.region', `must be a German state: ${GERMAN_STATES.join(', ')}`);
      }
    }
  }

  if (!Array.isArray(value.closed_days)) fail('closed_days', 'is required: a list of dates YYYY-MM-DD (may be empty)');
  else {
    value.closed_days.forEach((day: unknown, index) => {
      if (!isDateString(day)) fail(`closed_days[${index}]`, 'must be a date YYYY-MM-DD');
    });
  }
  return errors;
}
