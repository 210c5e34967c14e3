// The German working-time rules for one day (Arbeitszeitgesetz), the one place that knows them:
// §3 at most 10 h of work a day; §4 breaks of 30 min over 6 h and 45 min over 9 h of work, where
// only interruptions of at least 15 minutes count as a break.
import type { FieldError } from '@msp/http';

export const TIMESHEET_CATEGORIES = ['normal', 'overtime', 'on_call', 'travel', 'training'] as const;
export type TimesheetCategory = (typeof TIMESHEET_CATEGORIES)[number];

/** §3 ArbZG: the longest working day (10 h). */
export const MAX_WORK_MINUTES = 600;
/** §4 ArbZG: a shorter interruption is not a break. */
export const MIN_BREAK_MINUTES = 15;
/** §4 ArbZG: over this much work, this much break. The stricter threshold first. */
const BREAK_RULES = [
  { over: 540, needs: 45 },
  { over: 360, needs: 30 },
] as const;

export interface EntryInput {
  start: string;
  end: string;
  category: TimesheetCategory;
}

/** An entry in minutes of the day (24:00 is 1440). */
export interface DayEntry {
  startMinute: number;
  endMinute: number;
  minutes: number;
  category: TimesheetCategory;
}

export interface TimesheetWarning {
  code: string;
  message: string;
}

/** What a valid day comes to: its entries sorted by start, and the totals stored with them. */
export interface DaySummary {
  entries: DayEntry[];
  workedMinutes: number;
  breakMinutes: number;
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

const hours = (minutes: number) => `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${String(minutes % 60).padStart(2, '0')}` : ''}`;

/**
 * The business rules a day's entries break, named by the caller's field paths (the entries'
 * indexes as sent): an end not after its start, two entries that overlap (both named), more than
 * 10 h of work. Empty when the day is valid.
 */
export function dayRuleViolations(input: readonly EntryInput[]): FieldError[] {
  const errors: FieldError[] = [];
  const spans = input.map((entry, index) => ({ index, start: toMinute(entry.start), end: toMinute(entry.end), entry }));
  for (const span of spans) {
    if (span.end <= span.start) errors.push({ field: `entries[${span.index}].end`, message: `must be after start (${span.entry.start})` });
  }
  const valid = spans.filter((span) => span.end > span.start);
  for (const a of valid) {
    for (const b of valid) {
      if (a.index !== b.index && a.start < b.end && b.start < a.end) {
        errors.push({ field: `entries[${a.index}]`, message: `overlaps entries[${b.index}] (${b.entry.start}–${b.entry.end})` });
      }
    }
  }
  // Overlapping or inverted entries have no meaningful total: the day limit is judged once they are fixed.
  if (errors.length === 0) {
    const worked = valid.reduce((sum, span) => sum + (span.end - span.start), 0);
    if (worked > MAX_WORK_MINUTES) {
      errors.push({
        field: 'entries',
        message: `add up to ${worked} min (${hours(worked)}) of work; at most ${MAX_WORK_MINUTES} min (10 h) a day are allowed (§3 ArbZG)`,
      });
    }
  }
  return errors;
}

/**
 * Totals and warnings of a valid day. Gaps between consecutive entries are breaks when they
 * last at least 15 minutes; a day over 6 h (9 h) of work with less than 30 (45) minutes of them
 * is still recorded, with a warning saying how much break is missing.
 */
export function summarizeDay(input: readonly EntryInput[]): DaySummary {
  const entries = input
    .map((entry) => ({ startMinute: toMinute(entry.start), endMinute: toMinute(entry.end), category: entry.category }))
    .sort((a, b) => a.startMinute - b.startMinute)
    .map((entry) => ({ ...entry, minutes: entry.endMinute - entry.startMinute }));
  const workedMinutes = entries.reduce((sum, entry) => sum + entry.minutes, 0);
  let breakMinutes = 0;
  for (let i = 1; i < entries.length; i++) {
    const gap = entries[i]!.startMinute - entries[i - 1]!.endMinute;
    if (gap >= MIN_BREAK_MINUTES) breakMinutes += gap;
  }
  const warnings: TimesheetWarning[] = [];
  const rule = BREAK_RULES.find((r) => workedMinutes > r.over);
  if (rule && breakMinutes < rule.needs) {
    warnings.push({
      code: 'break_too_short',
      message:
        `Over ${rule.over / 60} h of work needs ${rule.needs} min of break (§4 ArbZG, counting only breaks of at least ${MIN_BREAK_MINUTES} min); ` +
        `${breakMinutes} min recorded, ${rule.needs - breakMinutes} min missing.`,
    });
  }
  return { entries, workedMinutes, breakMinutes, warnings };
}
