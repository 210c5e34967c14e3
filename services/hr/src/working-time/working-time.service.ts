import { yearOf } from '@msp/calendar';
import { notFound, validationFailed } from '@msp/http';
import { assertDayRange, dateToDay } from '../calendar';
import type { EmployeesRepository } from '../employees/employees.repository';
import {
  average,
  averageSpan,
  recordWarnings,
  sundayCount,
  weekTotals,
  yearAfter,
  type AverageSpan,
  type RecordDay,
  type RecordWarning,
  type RecordWeek,
  type SundayCount,
} from './working-time-rules';
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
    /** The record from `from` (default 1 January of `to`'s year) to `to` (default today, UTC): at most a year, `to` not before `from`. */
    async record(
      tenantId: string,
      employeeId: string,
      query: { from?: string; to?: string },
    ): Promise<WorkingTimeRecord> {
      const to = query.to ?? dateToDay(new Date());
      const range = { from: query.from ?? `${to.slice(0, 4)}-01-01`, to };
      assertDayRange(range);
      if (range.to >= yearAfter(range.from)) {
        throw validationFailed(
          [{ field: 'to', message: `must be before ${yearAfter(range.from)} (at most one year after from)` }],
          'One or more query parameters are not valid.',
        );
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
      return {
        employeeId,
        ...range,
        days,
        weeks: weekTotals(range.from, range.to, days),
        average: avg,
        sundays,
        warnings: recordWarnings(avg, sundays),
      };
    },
  };
}

export type WorkingTimeService = ReturnType<typeof createWorkingTimeService>;
