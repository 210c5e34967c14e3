import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { instantOf, localDateOf, offsetAt, type BusinessCalendar } from '../src';
import type * as CalendarPackage from '../src';

const iso = (epochMs: number) => new Date(epochMs).toISOString();

describe('zone arithmetic', () => {
  test('When Berlin changes to summer and back, then the offset is +1 h before and +2 h between', () => {
    expect(offsetAt('Europe/Berlin', Date.parse('2026-03-29T00:59:59Z'))).toBe(3_600_000);
    expect(offsetAt('Europe/Berlin', Date.parse('2026-03-29T01:00:00Z'))).toBe(7_200_000);
    expect(offsetAt('Europe/Berlin', Date.parse('2026-10-25T00:59:59Z'))).toBe(7_200_000);
    expect(offsetAt('Europe/Berlin', Date.parse('2026-10-25T01:00:00Z'))).toBe(3_600_000);
  });

  test('When a local time exists once, then instantOf gives it; 24:00 is the next midnight', () => {
    expect(iso(instantOf('Europe/Berlin', '2026-11-23', 8 * 60 + 30))).toBe('2026-11-23T07:30:00.000Z');
    expect(iso(instantOf('Europe/Berlin', '2026-03-29', 1440))).toBe('2026-03-29T22:00:00.000Z');
    expect(iso(instantOf('America/New_York', '2026-07-01', 9 * 60))).toBe('2026-07-01T13:00:00.000Z');
  });

  test('When a local time is skipped or shown twice, then instantOf lands after the gap or on the first of the two', () => {
    expect(iso(instantOf('Europe/Berlin', '2026-03-29', 2 * 60 + 30))).toBe('2026-03-29T01:30:00.000Z'); // 03:30 summer time
    expect(iso(instantOf('Europe/Berlin', '2026-10-25', 2 * 60 + 30))).toBe('2026-10-25T00:30:00.000Z'); // 02:30 summer time
  });

  test('When an instant is just before or after local midnight, then its local date is that of the zone', () => {
    expect(localDateOf('Europe/Berlin', Date.parse('2026-06-30T22:30:00Z'))).toBe('2026-07-01');
    expect(localDateOf('America/New_York', Date.parse('2026-07-01T02:00:00Z'))).toBe('2026-06-30');
  });
});

describe('where the zone rules come from', () => {
  type Calendar = typeof CalendarPackage;
  /** A fresh copy of the package (no zone read or formatter built yet), loaded with TZDIR set to `tzdir` (undefined: unset). */
  function freshPackage(tzdir: string | undefined): Calendar {
    const before = process.env.TZDIR;
    if (tzdir === undefined) delete process.env.TZDIR;
    else process.env.TZDIR = tzdir;
    try {
      let loaded!: Calendar;
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- jest.isolateModules works on require only
        loaded = require('../src') as Calendar;
        // The database is found at the first question: ask it while TZDIR is set.
        loaded.isTimeZone('UTC');
      });
      return loaded;
    } finally {
      if (before === undefined) delete process.env.TZDIR;
      else process.env.TZDIR = before;
    }
  }
  const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'America/Santiago', 'Asia/Kolkata'];
  let emptyDir: string;
  beforeAll(() => {
    emptyDir = mkdtempSync(path.join(tmpdir(), 'no-tzdata-'));
  });
  afterAll(() => rmSync(emptyDir, { recursive: true, force: true }));
  afterEach(() => jest.restoreAllMocks());

  test(
    'When zones, offsets, local dates, instants and business minutes are asked on a machine with a tz ' +
      'database, then ICU is never asked (its first DateTimeFormat costs a process ~13 MB)',
    () => {
      const calendar = freshPackage(undefined);
      const formats = jest.spyOn(Intl, 'DateTimeFormat');
      expect(calendar.isTimeZone('Europe/Berlin')).toBe(true);
      expect(calendar.isTimeZone('europe/berlin')).toBe(true);
      expect(calendar.isTimeZone('Mars/Olympus')).toBe(false);
      expect(calendar.offsetAt('Asia/Kolkata', Date.parse('2026-01-01T00:00:00Z'))).toBe(19_800_000);
      expect(calendar.localDateOf('America/New_York', Date.parse('2026-07-01T02:00:00Z'))).toBe('2026-06-30');
      expect(iso(calendar.instantOf('Europe/Berlin', '2026-03-29', 2 * 60 + 30))).toBe('2026-03-29T01:30:00.000Z');
      const week = { start: '08:00', end: '17:00' };
      const munich: BusinessCalendar = {
        time_zone: 'Europe/Berlin',
        hours: { mon: [week], tue: [week], wed: [week], thu: [week], fri: [week], sat: [], sun: [] },
        holidays: { country: 'DE', region: 'DE-BY' },
        closed_days: [],
      };
      expect(iso(calendar.addBusinessMinutes(munich, new Date('2026-11-20T16:30:00+01:00'), 60).getTime())).toBe(
        '2026-11-23T07:30:00.000Z',
      );
      expect(formats).not.toHaveBeenCalled();
    },
  );

  test('When the machine has no tz database, then Intl knows the zones and gives the offsets the database gives, 1970 to 2037', () => {
    const system = freshPackage(undefined);
    const intl = freshPackage(emptyDir);
    expect(intl.isTimeZone('Europe/Berlin')).toBe(true);
    expect(intl.isTimeZone('europe/berlin')).toBe(true);
    expect(intl.isTimeZone('Mars/Olympus')).toBe(false);
    const differ: string[] = [];
    for (const zone of ZONES) {
      for (
        let t = Date.parse('1970-01-01T00:00:00Z');
        t < Date.parse('2037-12-31T00:00:00Z');
        t += 86_400_000 * 3 + 3_599_000
      ) {
        if (intl.offsetAt(zone, t) !== system.offsetAt(zone, t)) differ.push(`${zone} ${iso(t)}`);
      }
    }
    expect(differ.slice(0, 5)).toEqual([]);
  });

  test('When a stored zone is one only ICU still knows, then its offsets come from Intl, though a new calendar may no longer name it', () => {
    const calendar = freshPackage(undefined);
    expect(calendar.offsetAt('US/Pacific-New', Date.parse('2026-07-01T00:00:00Z'))).toBe(-7 * 3_600_000);
    expect(calendar.isTimeZone('US/Pacific-New')).toBe(false);
    expect(calendar.isTimeZone('US/Pacific')).toBe(true);
  });
});
