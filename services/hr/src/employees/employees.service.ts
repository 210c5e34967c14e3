import { conflict, currentContext, listWindow, notFound, unprocessable, type PageRequest } from '@msp/http';
import {
  DuplicateEmployeeError,
  type EmployeeChanges,
  type EmployeeFilter,
  type EmployeeRecord,
  type EmployeesRepository,
  type NewEmployee,
} from './employees.repository';

const missing = (id: string) => notFound(`No employee ${id}.`);

/** A unique key of the tenant is taken: say which, in the caller's field names. */
function duplicate(error: DuplicateEmployeeError, input: Partial<NewEmployee>) {
  if (error.field === 'userId') {
    return conflict(`User ${input.userId} already has an employee record.`, {
      errors: [{ field: 'user_id', message: 'already has an employee record' }],
    });
  }
  return conflict(`Personnel number ${input.personnelNumber} is already taken by another employee.`, {
    errors: [{ field: 'personnel_number', message: 'is already taken' }],
  });
}

/** The employment cannot end before it begins. */
function assertEmployment(start: string | null | undefined, end: string | null | undefined): void {
  if (start && end && end < start) {
    throw unprocessable(`employment.end_date must not be before employment.start_date (${start}).`, {
      errors: [{ field: 'employment.end_date', message: `must not be before start_date (${start})` }],
    });
  }
}

export function createEmployeesService(employees: EmployeesRepository) {
  return {
    list(tenantId: string, filter: EmployeeFilter, page: PageRequest) {
      return employees.list(tenantId, filter, listWindow(page));
    },

    async get(tenantId: string, id: string): Promise<EmployeeRecord> {
      // Another tenant's employee is as unknown as a missing one: no existence leaks.
      const employee = await employees.findById(tenantId, id);
      if (!employee) throw missing(id);
      return employee;
    },

    async register(tenantId: string, input: NewEmployee): Promise<EmployeeRecord> {
      assertEmployment(input.employmentStart, input.employmentEnd);
      try {
        return await employees.create(tenantId, input, currentContext()?.idempotencyClaim ?? null);
      } catch (error) {
        throw error instanceof DuplicateEmployeeError ? duplicate(error, input) : error;
      }
    },

    async change(tenantId: string, id: string, changes: EmployeeChanges): Promise<EmployeeRecord> {
      if (changes.employmentStart !== undefined || changes.employmentEnd !== undefined) {
        const current = await employees.findById(tenantId, id);
        if (!current) throw missing(id);
        assertEmployment(
          changes.employmentStart === undefined ? current.employmentStart : changes.employmentStart,
          changes.employmentEnd === undefined ? current.employmentEnd : changes.employmentEnd,
        );
      }
      let employee: EmployeeRecord | null;
      try {
        employee = await employees.update(tenantId, id, changes);
      } catch (error) {
        throw error instanceof DuplicateEmployeeError ? duplicate(error, changes) : error;
      }
      if (!employee) throw missing(id);
      return employee;
    },
  };
}

export type EmployeesService = ReturnType<typeof createEmployeesService>;
