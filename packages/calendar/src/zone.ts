/**
 * Wall-clock arithmetic in an IANA time zone: the offset of a zone at an instant, the local date of
 * an instant, and the instant of a local date and time. The rules come from the system's tz
 * database (tzif.ts: the files PostgreSQL and glibc read); on a machine without one, and for a
 * zone stored before that the database does not hold (ICU still knows `US/Pacific-New`), from
 * Node's Intl.
 */
import { fromEpochDay, toEpochDay } from './dates';
import { hasTzDatabase, systemZone, type OffsetRule } from './tzif';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** Zones served by Intl, one DateTimeFormat each (building one costs far more than using it); dropped whole past a bound, since any casing of a name is one. */
const intlZones = new Map<string, OffsetRule>();
const MAX_INTL_ZONES = 1_000;

// An Intl zone's answers at UTC midnights, which business-time asks for again and again (every due
// date of an SLA list walks the same days), each a formatted date: kept, a few bytes a day and
// zone, dropped whole if they ever grow large. A system zone answers as fast itself.
const midnightOffsets = new Map<string, Map<number, number>>();
const MAX_CACHED_MIDNIGHTS = 200_000;
let cachedMidnights = 0;

function atMidnight(timeZone: string, epochSeconds: number, format: OffsetRule): number {
  let zone = midnightOffsets.get(timeZone);
  if (!zone) midnightOffsets.set(timeZone, (zone = new Map()));
  let offset = zone.get(epochSeconds);
  if (offset === undefined) {
    if (cachedMidnights >= MAX_CACHED_MIDNIGHTS) {
      midnightOffsets.clear();
      midnightOffsets.set(timeZone, zone);
      zone.clear();
      cachedMidnights = 0;
    }
    offset = format(epochSeconds);
    zone.set(epochSeconds, offset);
    cachedMidnights++;
  }
  return offset;
}

/** A zone's offsets in seconds from Intl's formatting: the wall clock it shows, read as if it were UTC, less the instant. */
function intlZone(timeZone: string): OffsetRule {
  let rule = intlZones.get(timeZone);
  if (rule) return rule;
  // eslint-disable-next-line no-restricted-globals -- only where no tz database is installed, or it lacks the zone
  const formatter = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    era: 'short',
  });
  const format: OffsetRule = (epochSeconds) => {
    const parts: Record<string, string> = {};
    for (const part of formatter.formatToParts(epochSeconds * 1000)) parts[part.type] = part.value;
    const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year);
    const date = new Date(0);
    date.setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day));
    date.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second));
    return date.getTime() / 1000 - epochSeconds;
  };
  rule = (epochSeconds) =>
    epochSeconds % 86_400 === 0 ? atMidnight(timeZone, epochSeconds, format) : format(epochSeconds);
  if (intlZones.size >= MAX_INTL_ZONES) intlZones.clear();
  intlZones.set(timeZone, rule);
  return rule;
}

const rulesOf = (timeZone: string): OffsetRule => systemZone(timeZone) ?? intlZone(timeZone);

/**
 * Whether a name is an IANA time zone (not an offset like '+01:00'): one of the system's tz
 * database, in any case (`europe/berlin`), or, on a machine without one, one Intl knows.
 */
export function isTimeZone(timeZone: string): boolean {
  if (typeof timeZone !== 'string' || !/^[A-Za-z]/.test(timeZone)) return false;
  if (hasTzDatabase()) return systemZone(timeZone) !== null;
  try {
    // eslint-disable-next-line no-restricted-globals -- only where no tz database is installed
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** The zone's offset from UTC at an instant, in milliseconds (Berlin in summer: +7_200_000). */
export function offsetAt(timeZone: string, epochMs: number): number {
  return rulesOf(timeZone)(Math.floor(epochMs / 1000)) * 1000;
}

/**
 * The first instant after `epochMs` (in ms) at which the zone's offset may change: its offset is
 * the same from `epochMs` up to it (Infinity when it never changes again). From the tz database's
 * transitions and rule; a zone only Intl knows is probed at UTC midnights, as far as a year ahead.
 */
export function nextOffsetChange(timeZone: string, epochMs: number): number {
  const next = systemZone(timeZone)?.next;
  if (next) return Math.max(next(Math.floor(epochMs / 1000)) * 1000, epochMs + 1);
  const offset = offsetAt(timeZone, epochMs);
  let probe = (Math.floor(epochMs / DAY_MS) + 1) * DAY_MS;
  for (let day = 0; day < 366; day++, probe += DAY_MS) {
    if (offsetAt(timeZone, probe) === offset) continue;
    // The change lies within the day before `probe`: the first second whose offset differs.
    let low = Math.floor(Math.max(probe - DAY_MS, epochMs) / 1000);
    let high = probe / 1000;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (offsetAt(timeZone, middle * 1000) === offset) low = middle;
      else high = middle;
    }
    return high * 1000;
  }
  return probe;
}

/** The local 'YYYY-MM-DD' of an instant in a zone. */
export function localDateOf(timeZone: string, epochMs: number): string {
  return fromEpochDay(Math.floor((epochMs + offsetAt(timeZone, epochMs)) / DAY_MS));
}

/**
 * The instant at which a zone's clocks show `minutes` after the start of `date` (0–1440; 1440 is
 * the next day's midnight). A time the clocks skip (02:30 on the day summer time begins) is read
 * with the offset before the change, so it lands after the gap (03:30); a time they show twice
 * (02:30 when summer time ends) is the first of the two. That is the 'compatible' choice of
 * Temporal and of RFC 5545.
 */
export function instantOf(timeZone: string, date: string, minutes: number): number {
  const wall = toEpochDay(date) * DAY_MS + minutes * MINUTE_MS;
  const before = offsetAt(timeZone, wall - DAY_MS);
  const after = offsetAt(timeZone, wall + DAY_MS);
  if (before === after) return wall - before;
  // Offsets change within a day of this time: keep the readings the clocks really show.
  const candidates = [wall - before, wall - after].filter((epochMs) => offsetAt(timeZone, epochMs) === wall - epochMs);
  if (candidates.length === 0) return wall - before; // in the gap
  return Math.min(...candidates);
}
