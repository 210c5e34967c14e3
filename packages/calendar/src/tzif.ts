/**
 * A time zone's offsets from the tz database's compiled files (TZif, RFC 8536): the files glibc,
 * PostgreSQL (Debian builds it `--with-system-tzdata`) and Go read, and that the operating system
 * keeps current. Node's other source, ICU, loads its data into every process at the first
 * `Intl.DateTimeFormat` and more at the first formatting (docs/performance.md, "Memory"); a
 * zone's file is small and read once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { epochDayOf, daysInMonth } from './dates';

const DAY_S = 86_400;

/**
 * A zone's offset from UTC, in seconds, at an instant given in seconds since 1970-01-01T00:00:00Z;
 * with `next` when the rule knows its changes: the first instant after one at which the offset
 * may change (Infinity when it never does again), so that a span is cut where the offset changes
 * rather than probed day by day.
 */
export type OffsetRule = ((epochSeconds: number) => number) & { next?: (epochSeconds: number) => number };

export class TzifError extends Error {}

/**
 * The rules of a TZif file: its transitions, and after the last one the POSIX TZ string of its
 * footer (version 2 and later), as RFC 8536 §3.2 says. Files with leap seconds (the `right/` tree)
 * count seconds differently and are refused, as is anything malformed.
 */
export function parseTzif(bytes: Uint8Array): OffsetRule {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = (at: number) => {
    if (bytes.length < at + 44 || view.getUint32(at) !== 0x545a6966) throw new TzifError('not a TZif file'); // "TZif"
    const count = (n: number) => view.getUint32(at + 20 + 4 * n);
    return {
      version: bytes[at + 4]!,
      isut: count(0),
      isstd: count(1),
      leap: count(2),
      time: count(3),
      type: count(4),
      chars: count(5),
    };
  };
  const first = header(0);
  const v1Size = first.time * 5 + first.type * 6 + first.chars + first.leap * 8 + first.isstd + first.isut;
  // Version 2+ repeats the data with 64-bit times, followed by the footer; version 1 has 32-bit times only.
  const wide = first.version >= 0x32;
  const at = wide ? 44 + v1Size : 0;
  const counts = wide ? header(at) : first;
  if (counts.leap > 0) throw new TzifError('leap-second files are not supported');
  if (counts.type === 0) throw new TzifError('no local time types');
  const timeSize = wide ? 8 : 4;
  let cursor = at + 44;
  const dataEnd = cursor + counts.time * (timeSize + 1) + counts.type * 6 + counts.chars + counts.isstd + counts.isut;
  if (bytes.length < dataEnd) throw new TzifError('truncated');

  const transitions = new Float64Array(counts.time);
  for (let i = 0; i < counts.time; i++, cursor += timeSize) {
    transitions[i] = wide ? Number(view.getBigInt64(cursor)) : view.getInt32(cursor);
  }
  const typeOfTransition = bytes.subarray(cursor, cursor + counts.time);
  cursor += counts.time;
  const typeOffsets = new Int32Array(counts.type);
  for (let i = 0; i < counts.type; i++, cursor += 6) typeOffsets[i] = view.getInt32(cursor);
  const offsets = Int32Array.from(typeOfTransition, (type) => {
    if (type >= counts.type) throw new TzifError('a transition names no local time type');
    return typeOffsets[type]!;
  });

  const footer = wide ? footerOf(bytes, dataEnd) : '';
  const afterLast = footer ? posixTzRule(footer) : null;
  const last = counts.time - 1;
  const next = (t: number): number => {
    if (last < 0 || t >= transitions[last]!) return afterLast?.next?.(t) ?? Infinity;
    // The first transition after t.
    let low = -1;
    let high = last;
    while (high - low > 1) {
      const middle = (low + high) >> 1;
      if (transitions[middle]! <= t) low = middle;
      else high = middle;
    }
    return transitions[high]!;
  };
  return Object.assign(
    (t: number) => {
      if (last < 0) return afterLast ? afterLast(t) : typeOffsets[0]!;
      if (t < transitions[0]!) return typeOffsets[0]!;
      if (t >= transitions[last]!) return afterLast ? afterLast(t) : offsets[last]!;
      // The last transition at or before t.
      let low = 0;
      let high = last;
      while (high - low > 1) {
        const middle = (low + high) >>> 1;
        if (transitions[middle]! <= t) low = middle;
        else high = middle;
      }
      return offsets[low]!;
    },
    { next },
  );
}

function footerOf(bytes: Uint8Array, at: number): string {
  if (bytes[at] !== 0x0a) throw new TzifError('no footer');
  const end = bytes.indexOf(0x0a, at + 1);
  if (end < 0) throw new TzifError('unterminated footer');
  return Buffer.from(bytes.subarray(at + 1, end)).toString('latin1');
}

/** A rule date of a POSIX TZ string: `Jn` (1–365, 29 February never counted), `n` (0–365) or `Mm.w.d`. */
type RuleDate =
  { kind: 'julian1' | 'julian0'; day: number } | { kind: 'month'; month: number; week: number; weekday: number };
interface RuleTime {
  date: RuleDate;
  /** Seconds after local midnight, in the time the clocks show before the change (may be negative or past 24 h: RFC 8536 §3.3.1). */
  seconds: number;
}

/**
 * The offsets of a POSIX TZ string as TZif footers write them (`CET-1CEST,M3.5.0,M10.5.0/3`,
 * `<-03>3`, `IST-2IDT,M3.4.4/26,M10.5.0`). POSIX counts offsets west of Greenwich as positive;
 * the rule answers them east-positive, like the rest of this package.
 */
export function posixTzRule(tz: string): OffsetRule {
  let i = 0;
  const fail = (why: string): never => {
    throw new TzifError(`TZ string ${JSON.stringify(tz)}: ${why}`);
  };
  const name = () => {
    const start = i;
    if (tz[i] === '<') {
      const close = tz.indexOf('>', i);
      if (close < 0) fail('an unclosed <name>');
      i = close + 1;
    } else {
      while (i < tz.length && /[A-Za-z]/.test(tz[i]!)) i++;
    }
    if (i - start < 3) fail('a zone abbreviation of fewer than three characters');
  };
  const number = () => {
    const start = i;
    while (i < tz.length && tz[i]! >= '0' && tz[i]! <= '9') i++;
    if (i === start) fail(`a number expected at ${start}`);
    return Number(tz.slice(start, i));
  };
  /** [+-]hh[:mm[:ss]] in seconds. */
  const duration = () => {
    const sign = tz[i] === '-' ? -1 : 1;
    if (tz[i] === '-' || tz[i] === '+') i++;
    let seconds = number() * 3600;
    if (tz[i] === ':') {
      i++;
      seconds += number() * 60;
      if (tz[i] === ':') {
        i++;
        seconds += number();
      }
    }
    return sign * seconds;
  };
  const ruleTime = (): RuleTime => {
    let date: RuleDate;
    if (tz[i] === 'M') {
      i++;
      const month = number();
      if (tz[i++] !== '.') fail('Mm.w.d expected');
      const week = number();
      if (tz[i++] !== '.') fail('Mm.w.d expected');
      const weekday = number();
      if (month < 1 || month > 12 || week < 1 || week > 5 || weekday > 6) fail('Mm.w.d out of range');
      date = { kind: 'month', month, week, weekday };
    } else if (tz[i] === 'J') {
      i++;
      date = { kind: 'julian1', day: number() };
      if (date.day < 1 || date.day > 365) fail('Jn out of range');
    } else {
      date = { kind: 'julian0', day: number() };
      if (date.day > 365) fail('n out of range');
    }
    let seconds = 7200;
    if (tz[i] === '/') {
      i++;
      seconds = duration();
    }
    return { date, seconds };
  };

  name();
  const standard = -duration();
  if (i === tz.length) return Object.assign(() => standard, { next: () => Infinity });
  name();
  const daylight = tz[i] === ',' || i === tz.length ? standard + 3600 : -duration();
  // TZif footers always give the rule when they name a daylight time (RFC 8536 §3.3).
  if (tz[i++] !== ',') fail('daylight time without its rule');
  const start = ruleTime();
  if (tz[i++] !== ',') fail('daylight time without its end');
  const end = ruleTime();
  if (i !== tz.length) fail(`unexpected ${JSON.stringify(tz.slice(i))}`);

  /** A year's two changes in UTC seconds: into daylight time (`start` read in standard time) and out of it (`end` in daylight time). */
  const changes = new Map<number, [number, number]>();
  const changesOf = (year: number): [number, number] => {
    let both = changes.get(year);
    if (!both) {
      both = [
        localDay(start.date, year) * DAY_S + start.seconds - standard,
        localDay(end.date, year) * DAY_S + end.seconds - daylight,
      ];
      if (changes.size >= 1_000) changes.clear();
      changes.set(year, both);
    }
    return both;
  };
  const next = (t: number): number => {
    const year = new Date(t * 1000).getUTCFullYear();
    let first = Infinity;
    for (let y = year - 1; y <= year + 2; y++) {
      for (const change of changesOf(y)) if (change > t && change < first) first = change;
    }
    return first;
  };
  return Object.assign(
    (t: number) => {
      // The last change at or before t, among those of the years around it, holds. (The neighbouring
      // years cover rules whose change falls in another UTC year, such as daylight time all year,
      // `EST5EDT,0/0,J365/25`; of two changes at one instant, the later year's, or a year's end,
      // comes last, as the rule lists them.)
      const year = new Date(t * 1000).getUTCFullYear();
      let offset = standard;
      let latest = -Infinity;
      for (let y = year - 1; y <= year + 1; y++) {
        const [into, outOf] = changesOf(y);
        if (into <= t && into >= latest) [latest, offset] = [into, daylight];
        if (outOf <= t && outOf >= latest) [latest, offset] = [outOf, standard];
      }
      return offset;
    },
    { next },
  );
}

/** The day (days since 1970-01-01) a rule date names in a year. */
function localDay(date: RuleDate, year: number): number {
  const january1 = epochDayOf(year, 1, 1);
  switch (date.kind) {
    case 'julian1':
      // 1–365 with 29 February never counted: day 60 is always 1 March.
      return january1 + date.day - 1 + (daysInMonth(year, 2) === 29 && date.day >= 60 ? 1 : 0);
    case 'julian0':
      return january1 + date.day;
    case 'month': {
      const first = epochDayOf(year, date.month, 1);
      const firstWeekday = (((first + 4) % 7) + 7) % 7; // 1970-01-01 was a Thursday; Sunday is 0
      let day = first + ((date.weekday - firstWeekday + 7) % 7) + (date.week - 1) * 7;
      // Week 5 is the month's last such weekday.
      while (day >= first + daysInMonth(year, date.month)) day -= 7;
      return day;
    }
  }
}

/**
 * Names of the tz database's files that are zones: `Europe/Berlin`, `UTC`, `Etc/GMT+5`,
 * `America/Argentina/Buenos_Aires`; not its other files (`posixrules`, `localtime`, `zone.tab`,
 * `posix/…`, `right/…`). `Factory` ("local time unknown") is a file but no zone: ICU refuses it too.
 */
const ZONE_NAME = /^(?!Factory$)[A-Z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;

/** Where the tz database is: `TZDIR`, else `/usr/share/zoneinfo`, as glibc looks. */
const tzDirectory = () => process.env.TZDIR || '/usr/share/zoneinfo';

/** The database's zone names by their lower case (PostgreSQL, too, takes `europe/berlin`), or null when this machine has none. */
let names: Map<string, string> | null | undefined;

function zoneNames(): Map<string, string> | null {
  if (names === undefined) {
    try {
      const found = readdirSync(tzDirectory(), { recursive: true, encoding: 'utf8' }).filter((name) =>
        ZONE_NAME.test(name),
      );
      names = found.length ? new Map(found.map((name) => [name.toLowerCase(), name])) : null;
    } catch {
      names = null;
    }
  }
  return names;
}

/** The zones read so far, by their file's name: the database holds ~600, so this stays small whatever casings callers use. */
const loaded = new Map<string, OffsetRule>();

/** Whether this machine has a tz database (then it alone decides which zones exist). */
export function hasTzDatabase(): boolean {
  return zoneNames() !== null;
}

/** The rules of a zone from the system's tz database, or null when it has no such zone (or its file is not TZif). */
export function systemZone(name: string): OffsetRule | null {
  let rule = loaded.get(name);
  if (rule) return rule;
  const file = typeof name === 'string' ? zoneNames()?.get(name.toLowerCase()) : undefined;
  if (!file) return null;
  rule = loaded.get(file);
  if (rule) return rule;
  try {
    rule = parseTzif(readFileSync(path.join(tzDirectory(), file)));
  } catch {
    return null; // a folder (`Europe`), or a file that is not a zone's
  }
  loaded.set(file, rule);
  return rule;
}
