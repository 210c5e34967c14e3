// The API JSON of a record, for the answers and the events alike. Beside the schema, not in it:
// a schema file imports no repository, and a repository builds no API JSON.
import type { LeaveJson } from './leave.schemas';
import type { LeaveRecord } from './leaves.repository';

/** A leave as the API shows it: the answers and the events' `object` alike. */
export function leaveJson(leave: LeaveRecord): LeaveJson {
  return {
    id: leave.id,
    user_id: leave.userId,
    type: leave.type,
    status: leave.status,
    start_date: leave.startDate,
    end_date: leave.endDate,
    working_days: leave.workingDays,
    returned_days: leave.returnedDays,
    note: leave.note,
    created_at: leave.createdAt,
    updated_at: leave.updatedAt,
  };
}
