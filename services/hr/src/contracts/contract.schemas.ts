import { Type, type Static } from '@sinclair/typebox';
import { GERMAN_STATES, WEEKDAYS } from '@msp/calendar';
import { groupDigits } from '@msp/http';
import { DEFAULT_TIME_ZONE } from '../calendar';
import { RequestDay } from '../day.schemas';
import {
  businessRuleProblem,
  DateOnly,
  DateTime,
  keysetQueryProperties,
  named,
  Nullable,
  pageQueryProperties,
  pageSchema,
  strictObject,
  stringEnum,
  Uuid,
} from '@msp/http';

const EXAMPLE = {
  valid_from: '2026-03-15',
  weekly_minutes: 2400,
  working_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  vacation_days_per_year: 30,
  state: 'DE-BE',
};

const VALID_FROM =
  "First day the contract holds, `YYYY-MM-DD`; it holds until the day before the next contract's `valid_from`. One contract per day (else 409).";
const validFrom = () => DateOnly({ description: VALID_FROM });
const newValidFrom = () => RequestDay({ description: VALID_FROM });
const weeklyMinutes = () =>
  Type.Integer({
    minimum: 1,
    maximum: 3600,
    description: 'Agreed working time a week in minutes (1–3600; 2400 is 40 hours).',
  });
const workingDays = () =>
  Type.Array(stringEnum(WEEKDAYS), {
    minItems: 1,
    maxItems: 7,
    uniqueItems: true,
    description:
      'The weekdays the employee works (a subset of `mon`…`sun`). Leave counts only these days, minus the public holidays of `state`.',
  });
const vacationDays = () =>
  Type.Number({
    minimum: 0,
    maximum: 365,
    multipleOf: 0.5,
    description:
      'Paid leave a year in working days (half days allowed). At least the legal minimum of §3 BUrlG, four weeks: 24 on six working days a week, ' +
      '20 on five, 4 × the working days a week on fewer (else 422 naming the minimum).',
  });
/** The most overtime (or hours owed) a contract may bring into the account: about a year of full-time work. */
export const MAX_OPENING_BALANCE_MINUTES = 100_000;
const OPENING_BALANCE =
  'Overtime brought into the overtime account (Arbeitszeitkonto) when it starts with this contract, in minutes (negative: hours owed), ' +
  `−${groupDigits(MAX_OPENING_BALANCE_MINUTES)} to ` +
  `${groupDigits(MAX_OPENING_BALANCE_MINUTES)}. The account then runs from this contract's ` +
  `\`valid_from\`: ` +
  'the month of `valid_from` opens with this balance (its days before `valid_from` no longer count), and every later month carries on from it, ' +
  "instead of from the start of the employment. The latest contract with an opening balance on or before a month's last day is the one that counts. " +
  '`null`: the account carries on through this contract.';
const openingBalance = () =>
  Nullable(
    Type.Integer({
      minimum: -MAX_OPENING_BALANCE_MINUTES,
      maximum: MAX_OPENING_BALANCE_MINUTES,
      description: OPENING_BALANCE,
      examples: [1200],
    }),
  );

const timeZone = (options: { default?: string } = {}) =>
  Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      "IANA time zone (e.g. `Europe/Berlin`, the default) whose local times the employee's timesheets record while the contract holds: their `HH:MM` " +
      "are that zone's wall-clock times, and every duration is counted in real minutes (00:00–24:00 on the day summer time begins is 1,380 minutes). " +
      'An unknown zone is a 400.',
    examples: ['Europe/Berlin'],
    ...options,
  });

const state = () =>
  stringEnum(GERMAN_STATES, {
    description: 'ISO 3166-2 code of the German state whose public holidays apply (`DE-BW` … `DE-TH`).',
  });

export const Contract = named(
  'Contract',
  Type.Object(
    {
      id: Uuid({ description: "The contract's id." }),
      employee_id: Uuid({ description: 'The employee it belongs to.' }),
      valid_from: validFrom(),
      weekly_minutes: weeklyMinutes(),
      working_days: workingDays(),
      vacation_days_per_year: vacationDays(),
      state: state(),
      opening_balance_minutes: openingBalance(),
      time_zone: timeZone(),
      created_at: DateTime({ description: 'When it was recorded (UTC).' }),
    },
    {
      additionalProperties: false,
      description:
        'The terms of employment from `valid_from` on. Contracts form a history: a change is a new contract, never an edit of an old one.',
      examples: [
        {
          id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          employee_id: '4c3b2a19-0f8e-4d7c-9b6a-5e4d3c2b1a09',
          ...EXAMPLE,
          opening_balance_minutes: null,
          time_zone: 'Europe/Berlin',
          created_at: '2026-03-01T09:00:00.000Z',
        },
      ],
    },
  ),
);
export type ContractJson = Static<typeof Contract>;

export const ContractPage = pageSchema('ContractPage', Contract);

export const CreateContractBody = named(
  'CreateContractRequest',
  strictObject(
    {
      valid_from: newValidFrom(),
      weekly_minutes: weeklyMinutes(),
      working_days: workingDays(),
      vacation_days_per_year: vacationDays(),
      state: state(),
      opening_balance_minutes: Type.Optional(openingBalance()),
      time_zone: Type.Optional(timeZone({ default: DEFAULT_TIME_ZONE })),
    },
    {
      description: 'A contract from `valid_from` on; the one before it ends the day before.',
      examples: [EXAMPLE, { ...EXAMPLE, valid_from: '2027-01-01', opening_balance_minutes: 1200 }],
    },
  ),
);
export type CreateContractBody = Static<typeof CreateContractBody>;

export const ListContractsQuery = strictObject({ ...pageQueryProperties, ...keysetQueryProperties });
export type ListContractsQuery = Static<typeof ListContractsQuery>;

export const ContractRuleProblem = businessRuleProblem(
  'ContractRuleProblem',
  {
    minimum: Type.Optional(
      Type.Number({
        description: "The legal minimum of `vacation_days_per_year` for the contract's working days a week (§3 BUrlG).",
      }),
    ),
  },
  'RFC 9457 problem document. `vacation_days_per_year` below the minimum of §3 BUrlG ' +
    '(`urn:msp:problem:below-legal-minimum`) carries `minimum` and names the field in `errors`.',
);
