import { Type, type Static } from '@sinclair/typebox';
import { businessRuleProblem, DateOnly, DateTime, named, strictObject, Uuid } from '@msp/http';
import { RequestYear } from '../day.schemas';

const days = (description: string) => Type.Number({ description });

export const LeaveAdjustment = named(
  'LeaveAdjustment',
  Type.Object(
    {
      id: Uuid({ description: "The adjustment's id." }),
      employee_id: Uuid({ description: 'The employee whose account it changes.' }),
      year: Type.Integer({ description: 'The year whose account it changes.' }),
      days: Type.Number({ description: 'Working days added (positive) or taken away (negative), in steps of 0.5.' }),
      reason: Type.String({
        description: 'Why, e.g. the collective agreement that grants more days, or the correction made.',
      }),
      created_at: DateTime({ description: 'When it was recorded (UTC).' }),
    },
    {
      additionalProperties: false,
      description:
        "A correction of a year's leave account: days a collective agreement grants beyond the contract, or a correction.",
      examples: [
        {
          id: '6e5d4c3b-2a19-4f8e-9d7c-6b5a4e3d2c1b',
          employee_id: '4c3b2a19-0f8e-4d7c-9b6a-5e4d3c2b1a09',
          year: 2026,
          days: 2,
          reason: 'TV-L §26: two extra days',
          created_at: '2026-11-02T10:00:00.000Z',
        },
      ],
    },
  ),
);
export type LeaveAdjustmentJson = Static<typeof LeaveAdjustment>;

export const CreateLeaveAdjustmentBody = named(
  'CreateLeaveAdjustmentRequest',
  strictObject(
    {
      year: RequestYear({ description: 'The year whose account it changes,' }),
      days: Type.Number({
        minimum: -365,
        maximum: 365,
        multipleOf: 0.5,
        description: 'Working days to add (positive) or take away (negative), in steps of 0.5; not 0.',
      }),
      reason: Type.String({
        minLength: 1,
        maxLength: 500,
        pattern: '^[^\\u0000]*\\S[^\\u0000]*$',
        description: 'Why (1–500 characters), e.g. the collective agreement.',
      }),
    },
    {
      description: "A correction of a year's account.",
      examples: [
        { year: 2026, days: 2, reason: 'TV-L §26: two extra days' },
        { year: 2026, days: -0.5, reason: 'Correction: half day on 24 December' },
      ],
    },
  ),
);
export type CreateLeaveAdjustmentBody = Static<typeof CreateLeaveAdjustmentBody>;

export const LeaveAccountQuery = strictObject({
  year: Type.Optional(
    RequestYear({
      description: 'The calendar year, e.g. `2026`; the current one (UTC) when left out;',
      examples: [2026],
    }),
  ),
});
export type LeaveAccountQuery = Static<typeof LeaveAccountQuery>;

export const LeaveAccount = named(
  'LeaveAccount',
  Type.Object(
    {
      year: Type.Integer({ description: 'The calendar year.' }),
      entitlement_days: days(
        "The year's entitlement (§§3–5 BUrlG): `vacation_days_per_year` of the contracts valid in the " +
          'year, spread by the days each holds. The whole of it once the six-month ' +
          'waiting period (§4) is complete within the year or before it; otherwise 1/12 per full ' +
          'month of employment in the year — in the year of entry when the ' +
          'waiting period ends only the next year (§5 (1) a), when the employment ends before it ' +
          'is complete (§5 (1) b), in the year of exit when it ends on or ' +
          'before 30 June (§5 (1) c). A fraction of at least half a day is rounded up to a whole day (§5 (2)); a smaller one is kept.',
      ),
      carried_over_days: days(
        'What was left at the end of the previous year (its `remaining_days`). Negative when the tenant allows ' +
          'negative balances and the previous year ended in debt: a debt does not expire.',
      ),
      carry_over_expires_on: DateOnly({
        description:
          "The day at whose end the carried-over days not used by then expire: the tenant's `carry_over_expiry` of this year (default 31 March, §7 (3) BUrlG).",
      }),
      expired_days: days(
        'Carried-over days that expired: 0 until `carry_over_expires_on` is over, then `carried_over_days` ' +
          'minus the approved vacation days up to that day (carried-over days are used first).',
      ),
      adjustments_days: days("Sum of the year's adjustments (`adjustments`)."),
      taken_days: days(
        'Approved vacation working days of the year up to today (UTC); for a past year all of them ' +
          '(to 31 December). Days a sick leave covers are not counted (§9 BUrlG).',
      ),
      planned_days: days('Approved vacation working days of the year after today (0 for a past year).'),
      requested_days: days(
        "Working days of the year's vacation requests not yet approved. They do not reduce " +
          '`remaining_days`, but a new request must fit in `remaining_days − requested_days`.',
      ),
      remaining_days: days(
        '`entitlement_days + carried_over_days − expired_days + adjustments_days − taken_days − planned_days`; carried into the next year.',
      ),
      adjustments: Type.Array(LeaveAdjustment, { description: "The year's adjustments, oldest first." }),
    },
    {
      additionalProperties: false,
      description:
        "An employee's leave account of one year (Bundesurlaubsgesetz), in working days of the employee's contracts.",
      examples: [
        {
          year: 2026,
          entitlement_days: 30,
          carried_over_days: 5,
          carry_over_expires_on: '2026-03-31',
          expired_days: 2,
          adjustments_days: 2,
          taken_days: 18,
          planned_days: 5,
          requested_days: 3,
          remaining_days: 12,
          adjustments: [
            {
              id: '6e5d4c3b-2a19-4f8e-9d7c-6b5a4e3d2c1b',
              employee_id: '4c3b2a19-0f8e-4d7c-9b6a-5e4d3c2b1a09',
              year: 2026,
              days: 2,
              reason: 'TV-L §26: two extra days',
              created_at: '2026-11-02T10:00:00.000Z',
            },
          ],
        },
      ],
    },
  ),
);
export type LeaveAccountJson = Static<typeof LeaveAccount>;

export const InsufficientBalanceProblem = businessRuleProblem(
  'InsufficientLeaveBalanceProblem',
  {
    year: Type.Optional(Type.Integer({ description: 'The year whose account is short.' })),
    needed_days: Type.Optional(Type.Number({ description: 'Working days the vacation needs in that year.' })),
    remaining_days: Type.Optional(Type.Number({ description: "The account's `remaining_days`." })),
    requested_days: Type.Optional(
      Type.Number({ description: 'Days already requested in that year and not yet approved.' }),
    ),
    available_days: Type.Optional(
      Type.Number({ description: 'What is left for a new request: `remaining_days − requested_days`.' }),
    ),
  },
  'RFC 9457 problem document. A `vacation` beyond what is left ' +
    '(`urn:msp:problem:insufficient_leave_balance`) names the year, `needed_days` and `available_days`.',
);
