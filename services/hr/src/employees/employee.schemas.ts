import { Type, type Static } from '@sinclair/typebox';
import {
  DateOnly,
  DateTime,
  named,
  keysetQueryProperties,
  Nullable,
  pageQueryProperties,
  pageSchema,
  strictObject,
  Uuid,
} from '@msp/http';
import { Contract } from '../contracts/contract.schemas';
import { RequestDay } from '../day.schemas';

// Digits only, 1–20. DATEV (LODAS, Lohn und Gehalt) keys an employee on a numeric Personalnummer of
// at most 5 digits, and the other payroll programs a tenant may export to key on numbers too, some of
// them longer (SAP: 8): letters would break every import, so they are refused here. The 5-digit limit
// itself is DATEV's and is checked by the DATEV export, not here, so tenants on other payroll software
// are not cut short. Kept as given (leading zeros included): it is what the payroll software knows.
const personnelNumber = (options: { description?: string } = {}) =>
  Type.String({
    pattern: '^[0-9]{1,20}$',
    minLength: 1,
    maxLength: 20,
    examples: ['10042'],
    description: 'The number the payroll software knows the employee by: 1–20 digits (DATEV: at most 5).',
    ...options,
  });

const EMPLOYMENT_START =
  "First day of employment, `YYYY-MM-DD`. The six-month waiting period of §4 BUrlG runs from it. Until set, the first contract's `valid_from` stands in.";
const EMPLOYMENT_END =
  'Last day of employment, `YYYY-MM-DD` (not before `start_date`, else 422); `null` while employed.';
const employmentStart = () => DateOnly({ description: EMPLOYMENT_START });
const employmentEnd = () => DateOnly({ description: EMPLOYMENT_END });
const newEmploymentStart = () => RequestDay({ description: EMPLOYMENT_START });
const newEmploymentEnd = () => RequestDay({ description: EMPLOYMENT_END });

const Employment = Type.Object(
  { start_date: Nullable(employmentStart()), end_date: Nullable(employmentEnd()) },
  {
    additionalProperties: false,
    description: 'When the employment began and ended; leave entitlement (§§4, 5 BUrlG) depends on both.',
  },
);

const EmploymentChange = strictObject(
  { start_date: Type.Optional(Nullable(newEmploymentStart())), end_date: Type.Optional(Nullable(newEmploymentEnd())) },
  {
    minProperties: 1,
    description: 'The employment dates to change; a date left out keeps its value, `null` clears it.',
  },
);

const name = () =>
  Type.String({ minLength: 1, maxLength: 200, description: 'Full name as it appears on payroll documents.' });

export const Employee = named(
  'Employee',
  Type.Object(
    {
      id: Uuid(),
      user_id: Uuid({ description: 'The helpdesk user (technician) this employee is; one employee per user.' }),
      personnel_number: Type.String({
        description: 'The number the payroll software knows the employee by; unique in your tenant.',
      }),
      name: Type.String(),
      employment: Employment,
      current_contract: Type.Union([Contract, Type.Null()], {
        description:
          'The contract valid today (UTC); `null` before the first one (`GET /employees/{id}/contracts` lists them all).',
      }),
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: 'A person on the payroll, linked to the helpdesk user whose hours and leave are recorded.',
      examples: [
        {
          id: '4c3b2a19-0f8e-4d7c-9b6a-5e4d3c2b1a09',
          user_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01',
          personnel_number: '10042',
          name: 'Erika Mustermann',
          employment: { start_date: '2026-03-15', end_date: null },
          current_contract: {
            id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
            employee_id: '4c3b2a19-0f8e-4d7c-9b6a-5e4d3c2b1a09',
            valid_from: '2026-03-15',
            weekly_minutes: 2400,
            working_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
            vacation_days_per_year: 30,
            state: 'DE-BE',
            opening_balance_minutes: null,
            time_zone: 'Europe/Berlin',
            created_at: '2026-03-01T09:00:00.000Z',
          },
          created_at: '2026-10-01T07:45:00.000Z',
          updated_at: '2026-10-01T07:45:00.000Z',
        },
      ],
    },
  ),
);
export type EmployeeJson = Static<typeof Employee>;

export const EmployeePage = pageSchema('EmployeePage', Employee);

export const CreateEmployeeBody = named(
  'CreateEmployeeRequest',
  strictObject(
    {
      user_id: Uuid({
        description:
          'Id of the helpdesk user; stored as given (hr does not look it up in the helpdesk). Unique in your tenant.',
      }),
      personnel_number: personnelNumber({
        description: 'The payroll number: 1–20 digits (DATEV: at most 5). Unique in your tenant.',
      }),
      name: name(),
      employment: Type.Optional(
        strictObject(
          { start_date: newEmploymentStart(), end_date: Type.Optional(Nullable(newEmploymentEnd())) },
          { description: 'When the employment began (and ended).' },
        ),
      ),
    },
    {
      examples: [
        { user_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01', personnel_number: '10042', name: 'Erika Mustermann' },
      ],
    },
  ),
);
export type CreateEmployeeBody = Static<typeof CreateEmployeeBody>;

export const UpdateEmployeeBody = named(
  'UpdateEmployeeRequest',
  strictObject(
    {
      personnel_number: Type.Optional(personnelNumber()),
      name: Type.Optional(name()),
      employment: Type.Optional(EmploymentChange),
    },
    {
      minProperties: 1,
      description: 'The fields to change; at least one. `user_id` cannot change: register another employee instead.',
      examples: [
        { name: 'Erika Musterfrau' },
        { personnel_number: '10043' },
        { employment: { end_date: '2027-06-30' } },
      ],
    },
  ),
);
export type UpdateEmployeeBody = Static<typeof UpdateEmployeeBody>;

export const ListEmployeesQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  user_id: Type.Optional(Uuid({ description: 'Only the employee of this helpdesk user.' })),
  personnel_number: Type.Optional(personnelNumber({ description: 'Only the employee with this payroll number.' })),
});
export type ListEmployeesQuery = Static<typeof ListEmployeesQuery>;
