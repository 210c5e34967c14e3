import { yearOf } from '@msp/calendar';
import { notFound, validationFailed } from '@msp/http';
import { assertDayRange } from '../calendar';
import type { EmployeesRepository } from '../employees/employees.repository';
import { average, averageSpan, recordWarnings, sundayCount, weekTotals, yearAfter, type AverageSpan, type RecordDay, type RecordWarning, type RecordWeek, type SundayCount } from './working-time-rules';
import type { WorkingTimeRepository } from './working-time.repository';

export interface WorkingTimeRecord {
  employeeId: string;
  from: string;
  to: string;
  days: RecordDay[];
  weeks: RecordWeek[];
  average: AverageSpan;
  sundays: SundayCount;
  warnings: RecordWarning[];
}

export function createWorkingTimeService(deps: { records: WorkingTimeRepository; employees: EmployeesRepository }) {
  const { records, employees } = deps;

  return {
    /** The record from `from` to `to` (at most a year; `to` not before `from`). */
    async record(tenantId: string, employeeId: string, range: { from: string; to: string }): Promise<WorkingTimeRecord> {
      assertDayRange(range);
      if (range.to >= yearAfter(range.from)) {
        throw validationFailed([{ field: 'to', message: `must be before ${yearAfter(range.from)} (at most one year after from)` }], 'One or more query parameters are not valid.');
      }
      const employee = await employees.findById(tenantId, employeeId);
      if (!employee) throw notFound(`No employee ${employeeId}.`);
      const span = averageSpan(range.to);
      const year = yearOf(range.to);
      const [days, sums] = await Promise.all([
        records.days(tenantId, employee.userId, range.from, range.to),
        records.sums(tenantId, employee.userId, span, year),
      ]);
      const avg = average(span, sums.workedMinutes);
      const sundays = sundayCount(year, sums.workedSundays);
      return { employeeId, ...range, days, weeks: weekTotals(range.from, range.to, days), average: avg, sundays, warnings: recordWarnings(avg, sundays) };
    },
  };
}

export type WorkingTimeService = ReturnType<typeof createWorkingTimeService>;
