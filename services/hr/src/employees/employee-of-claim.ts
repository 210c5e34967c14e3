import type { ClaimEffect } from '@msp/events';
import { employeeJson } from './employee.mapper';
import type { EmployeesRepository } from './employees.repository';

/**
 * The employee a `POST /employees` holding an Idempotency-Key claim created, as the API shows it:
 * an employee records no event for the claim to be found on, so its row keeps the claim.
 */
export function employeeOfClaim(employees: EmployeesRepository) {
  return async (claim: string): Promise<ClaimEffect | undefined> => {
    const employee = await employees.findByIdempotencyClaim(claim);
    return employee ? { resourceId: employee.id, object: employeeJson(employee) } : undefined;
  };
}
