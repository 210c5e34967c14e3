// The API JSON of a record, for the answers and the events alike. Beside the schema, not in it:
// a schema file imports no repository, and a repository builds no API JSON.
import type { TimesheetJson } from './timesheet.schemas';
import { toTime } from './timesheet-rules';
import type { TimesheetRecord } from './timesheets.repository';

/** A sheet as the API shows it: the answers and the events' `object` alike. */
export function timesheetJson(sheet: TimesheetRecord): TimesheetJson {
  return {
    id: sheet.id,
    user_id: sheet.userId,
    date: sheet.date,
    entries: sheet.entries.map((entry) => ({
      start: toTime(entry.startMinute),
      end: toTime(entry.endMinute),
      category: entry.category,
      minutes: entry.minutes,
    })),
    worked_minutes: sheet.workedMinutes,
    break_minutes: sheet.breakMinutes,
    warnings: sheet.warnings,
    created_at: sheet.createdAt,
    updated_at: sheet.updatedAt,
  };
}
