// The working-time record an inspector (Aufsichtsbehörde, §17 ArbZG) asks for: the days, the
// weeks, and the two rules that only a longer span shows. Pure functions: no I/O.
import { addDays, eachDate, isoWeekString, weekdayOf } from '@msp/calendar';
import { dayOfYear } from '../calendar';

/**
 * §3 ArbZG: "Die werktägliche Arbeitszeit der Arbeitnehmer darf acht Stunden nicht überschreiten.
 * Sie kann auf bis zu zehn Stunden nur verlängert werden, wenn innerhalb von sechs Kalendermonaten
 * oder innerhalb von 24 Wochen im Durchschnitt acht Stunden werktäglich nicht überschritten werden."
 * We take the 24 weeks (168 days) ending at `to`, and Werktage as the law counts them: Monday to
 * Saturday, public holidays on them included (every such span has 144). The average is the worked
 * minutes of those days ÷ 144.
 */
export const AVERAGE_WEEKS = 24;
export const AVERAGE_WORKING_DAYS = AVERAGE_WEEKS * 6;
export const AVERAGE_MAX_MINUTES = 480;

/** §11 (1) ArbZG: "Mindestens 15 Sonntage im Jahr müssen beschäftigungsfrei bleiben." */
export const MIN_FREE_SUNDAYS = 15;

/** The record may span at most a year: `to` must come before the same day a year after `from`. */
export function yearAfter(from: string): string {
  return `${String(Number(from.slice(0, 4)) + 1).padStart(4, '0')}${from.slice(4)}`;
}

export interface RecordWarning {
  code: 'average_over_8_hours' | 'too_few_free_sundays';
  message: string;
}

export interface AverageSpan {
  from: string;
  to: string;
  workedMinutes: number;
  workingDays: number;
  /** Minutes per Werktag, two decimals. */
  averageMinutes: number;
}

/** The 24 weeks ending at `to` (both ends included). */
export function averageSpan(to: string): { from: string; to: string } {
  return { from: addDays(to, -(AVERAGE_WEEKS * 7 - 1)), to };
}

export function average(span: { from: string; to: string }, workedMinutes: number): AverageSpan {
  return {
    ...span,
    workedMinutes,
    workingDays: AVERAGE_WORKING_DAYS,
    averageMinutes: Math.round((workedMinutes / AVERAGE_WORKING_DAYS) * 100) / 100,
  };
}

export interface SundayCount {
  year: number;
  sundays: number;
  worked: number;
  free: number;
}

/** The Sundays of `year` (52 or 53), how many had work, how many stayed free. */
export function sundayCount(year: number, worked: number): SundayCount {
  const count = eachDate(dayOfYear(year, '01-01'), dayOfYear(year, '12-31')).filter(
    (day) => weekdayOf(day) === 'sun',
  ).length;
  return { year, sundays: count, worked, free: count - worked };
}

export function recordWarnings(avg: AverageSpan, sundays: SundayCount): RecordWarning[] {
  const warnings: RecordWarning[] = [];
  // Compared in whole minutes, not the rounded average: one minute over is over.
  if (avg.workedMinutes > AVERAGE_MAX_MINUTES * avg.workingDays) {
    warnings.push({
      code: 'average_over_8_hours',
      message:
        `${avg.averageMinutes} min of work per Werktag (Monday–Saturday) on average over the ${AVERAGE_WEEKS} weeks ${avg.from} – ${avg.to}; ` +
        `§3 ArbZG allows 10 h a day only if the average stays within 8 h (${AVERAGE_MAX_MINUTES} min).`,
    });
  }
  if (sundays.free < MIN_FREE_SUNDAYS) {
    warnings.push({
      code: 'too_few_free_sundays',
      message:
        `${sundays.worked} of the ${sundays.sundays} Sundays of ${sundays.year} have work, so only ` +
        `${sundays.free} stay free; §11 (1) ArbZG requires at least ${MIN_FREE_SUNDAYS}.`,
    });
  }
  return warnings;
}

export interface RecordDay {
  date: string;
  workedMinutes: number;
  breakMinutes: number;
  standbyMinutes: number;
  warnings: { code: string; message: string; other_date?: string }[];
}

export interface RecordWeek {
  week: string;
  workedMinutes: number;
  standbyMinutes: number;
}

/** The ISO weeks the span touches, in order, with the totals of its days in each. */
export function weekTotals(from: string, to: string, days: readonly RecordDay[]): RecordWeek[] {
  const weeks = new Map<string, RecordWeek>();
  for (
    let day = from;
    day <= to;
    day = addDays(day, 7 - ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].indexOf(weekdayOf(day)))
  ) {
    const week = isoWeekString(day);
    weeks.set(week, { week, workedMinutes: 0, standbyMinutes: 0 });
  }
  for (const day of days) {
    const week = weeks.get(isoWeekString(day.date))!;
    week.workedMinutes += day.workedMinutes;
    week.standbyMinutes += day.standbyMinutes;
  }
  return [...weeks.values()];
}
