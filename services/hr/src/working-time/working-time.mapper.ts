import type { RecordDay } from './working-time-rules';
import type { WorkingTimeJson } from './working-time.schemas';
import type { WorkingTimeRecord } from './working-time.service';

const dayJson = (day: RecordDay) => ({
  date: day.date,
  worked_minutes: day.workedMinutes,
  break_minutes: day.breakMinutes,
  standby_minutes: day.standbyMinutes,
  warnings: day.warnings as WorkingTimeJson['days'][number]['warnings'],
});

export function workingTimeJson(record: WorkingTimeRecord): WorkingTimeJson {
  return {
    employee_id: record.employeeId,
    from: record.from,
    to: record.to,
    days: record.days.map(dayJson),
    weeks: record.weeks.map((week) => ({
      week: week.week,
      worked_minutes: week.workedMinutes,
      standby_minutes: week.standbyMinutes,
    })),
    average: {
      from: record.average.from,
      to: record.average.to,
      worked_minutes: record.average.workedMinutes,
      working_days: record.average.workingDays,
      minutes_per_working_day: record.average.averageMinutes,
    },
    sundays: { ...record.sundays },
    warnings: record.warnings.map((warning) => ({ code: warning.code, message: warning.message })),
  };
}

/** The CSV's columns, in order (the header row): the days of the JSON, warnings as their codes separated by spaces. */
export const WORKING_TIME_CSV_COLUMNS = [
  'date',
  'worked_minutes',
  'break_minutes',
  'standby_minutes',
  'warnings',
] as const;

export const workingTimeCsvCells = (day: RecordDay) => [
  day.date,
  day.workedMinutes,
  day.breakMinutes,
  day.standbyMinutes,
  day.warnings.map((w) => w.code).join(' '),
];
