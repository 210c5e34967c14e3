/**
 * Germany's public holidays as rules: for the whole country and for each state, the days of type
 * 'public' of date-holidays' data for Germany (github.com/commenthol/date-holidays; data CC BY-SA
 * 3.0, from Wikipedia), written out. The library computes every country's calendars (Chinese,
 * Hebrew, Hijri, equinoxes, moment-timezone's zone data): loading it cost a service far more memory
 * than these few fixed dates and Easter offsets need (docs/performance.md, "Memory").
 *
 * test/holidays.test.ts holds these rules to the library (a devDependency): every region, every year
 * from 1990 to 2060, date and name. After upgrading date-holidays, a failing comparison names the
 * region and year whose rules changed (a new state holiday, a one-off day): write the change here.
 */

import { compareDates } from './dates';

/** A holiday's month and day ('MM-DD') in a year. */
type DayIn = (year: number) => string;

interface Rule {
  name: string;
  day: DayIn;
  /** The first year it is kept. */
  from?: number;
  /** The only year it is kept (a one-off day). */
  only?: number;
}

const fixed =
  (monthDay: string): DayIn =>
  () =>
    monthDay;

/** The UTC midnight of a day: Date.UTC would read the years 0–99 as 1900–1999 (a weekday off, and a month-day off in leap years). */
function utcDay(year: number, monthIndex: number, day: number): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  return date;
}

/** Easter Sunday (Gregorian calendar: the anonymous algorithm of Meeus, Jones and Butcher), as a UTC midnight. */
function easterSunday(year: number): Date {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return utcDay(year, month - 1, day);
}

const monthDayOf = (date: Date) => date.toISOString().slice(5, 10);

/** Easter Sunday plus a number of days (Karfreitag −2, Pfingstmontag +50, Fronleichnam +60). */
const easter =
  (days: number): DayIn =>
  (year) => {
    const date = easterSunday(year);
    date.setUTCDate(date.getUTCDate() + days);
    return monthDayOf(date);
  };

/** Buß- und Bettag: the last Wednesday before 23 November (16–22 November). */
const wednesdayBefore23November: DayIn = (year) => {
  const date = utcDay(year, 10, 22);
  date.setUTCDate(22 - ((date.getUTCDay() - 3 + 7) % 7));
  return monthDayOf(date);
};

const REFORMATIONSTAG: Rule = { name: 'Reformationstag', day: fixed('10-31') };
const FRONLEICHNAM: Rule = { name: 'Fronleichnam', day: easter(60) };
const ALLERHEILIGEN: Rule = { name: 'Allerheiligen', day: fixed('11-01') };
const HEILIGE_DREI_KOENIGE: Rule = { name: 'Heilige Drei Könige', day: fixed('01-06') };
const FRAUENTAG: Rule = { name: 'Internationaler Frauentag', day: fixed('03-08') };

/** The holidays all of Germany keeps (and the 500th Reformationstag, kept everywhere in 2017). */
const NATIONWIDE: Rule[] = [
  { name: 'Neujahr', day: fixed('01-01') },
  { name: 'Karfreitag', day: easter(-2) },
  { name: 'Ostermontag', day: easter(1) },
  { name: 'Maifeiertag', day: fixed('05-01') },
  { name: 'Christi Himmelfahrt', day: easter(39) },
  { name: 'Pfingstmontag', day: easter(50) },
  { name: 'Tag der Deutschen Einheit', day: fixed('10-03') },
  { name: '1. Weihnachtstag', day: fixed('12-25') },
  { name: '2. Weihnachtstag', day: fixed('12-26') },
  { ...REFORMATIONSTAG, only: 2017 },
];

/** What each state keeps besides (ISO 3166-2 without 'DE-'). */
const STATES: Record<string, Rule[]> = {
  BW: [HEILIGE_DREI_KOENIGE, FRONLEICHNAM, ALLERHEILIGEN],
  BY: [HEILIGE_DREI_KOENIGE, FRONLEICHNAM, ALLERHEILIGEN],
  BE: [
    { ...FRAUENTAG, from: 2019 },
    { name: 'Tag der Befreiung (75. Jahrestag)', day: fixed('05-08'), only: 2020 },
    { name: 'Tag der Befreiung (80. Jahrestag)', day: fixed('05-08'), only: 2025 },
    { name: '75-jähriges Jubiläum des Volksaufstands in der DDR', day: fixed('06-17'), only: 2028 },
  ],
  BB: [{ name: 'Ostersonntag', day: easter(0) }, { name: 'Pfingstsonntag', day: easter(49) }, REFORMATIONSTAG],
  HB: [{ ...REFORMATIONSTAG, from: 2018 }],
  HH: [{ ...REFORMATIONSTAG, from: 2018 }],
  HE: [FRONLEICHNAM],
  MV: [{ ...FRAUENTAG, from: 2023 }, REFORMATIONSTAG],
  NI: [{ ...REFORMATIONSTAG, from: 2018 }],
  NW: [FRONLEICHNAM, ALLERHEILIGEN],
  RP: [FRONLEICHNAM, ALLERHEILIGEN],
  SL: [FRONLEICHNAM, { name: 'Mariä Himmelfahrt', day: fixed('08-15') }, ALLERHEILIGEN],
  SN: [REFORMATIONSTAG, { name: 'Buß- und Bettag', day: wednesdayBefore23November }],
  ST: [HEILIGE_DREI_KOENIGE, REFORMATIONSTAG],
  SH: [{ ...REFORMATIONSTAG, from: 2018 }],
  TH: [{ name: 'Weltkindertag', day: fixed('09-20'), from: 2019 }, REFORMATIONSTAG],
};

/**
 * The public holidays of Germany ('DE') or of a state ('BY', …) in a year, in date order. Two
 * holidays on one date are both listed (Christi Himmelfahrt on 1 May 2008); the same holiday twice
 * (Brandenburg's Reformationstag and 2017's nationwide one) once.
 */
export function germanHolidays(state: string | undefined, year: number): { date: string; name: string }[] {
  const days = new Map<string, { date: string; name: string }>();
  for (const rule of [...NATIONWIDE, ...(state ? (STATES[state] ?? []) : [])]) {
    if ((rule.only !== undefined && rule.only !== year) || (rule.from !== undefined && year < rule.from)) continue;
    const date = `${String(year).padStart(4, '0')}-${rule.day(year)}`;
    days.set(`${date} ${rule.name}`, { date, name: rule.name });
  }
  return [...days.values()].sort((a, b) => compareDates(a.date, b.date));
}
