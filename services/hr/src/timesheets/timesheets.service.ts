import {
  API_BASE_PATH,
  conflict,
  listWindow,
  notFound,
  unprocessable,
  type FieldError,
  type PageRequest,
} from '@msp/http';
import { addDays, holidays, yearOf, type GermanState } from '@msp/calendar';
import { assertDayRange, dayClock, DEFAULT_TIME_ZONE } from '../calendar';
import { contractOn, type ContractTerms } from '../contracts/contract-rules';
import type { ContractsRepository } from '../contracts/contracts.repository';
import type { EmployeesRepository } from '../employees/employees.repository';
import { hrEvents } from '../events/hr-events';
import { timesheetJson } from './timesheet.mapper';
import { dayRuleViolations, dayWarnings, summarizeDay, type Clocks, type EntryInput } from './timesheet-rules';
import {
  DuplicateTimesheetError,
  type NeighbourChange,
  type TimesheetFilter,
  type TimesheetRecord,
  type TimesheetsRepository,
  type WarningsOf,
} from './timesheets.repository';

const missing = (id: string) => notFound(`No timesheet ${id}.`);

function brokenRules(errors: FieldError[]) {
  const detail =
    errors.length === 1
      ? `${errors[0]!.field} ${errors[0]!.message}.`
      : `The timesheet breaks ${errors.length} rules; see errors.`;
  return unprocessable(detail, { errors });
}

function duplicate(error: DuplicateTimesheetError, input: { userId: string; date: string }) {
  const existing = error.existingId;
  return conflict(
    `User ${input.userId} already has a timesheet for ${input.date}${existing ? `: ${existing}` : ''}. Change that one (PATCH) instead.`,
    {
      errors: [{ field: 'date', message: 'already has a timesheet for this user' }],
      extensions: existing ? { existing_id: existing, existing_url: `${API_BASE_PATH}/timesheets/${existing}` } : {},
    },
  );
}

/**
 * The wall clock of each day: the time zone of the employee's contract valid that day, Berlin's
 * without one (every contract was Berlin's before contracts had a zone).
 */
function clocksOf(history: readonly ContractTerms[]): Clocks {
  return (date) => dayClock(contractOn(history, date)?.timeZone ?? DEFAULT_TIME_ZONE, date);
}

/** The public holiday (its name) on `day` in `region`, or null (also for no region). */
export function holidayIn(region: GermanState | null, day: string): string | null {
  if (region === null) return null;
  return holidays(region, yearOf(day)).find((holiday) => holiday.date === day)?.name ?? null;
}

/**
 * The rules the repository applies inside its transaction: `date`'s day and its neighbours, whose
 * warnings a write can change. What they need of the contracts is read first: `holiday_work`
 * (§9–§10 ArbZG) takes the public holiday of the state of the contract valid that day (no contract
 * on a day: no state is guessed, no holiday warning), and each day's times are read in its zone.
 */
function warningsAround(history: readonly ContractTerms[], date: string): WarningsOf {
  const days = [addDays(date, -1), date, addDays(date, 1)];
  const holidayNames = new Map(
    days.map((day) => [day, holidayIn(contractOn(history, day)?.state ?? null, day)] as const),
  );
  const clocks = clocksOf(history);
  return (day, totals, previous, next) =>
    dayWarnings({ date: day, day: totals, previous, next, holiday: holidayNames.get(day) ?? null, clocks });
}

/** A neighbour's warnings changed with this write (§4 blocks over midnight, §5 rest): an update of that sheet. */
async function recordNeighbours(
  tx: Parameters<typeof hrEvents.record>[0],
  tenantId: string,
  neighbours: NeighbourChange[],
) {
  for (const { before, after } of neighbours) {
    await hrEvents.record(tx, {
      type: 'timesheet.updated',
      tenantId,
      resourceType: 'timesheet',
      resourceId: after.id,
      object: timesheetJson(after),
      before: timesheetJson(before),
    });
  }
}

export function createTimesheetsService(deps: {
  timesheets: TimesheetsRepository;
  employees: EmployeesRepository;
  contracts: ContractsRepository;
}) {
  const { timesheets, employees, contracts } = deps;

  return {
    list(tenantId: string, filter: TimesheetFilter, page: PageRequest) {
      assertDayRange(filter);
      return timesheets.list(tenantId, filter, listWindow(page));
    },

    async get(tenantId: string, id: string): Promise<TimesheetRecord> {
      // Another tenant's sheet is as unknown as a missing one: no existence leaks.
      const sheet = await timesheets.findById(tenantId, id);
      if (!sheet) throw missing(id);
      return sheet;
    },

    /** Records a day: the user must be an employee, the entries must keep the day's rules. */
    async record(
      tenantId: string,
      input: { userId: string; date: string; entries: EntryInput[] },
    ): Promise<TimesheetRecord> {
      const history = await contracts.history(tenantId, { userId: input.userId });
      const clock = clocksOf(history)(input.date);
      const errors = dayRuleViolations(input.entries, clock);
      if (!(await employees.isEmployee(tenantId, input.userId))) {
        errors.unshift({ field: 'user_id', message: 'is not the user_id of an employee of your tenant' });
      }
      if (errors.length > 0) throw brokenRules(errors);
      try {
        const warningsOf = warningsAround(history, input.date);
        return await timesheets.create(
          tenantId,
          input,
          summarizeDay(input.entries, clock),
          warningsOf,
          async (tx, { sheet, neighbours }) => {
            await hrEvents.record(tx, {
              type: 'timesheet.created',
              tenantId,
              resourceType: 'timesheet',
              resourceId: sheet.id,
              object: timesheetJson(sheet),
            });
            await recordNeighbours(tx, tenantId, neighbours);
          },
        );
      } catch (error) {
        throw error instanceof DuplicateTimesheetError ? duplicate(error, input) : error;
      }
    },

    /**
     * Replaces a day's entries, checked exactly as for a new sheet. Whose day and which day it is
     * cannot change; a client sending them back unchanged is fine.
     */
    async replaceEntries(
      tenantId: string,
      id: string,
      input: { entries: EntryInput[]; userId?: string; date?: string },
    ): Promise<TimesheetRecord> {
      const sheet = await timesheets.findById(tenantId, id);
      if (!sheet) throw missing(id);
      const { entries } = input;
      const history = await contracts.history(tenantId, { userId: sheet.userId });
      const clock = clocksOf(history)(sheet.date);
      const errors = dayRuleViolations(entries, clock);
      if (input.date !== undefined && input.date !== sheet.date) {
        errors.unshift({
          field: 'date',
          message: `cannot change (the sheet is for ${sheet.date}); delete it and record the other day`,
        });
      }
      // UUIDs compare case-insensitively, as PostgreSQL does.
      if (input.userId !== undefined && input.userId.toLowerCase() !== sheet.userId) {
        errors.unshift({
          field: 'user_id',
          message: `cannot change (the sheet is ${sheet.userId}'s); delete it and record the other user's day`,
        });
      }
      if (errors.length > 0) throw brokenRules(errors);
      const warningsOf = warningsAround(history, sheet.date);
      const replaced = await timesheets.replaceEntries(
        tenantId,
        id,
        summarizeDay(entries, clock),
        warningsOf,
        async (tx, { before, after, neighbours }) => {
          await hrEvents.record(tx, {
            type: 'timesheet.updated',
            tenantId,
            resourceType: 'timesheet',
            resourceId: id,
            object: timesheetJson(after),
            before: timesheetJson(before),
          });
          await recordNeighbours(tx, tenantId, neighbours);
        },
      );
      if (!replaced) throw missing(id); // deleted meanwhile
      return replaced;
    },

    async remove(tenantId: string, id: string): Promise<void> {
      const sheet = await timesheets.findById(tenantId, id);
      if (!sheet) throw missing(id);
      // The event shows the sheet as it was; the neighbours lose the warnings it caused.
      const warningsOf = warningsAround(await contracts.history(tenantId, { userId: sheet.userId }), sheet.date);
      const deleted = await timesheets.delete(tenantId, id, warningsOf, async (tx, { sheet: gone, neighbours }) => {
        await hrEvents.record(tx, {
          type: 'timesheet.deleted',
          tenantId,
          resourceType: 'timesheet',
          resourceId: id,
          object: timesheetJson(gone),
        });
        await recordNeighbours(tx, tenantId, neighbours);
      });
      if (!deleted) throw missing(id);
    },
  };
}

export type TimesheetsService = ReturnType<typeof createTimesheetsService>;
