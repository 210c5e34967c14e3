import { API_BASE_PATH, conflict, notFound, pageWindow, unprocessable, type FieldError, type PageRequest } from '@msp/http';
import { assertDayRange, dateToDay } from '../calendar';
import type { EmployeesRepository } from '../employees/employees.repository';
import { hrEvents } from '../events/hr-events';
import { timesheetJson } from './timesheet.mapper';
import { dayRuleViolations, summarizeDay, type EntryInput } from './timesheet-rules';
import { DuplicateTimesheetError, type TimesheetFilter, type TimesheetRecord, type TimesheetsRepository } from './timesheets.repository';

const missing = (id: string) => notFound(`No timesheet ${id}.`);

function brokenRules(errors: FieldError[]) {
  const detail = errors.length === 1 ? `${errors[0]!.field} ${errors[0]!.message}.` : `The timesheet breaks ${errors.length} rules; see errors.`;
  return unprocessable(detail, { errors });
}

function duplicate(error: DuplicateTimesheetError, input: { userId: string; date: string }) {
  const existing = error.existingId;
  return conflict(`User ${input.userId} already has a timesheet for ${input.date}${existing ? `: ${existing}` : ''}. Change that one (PATCH) instead.`, {
    errors: [{ field: 'date', message: 'already has a timesheet for this user' }],
    extensions: existing ? { existing_id: existing, existing_url: `${API_BASE_PATH}/timesheets/${existing}` } : {},
  });
}

export function createTimesheetsService(deps: { timesheets: TimesheetsRepository; employees: EmployeesRepository }) {
  const { timesheets, employees } = deps;

  return {
    list(tenantId: string, filter: TimesheetFilter, page: PageRequest) {
      assertDayRange(filter);
      return timesheets.list(tenantId, filter, pageWindow(page));
    },

    async get(tenantId: string, id: string): Promise<TimesheetRecord> {
      // Another tenant's sheet is as unknown as a missing one: no existence leaks (SPEC §3).
      const sheet = await timesheets.findById(tenantId, id);
      if (!sheet) throw missing(id);
      return sheet;
    },

    /** Records a day: the user must be an employee, the entries must keep the day's rules. */
    async record(tenantId: string, input: { userId: string; date: string; entries: EntryInput[] }): Promise<TimesheetRecord> {
      const errors = dayRuleViolations(input.entries);
      if (!(await employees.isEmployee(tenantId, input.userId))) {
        errors.unshift({ field: 'user_id', message: 'is not the user_id of an employee of your tenant' });
      }
      if (errors.length > 0) throw brokenRules(errors);
      try {
        return await timesheets.create(tenantId, input, summarizeDay(input.entries), (tx, sheet) =>
          hrEvents.record(tx, { type: 'timesheet.created', tenantId, resourceType: 'timesheet', resourceId: sheet.id, object: timesheetJson(sheet) }),
        );
      } catch (error) {
        throw error instanceof DuplicateTimesheetError ? duplicate(error, input) : error;
      }
    },

    /**
     * Replaces a day's entries, checked exactly as for a new sheet. Whose day and which day it is
     * cannot change; a client sending them back unchanged is fine.
     */
    async replaceEntries(tenantId: string, id: string, input: { entries: EntryInput[]; userId?: string; date?: string }): Promise<TimesheetRecord> {
      const sheet = await timesheets.findById(tenantId, id);
      if (!sheet) throw missing(id);
      const { entries } = input;
      const errors = dayRuleViolations(entries);
      if (input.date !== undefined && input.date !== dateToDay(sheet.date)) {
        errors.unshift({ field: 'date', message: `cannot change (the sheet is for ${dateToDay(sheet.date)}); delete it and record the other day` });
      }
      // UUIDs compare case-insensitively, as PostgreSQL does.
      if (input.userId !== undefined && input.userId.toLowerCase() !== sheet.userId) {
        errors.unshift({ field: 'user_id', message: `cannot change (the sheet is ${sheet.userId}'s); delete it and record the other user's day` });
      }
      if (errors.length > 0) throw brokenRules(errors);
      const replaced = await timesheets.replaceEntries(tenantId, id, summarizeDay(entries), (tx, { before, after }) =>
        hrEvents.record(tx, { type: 'timesheet.updated', tenantId, resourceType: 'timesheet', resourceId: id, object: timesheetJson(after), before: timesheetJson(before) }),
      );
      if (!replaced) throw missing(id); // deleted meanwhile
      return replaced;
    },

    async remove(tenantId: string, id: string): Promise<void> {
      // The event shows the sheet as it was.
      const deleted = await timesheets.delete(tenantId, id, (tx, sheet) =>
        hrEvents.record(tx, { type: 'timesheet.deleted', tenantId, resourceType: 'timesheet', resourceId: id, object: timesheetJson(sheet) }),
      );
      if (!deleted) throw missing(id);
    },
  };
}

export type TimesheetsService = ReturnType<typeof createTimesheetsService>;
