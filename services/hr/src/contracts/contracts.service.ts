import { WEEKDAYS } from '@msp/calendar';
import { conflict, listWindow, notFound, unprocessable, validationFailed, type PageRequest } from '@msp/http';
import { canonicalTimeZone } from '../calendar';
import type { EmployeesRepository } from '../employees/employees.repository';
import { hrEvents } from '../events/hr-events';
import { minimumVacationDays } from './contract-rules';
import { contractJson } from './contract.mapper';
import {
  DuplicateContractError,
  type ContractRecord,
  type ContractsRepository,
  type NewContract,
} from './contracts.repository';

const noEmployee = (id: string) => notFound(`No employee ${id}.`);

/** §3 BUrlG: four weeks of paid leave, 4 × the working days a week. */
function assertLegalMinimum(input: NewContract): void {
  const minimum = minimumVacationDays(input.workingDays.length);
  if (input.vacationDaysPerYear >= minimum) return;
  const perWeek = input.workingDays.length;
  throw unprocessable(
    `vacation_days_per_year must be at least ${minimum}: §3 BUrlG grants at least 24 working days a year on six working days a week, ` +
      `that is ${minimum} on ${perWeek} working day${perWeek === 1 ? '' : 's'} a week.`,
    {
      errors: [
        {
          field: 'vacation_days_per_year',
          message: `must be at least ${minimum} (§3 BUrlG, ${perWeek} working days a week)`,
        },
      ],
      extensions: { minimum },
    },
  );
}

export function createContractsService(deps: { contracts: ContractsRepository; employees: EmployeesRepository }) {
  const { contracts, employees } = deps;

  async function assertEmployee(tenantId: string, employeeId: string): Promise<void> {
    // Another tenant's employee is as unknown as a missing one: no existence leaks.
    if (!(await employees.findById(tenantId, employeeId))) throw noEmployee(employeeId);
  }

  return {
    async list(tenantId: string, employeeId: string, page: PageRequest) {
      await assertEmployee(tenantId, employeeId);
      return contracts.list(tenantId, employeeId, listWindow(page));
    },

    async add(tenantId: string, employeeId: string, input: NewContract): Promise<ContractRecord> {
      // A zone the calendar does not know is as malformed as a bad date: the schema cannot list the zones.
      const timeZone = canonicalTimeZone(input.timeZone);
      if (timeZone === null) {
        throw validationFailed(
          [{ field: 'time_zone', message: 'is not a known IANA time zone (such as Europe/Berlin)' }],
          'The request body is not valid.',
        );
      }
      await assertEmployee(tenantId, employeeId);
      // Week order, whatever order the caller sent; the zone as the tz database spells it.
      const contract = { ...input, timeZone, workingDays: WEEKDAYS.filter((day) => input.workingDays.includes(day)) };
      assertLegalMinimum(contract);
      try {
        return await contracts.create(tenantId, employeeId, contract, (tx, created) =>
          hrEvents.record(tx, {
            type: 'contract.created',
            tenantId,
            resourceType: 'contract',
            resourceId: created.id,
            object: contractJson(created),
          }),
        );
      } catch (error) {
        if (error instanceof DuplicateContractError) {
          throw conflict(`The employee already has a contract valid from ${input.validFrom}.`, {
            errors: [{ field: 'valid_from', message: 'already starts another contract of the employee' }],
          });
        }
        throw error;
      }
    },
  };
}

export type ContractsService = ReturnType<typeof createContractsService>;
