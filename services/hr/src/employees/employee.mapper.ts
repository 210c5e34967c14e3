// The API JSON of an employee, beside its schema: a schema imports no repository.
import { contractJson } from '../contracts/contract.mapper';
import type { EmployeeJson } from './employee.schemas';
import type { EmployeeRecord } from './employees.repository';

export function employeeJson(employee: EmployeeRecord): EmployeeJson {
  return {
    id: employee.id,
    user_id: employee.userId,
    personnel_number: employee.personnelNumber,
    name: employee.name,
    employment: { start_date: employee.employmentStart, end_date: employee.employmentEnd },
    current_contract: employee.currentContract && contractJson(employee.currentContract),
    created_at: employee.createdAt,
    updated_at: employee.updatedAt,
  };
}
