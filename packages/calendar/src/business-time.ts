/**
 * Business-hours calendars: when a clock that only runs in opening hours (an SLA) reaches a number
 * of minutes, and how many such minutes lie between two instants. The work goes a day at a time,
 * never a minute: each day gives a few intervals of real instants, so a daylight-saving change, a
 * holiday or a closed day is just a shorter, or an empty, day.
 */
import { WEEKDAYS, fromEpochDay, isDateString, type Weekday } from './dates';
import { GERMAN_STATES, assertRegion, isHolidayUnchecked, type GermanState, type HolidayRegion } from './holidays';
import { isTimeZone, offsetAt } from './zone';

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
/** How far a clock may look for enough open time before it gives up: past that, the calendar is broken. */
const MAX_DAYS = 366 * 100;
const TIME_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes after midnight of an 'HH:MM' (00:00–23:59, and '24:00' if `end`), or null. */
export function parseTime(value: unknown, end = false): number | null {
  if (typeof value !== 'string') return null;
  if (end && value === '24:00') return 1440;
  const match = TIME_PATTERN.exec(value);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

interface Compiled {
  timeZone: string;
  week: Record<Weekday, Array<[number, number]>>;
  region: HolidayRegion | null;
  closed: Set<string>;
}

function compile(calendar: BusinessCalendar): Compiled {
  const week = {} as Compiled['week'];
  let open = false;
  for (const day of WEEKDAYS) {
    week[day] = (calendar.hours[day] ?? [])
      .map((interval): [number, number] => [parseTime(interval.start) ?? NaN, parseTime(interval.end, true) ?? NaN])
      .sort((a, b) => a[0] - b[0]);
    if (week[day].some(([start, end]) => !(start < end))) throw new RangeError(`malformed business hours on ${day}: check the calendar with validateCalendar`);
    open ||= week[day].length > 0;
  }
  if (!open) throw new RangeError('the calendar has no business hours: check it with validateCalendar');
  const region = calendar.holidays ? (calendar.holidays.region ?? 'DE') : null;
  if (region) assertRegion(region);
  return {
    timeZone: calendar.time_zone,
    week,
    region,
    closed: new Set(calendar.closed_days),
  };
}

/**
 * The open intervals from an instant on, as [start, end) instants in ms, in order. Business hours
 * are wall-clock hours: open while the zone's clocks show a time inside an interval of an open
 * day. So the hour the clocks skip when summer time begins is no business time, and the hour they
 * show twice when it ends is business time twice. The timeline goes by UTC days, each cut where
 * the zone's offset changes into pieces of one offset; a piece's instants map onto wall-clock
 * times by adding that offset.
 */
function* openIntervals(compiled: Compiled, fromMs: number): Generator<[number, number]> {
  const { timeZone } = compiled;
  const firstDay = Math.floor(fromMs / DAY_MS);
  let offset = offsetAt(timeZone, firstDay * DAY_MS);
  for (let utcDay = firstDay; utcDay < firstDay + MAX_DAYS; utcDay++) {
    const windowStart = utcDay * DAY_MS;
    const windowEnd = windowStart + DAY_MS;
    const offsetAtEnd = offsetAt(timeZone, (utcDay + 1) * DAY_MS);
    const pieces: Array<[number, number, number]> = [];
    if (offsetAtEnd === offset) pieces.push([windowStart, windowEnd, offset]);
    else {
      const change = firstChange(timeZone, windowStart, windowEnd, offset);
      pieces.push([windowStart, change, offset], [change, windowEnd, offsetAt(timeZone, change)]);
    }
    for (const [pieceStart, pieceEnd, pieceOffset] of pieces) {
      const wallStart = pieceStart + pieceOffset;
      const wallEnd = pieceEnd + pieceOffset;
      for (let epochDay = Math.floor(wallStart / DAY_MS); epochDay * DAY_MS < wallEnd; epochDay++) {
        const hours = compiled.week[WEEKDAYS[(((epochDay + 3) % 7) + 7) % 7]!]; // 1970-01-01 was a Thursday
        if (hours.length === 0) continue;
        const date = fromEpochDay(epochDay);
        if (compiled.closed.has(date) || (compiled.region && isHolidayUnchecked(compiled.region, date))) continue;
        for (const [open, close] of hours) {
          const start = Math.max(epochDay * DAY_MS + open * MINUTE_MS, wallStart) - pieceOffset;
          const end = Math.min(epochDay * DAY_MS + close * MINUTE_MS, wallEnd) - pieceOffset;
          if (end > fromMs && end > start) yield [Math.max(start, fromMs), end];
        }
      }
    }
    offset = offsetAtEnd;
  }
  throw new RangeError(`the calendar has no open time within ${MAX_DAYS} days`);
}

/** The first instant after `from` (up to `to`) whose offset is not `offset`: a zone changes on a whole second. */
function firstChange(timeZone: string, from: number, to: number, offset: number): number {
  let low = from / 1000; // has `offset`
  let high = to / 1000; // has another
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(timeZone, middle * 1000) === offset) low = middle;
    else high = middle;
  }
  return high * 1000;
}

function epochOf(value: Date, name: string): number {
  const epochMs = value instanceof Date ? value.getTime() : NaN;
  if (!Number.isFinite(epochMs)) throw new RangeError(`${name} must be a valid Date`);
  return epochMs;
}

/**
 * The instant `minutes` business minutes after `from`: `from` itself for 0, else the moment the
 * last of those minutes ends, so a clock that runs out exactly at closing time is due at closing
 * time, not at the next opening. `from` may lie outside business hours (the clock waits for the
 * next opening).
 */
export function addBusinessMinutes(calendar: CalendarOrAlwaysOpen, from: Date, minutes: number): Date {
  const start = epochOf(from, 'from');
  if (!Number.isFinite(minutes) || minutes < 0) throw new RangeError('minutes must be a finite number ≥ 0');
  if (calendar == null || minutes === 0) return new Date(start + minutes * MINUTE_MS);
  let remaining = minutes * MINUTE_MS;
  for (const [open, close] of openIntervals(compile(calendar), start)) {
    if (close - open >= remaining) return new Date(open + remaining);
    remaining -= close - open;
  }
  throw new Error('unreachable: openIntervals ends by throwing');
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
  let total = 0;
  for (const [open, close] of openIntervals(compile(calendar), start)) {
    if (open >= end) break;
    total += Math.min(close, end) - open;
  }
  return total / MINUTE_MS;
}

/** Whether a business clock runs at an instant (the calendar is open then). */
export function isBusinessTime(calendar: CalendarOrAlwaysOpen, at: Date): boolean {
  const instant = epochOf(at, 'at');
  if (calendar == null) return true;
  const [first] = openIntervals(compile(calendar), instant);
  return first !== undefined && first[0] === instant;
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
      if (!(WEEKDAYS as readonly string[]).includes(key)) fail(`hours.${key}`, `is not a day: use ${WEEKDAYS.join(', ')}`);
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
        if (current.start < previous.end) fail(`hours.${day}[${current.index}]`, `overlaps hours.${day}[${previous.index}]`);
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
