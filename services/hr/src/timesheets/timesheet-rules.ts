// The German working-time rules (Arbeitszeitgesetz), the one place that knows them:
// §3 at most 10 h of work a day; §4 breaks of 30 min over 6 h and 45 min over 9 h of work, where
// only interruptions of at least 15 minutes count as a break, and no more than 6 h of work in a row
// without one; §5 at least 11 h of rest between one day's work and the next; §9–§10 no work on
// Sundays and public holidays, with exceptions (so a warning, not a refusal).
// Standby (Rufbereitschaft) is paid but is not working time: none of these rules counts it.
// Times are the local `HH:MM` of the day in the contract's time zone; every duration the rules
// count is real minutes (a day the clocks change has 1380 or 1500 of them), through a DayClock.
import type { FieldError } from '@msp/http';
import type { DayClock } from '../calendar';

export const TIMESHEET_CATEGORIES = ['normal', 'overtime', 'on_call', 'travel', 'training', 'standby'] as const;
export type TimesheetCategory = (typeof TIMESHEET_CATEGORIES)[number];

/**
 * Rufbereitschaft: reachable and ready to start, but free where to be. Paid (its own wage type in the
 * payroll export) but not working time under the ArbZG, unlike `on_call` (Bereitschaftsdienst at a
 * place the employer chooses, which is working time). Excluded from §3, §4, §5 and `worked_minutes`.
 */
export const STANDBY: TimesheetCategory = 'standby';
export const isWorkingTime = (category: TimesheetCategory): boolean => category !== STANDBY;

/** §3 ArbZG: the longest working day (10 h). */
export const MAX_WORK_MINUTES = 600;
/** §4 ArbZG: a shorter interruption is not a break. */
export const MIN_BREAK_MINUTES = 15;
/** §4 ArbZG: over this much work, this much break. The stricter threshold first. */
const BREAK_RULES = [
  { over: 540, needs: 45 },
  { over: 360, needs: 30 },
] as const;
/** §4 sentence 3 ArbZG: the most work in a row without a break of at least 15 minutes (6 h). */
export const MAX_WORK_BLOCK_MINUTES = 360;
/** §5 ArbZG: the least rest between the end of one day's work and the start of the next (11 h). */
export const MIN_REST_MINUTES = 660;

const DAY_MINUTES = 1440;

export interface EntryInput {
  start: string;
  end: string;
  category: TimesheetCategory;
}

/** An entry: its local start and end in minutes of the day (24:00 is 1440), and the real minutes between them. */
export interface DayEntry {
  startMinute: number;
  endMinute: number;
  minutes: number;
  category: TimesheetCategory;
}

/** The wall clock of each day (the time zone of the contract valid that day). */
export type Clocks = (date: string) => DayClock;

export const WARNING_CODES = [
  'break_too_short',
  'work_block_too_long',
  'rest_period_too_short',
  'sunday_work',
  'holiday_work',
] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

export interface TimesheetWarning {
  code: WarningCode;
  message: string;
  /** The neighbouring day the warning is about as well (`YYYY-MM-DD`), when there is one. */
  other_date?: string;
}

/** What a valid day comes to on its own: its entries sorted by start, and the totals stored with them. */
export interface DayTotals {
  entries: DayEntry[];
  workedMinutes: number;
  breakMinutes: number;
}

/** A day as stored: its totals and every warning, those its neighbours cause included. */
export interface DaySummary extends DayTotals {
  warnings: TimesheetWarning[];
}

/** `HH:MM` (already checked by the schema) → minutes since midnight. */
export function toMinute(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

/** Minutes since midnight → `HH:MM` (1440 → `24:00`). */
export function toTime(minute: number): string {
  return `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
}

export const hours = (minutes: number) =>
  `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${String(minutes % 60).padStart(2, '0')}` : ''}`;

/**
 * The business rules a day's entries break, named by the caller's field paths (the entries'
 * indexes as sent): a time the day's clocks never show (02:30 when summer time begins), an end not
 * after its start, two entries that overlap (both named), more than 10 h of real minutes of work
 * (§3 ArbZG; standby does not count). Empty when the day is valid.
 */
export function dayRuleViolations(input: readonly EntryInput[], clock: DayClock): FieldError[] {
  const errors: FieldError[] = [];
  const spans = input.map((entry, index) => ({ index, start: toMinute(entry.start), end: toMinute(entry.end), entry }));
  for (const span of spans) {
    for (const side of ['start', 'end'] as const) {
      if (!clock.shows(span[side])) {
        errors.push({
          field: `entries[${span.index}].${side}`,
          message: `does not exist on ${clock.date} in ${clock.timeZone}: the clocks skip ${span.entry[side]} that day (summer time begins)`,
        });
      }
    }
    if (span.end <= span.start)
      errors.push({ field: `entries[${span.index}].end`, message: `must be after start (${span.entry.start})` });
  }
  const valid = spans.filter((span) => span.end > span.start);
  for (const a of valid) {
    for (const b of valid) {
      if (a.index !== b.index && a.start < b.end && b.start < a.end) {
        errors.push({
          field: `entries[${a.index}]`,
          message: `overlaps entries[${b.index}] (${b.entry.start}–${b.entry.end})`,
        });
      }
    }
  }
  // Overlapping or inverted entries have no meaningful total: the day limit is judged once they are fixed.
  if (errors.length === 0) {
    // §3 counts working time only (standby is not), in real minutes.
    const worked = valid
      .filter((span) => isWorkingTime(span.entry.category))
      .reduce((sum, span) => sum + (clock.at(span.end) - clock.at(span.start)), 0);
    if (worked > MAX_WORK_MINUTES) {
      errors.push({
        field: 'entries',
        message: `add up to ${worked} min (${hours(worked)}) of work; at most ${MAX_WORK_MINUTES} min (10 h) a day are allowed (§3 ArbZG)`,
      });
    }
  }
  return errors;
}

/** The working-time entries of a day (standby left out), sorted by start. */
const workOf = (entries: readonly DayEntry[]) => entries.filter((entry) => isWorkingTime(entry.category));

/**
 * Totals of a valid day, entries sorted by start, each with its real minutes. `workedMinutes`
 * counts working time only (not standby); the breaks are the gaps of at least 15 real minutes
 * between working-time entries (§4 ArbZG), so standby between two stretches of work is rest, not work.
 */
export function summarizeDay(input: readonly EntryInput[], clock: DayClock): DayTotals {
  const entries = input
    .map((entry) => ({ startMinute: toMinute(entry.start), endMinute: toMinute(entry.end), category: entry.category }))
    .sort((a, b) => a.startMinute - b.startMinute)
    .map((entry) => ({ ...entry, minutes: clock.at(entry.endMinute) - clock.at(entry.startMinute) }));
  const work = workOf(entries);
  const workedMinutes = work.reduce((sum, entry) => sum + entry.minutes, 0);
  let breakMinutes = 0;
  for (let i = 1; i < work.length; i++) {
    const gap = clock.at(work[i]!.startMinute) - clock.at(work[i - 1]!.endMinute);
    if (gap >= MIN_BREAK_MINUTES) breakMinutes += gap;
  }
  return { entries, workedMinutes, breakMinutes };
}

/** One user's days around the day judged: their entries (null: no sheet that day). */
export interface DayWithNeighbours {
  /** `YYYY-MM-DD` */
  date: string;
  day: DayTotals;
  previous: readonly DayEntry[] | null;
  next: readonly DayEntry[] | null;
  /**
   * The public holiday (its name) on `date` where the employee works, or null. Comes from the
   * state of the contract valid that day; null without a contract that day.
   */
  holiday: string | null;
  /** The wall clock of `date` and of the days either side. */
  clocks: Clocks;
}

/**
 * Every warning of a valid day, in a fixed order (the stored JSON compares as text). Some depend on
 * the neighbouring days (a block of work over midnight, the rest between two days), so a write
 * recomputes the neighbours' warnings too.
 */
export function dayWarnings(input: DayWithNeighbours): TimesheetWarning[] {
  return [
    ...breakWarnings(input.day),
    ...workBlockWarnings(input),
    ...restPeriodWarnings(input),
    ...sundayAndHolidayWarnings(input),
  ];
}

/**
 * §4 sentences 1–2 ArbZG: over 6 h of work at least 30 min of break, over 9 h at least 45 min,
 * counting only breaks of at least 15 min. The day is recorded with a warning saying what is missing.
 */
function breakWarnings({ workedMinutes, breakMinutes }: DayTotals): TimesheetWarning[] {
  const rule = BREAK_RULES.find((r) => workedMinutes > r.over);
  if (!rule || breakMinutes >= rule.needs) return [];
  return [
    {
      code: 'break_too_short',
      message:
        `Over ${rule.over / 60} h of work needs ${rule.needs} min of break (§4 ArbZG, counting only breaks of at least ${MIN_BREAK_MINUTES} min); ` +
        `${breakMinutes} min recorded, ${rule.needs - breakMinutes} min missing.`,
    },
  ];
}

const addDays = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MINUTES * 60_000).toISOString().slice(0, 10);

/** A stretch of work on the real timeline, with the local day and times it was recorded as. */
interface Stretch {
  /** Real minutes (since the epoch). */
  start: number;
  end: number;
  own: boolean;
  date: string;
  startMinute: number;
  endMinute: number;
}

/** The working-time entries of `date` on the real timeline. */
function stretches(date: string, entries: readonly DayEntry[] | null, clocks: Clocks, own: boolean): Stretch[] {
  const clock = clocks(date);
  return workOf(entries ?? []).map((entry) => ({
    start: clock.at(entry.startMinute),
    end: clock.at(entry.endMinute),
    own,
    date,
    startMinute: entry.startMinute,
    endMinute: entry.endMinute,
  }));
}

/**
 * §4 sentence 3 ArbZG: no more than 6 h of work in a row without a break of at least 15 minutes.
 * A block runs from the start of a stretch of work to the end of the last one that follows with
 * gaps under 15 minutes (such a gap is no break, so it does not end the block, and the block is
 * measured from its start to its end, in real minutes). Work running over midnight is one block:
 * the day's last entry ending at 24:00 and the next day's first at 00:00 (or any gap under 15
 * minutes between them) join. Each block over 6 h that holds work of this day is one warning, on
 * every day it spans.
 */
function workBlockWarnings({ date, day, previous, next, clocks }: DayWithNeighbours): TimesheetWarning[] {
  // One real timeline: the day before, this day, the day after.
  const timeline = [
    ...stretches(addDays(date, -1), previous, clocks, false),
    ...stretches(date, day.entries, clocks, true),
    ...stretches(addDays(date, 1), next, clocks, false),
  ];
  const blocks: { first: Stretch; last: Stretch; own: boolean }[] = [];
  for (const stretch of timeline) {
    const block = blocks[blocks.length - 1];
    if (block && stretch.start - block.last.end < MIN_BREAK_MINUTES) {
      block.last = stretch;
      block.own ||= stretch.own;
    } else {
      blocks.push({ first: stretch, last: stretch, own: stretch.own });
    }
  }
  return blocks
    .filter((block) => block.own && block.last.end - block.first.start > MAX_WORK_BLOCK_MINUTES)
    .map((block) => {
      const from = { date: block.first.date, time: toTime(block.first.startMinute) };
      const to = { date: block.last.date, time: toTime(block.last.endMinute) };
      const other = from.date !== date ? from.date : to.date !== date ? to.date : undefined;
      const span = other ? `${from.date} ${from.time} – ${to.date} ${to.time}` : `${from.time}–${to.time}`;
      return {
        code: 'work_block_too_long' as const,
        message:
          `${hours(block.last.end - block.first.start)} of work in a row without a break of at least ${MIN_BREAK_MINUTES} min (${span}); ` +
          `§4 ArbZG allows at most ${MAX_WORK_BLOCK_MINUTES / 60} h in a row.`,
        ...(other ? { other_date: other } : {}),
      };
    });
}

/**
 * §5 ArbZG: at least 11 h of rest between the end of one day's work and the start of the next, in
 * real minutes. Checked against both neighbours: from the day before's last work to this day's
 * first, and from this day's last to the next day's first. Work that runs on over midnight with a
 * gap under 15 minutes is one shift (one block of §4), not a rest, and is left to the block rule.
 */
function restPeriodWarnings({ date, day, previous, next, clocks }: DayWithNeighbours): TimesheetWarning[] {
  const work = workOf(day.entries);
  if (work.length === 0) return [];
  const warnings: TimesheetWarning[] = [];
  const check = (endDate: string, end: DayEntry, startDate: string, start: DayEntry, other: string) => {
    const rest = clocks(startDate).at(start.startMinute) - clocks(endDate).at(end.endMinute);
    if (rest < MIN_BREAK_MINUTES || rest >= MIN_REST_MINUTES) return;
    warnings.push({
      code: 'rest_period_too_short',
      message:
        `Only ${hours(rest)} of rest between the end of work on ${endDate} (${toTime(end.endMinute)}) and its start on ${startDate} ` +
        `(${toTime(start.startMinute)}); §5 ArbZG requires at least ${MIN_REST_MINUTES / 60} h.`,
      other_date: other,
    });
  };
  const before = workOf(previous ?? []);
  if (before.length > 0) {
    const yesterday = addDays(date, -1);
    check(yesterday, before[before.length - 1]!, date, work[0]!, yesterday);
  }
  const after = workOf(next ?? []);
  if (after.length > 0) {
    const tomorrow = addDays(date, 1);
    check(date, work[work.length - 1]!, tomorrow, after[0]!, tomorrow);
  }
  return warnings;
}

/**
 * §9 ArbZG: no work on Sundays and public holidays (0–24 h); §10 lists the many exceptions (emergency
 * services, IT operations that cannot stop, …), which the API cannot judge, so the day is recorded
 * with a warning. The holiday is the employee's region's (see `holiday`); standby alone is no work.
 */
function sundayAndHolidayWarnings({ date, day, holiday }: DayWithNeighbours): TimesheetWarning[] {
  if (day.workedMinutes === 0) return [];
  const warnings: TimesheetWarning[] = [];
  if (new Date(`${date}T00:00:00Z`).getUTCDay() === 0) {
    warnings.push({
      code: 'sunday_work',
      message: `${date} is a Sunday: work on Sundays is allowed only under the exceptions of §10 ArbZG (§9 ArbZG).`,
    });
  }
  if (holiday !== null) {
    warnings.push({
      code: 'holiday_work',
      message: `${date} is a public holiday (${holiday}): work on public holidays is allowed only under the exceptions of §10 ArbZG (§9 ArbZG).`,
    });
  }
  return warnings;
}
