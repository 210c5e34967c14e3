import { conflict, notFound, pageWindow, type PageRequest } from '@msp/http';
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
    return conflict(`User ${input.userId} already has an employee record.`, { errors: [{ field: 'user_id', message: 'already has an employee record' }] });
  }
  return conflict(`Personnel number ${input.personnelNumber} is already taken by another employee.`, {
    errors: [{ field: 'personnel_number', message: 'is already taken' }],
  });
}

export function createEmployeesService(employees: EmployeesRepository) {
  return {
    list(tenantId: string, filter: EmployeeFilter, page: PageRequest) {
      return employees.list(tenantId, filter, pageWindow(page));
    },

    async get(tenantId: string, id: string): Promise<EmployeeRecord> {
      // Another tenant's employee is as unknown as a missing one: no existence leaks (SPEC §3).
      const employee = await employees.findById(tenantId, id);
      if (!employee) throw missing(id);
      return employee;
    },

    async register(tenantId: string, input: NewEmployee): Promise<EmployeeRecord> {
      try {
        return await employees.create(tenantId, input);
      } catch (error) {
        throw error instanceof DuplicateEmployeeError ? duplicate(error, input) : error;
      }
    },

    async change(tenantId: string, id: string, changes: EmployeeChanges): Promise<EmployeeRecord> {
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
