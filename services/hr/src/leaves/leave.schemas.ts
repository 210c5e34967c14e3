import { Type, type Static } from '@sinclair/typebox';
import {
  businessRuleProblem,
  DateOnly,
  DateTime,
  named,
  keysetQueryProperties,
  Nullable,
  pageQueryProperties,
  pageSchema,
  strictObject,
  stringEnum,
  Uuid,
} from '@msp/http';
import { RequestDay } from '../day.schemas';
import { MAX_LEAVE_YEARS } from './leave-span';
import { LEAVE_STATUSES } from './leave-status';

export const LEAVE_TYPES = ['vacation', 'sick', 'unpaid', 'parental', 'special'] as const;
export type LeaveType = (typeof LEAVE_TYPES)[number];

const NOTE_MAX = 2000;

const leaveType = (options: { description?: string } = {}) =>
  stringEnum(LEAVE_TYPES, {
    description:
      '`vacation`, `sick` (sick leave), `unpaid`, `parental` (Elternzeit) or `special` (Sonderurlaub). The payroll export pays approved leave per type.',
    ...options,
  });
const leaveStatus = (options: { description?: string } = {}) =>
  stringEnum(LEAVE_STATUSES, {
    description:
      '`requested` (new), `approved`, `rejected` or `cancelled`. Moves: requested → approved | ' +
      'rejected | cancelled, approved → cancelled; rejected and cancelled are final.',
    ...options,
  });

export const Leave = named(
  'Leave',
  Type.Object(
    {
      id: Uuid({ description: "The leave's id." }),
      user_id: Uuid({ description: 'The helpdesk user who is away; an employee of your tenant.' }),
      type: leaveType(),
      status: leaveStatus(),
      start_date: DateOnly({ description: 'First day of the leave, `YYYY-MM-DD`.' }),
      end_date: DateOnly({ description: 'Last day of the leave, `YYYY-MM-DD` (included).' }),
      working_days: Type.Integer({
        minimum: 0,
        description:
          'Working days from `start_date` to `end_date`, both included, counted when the leave was requested: on each day the `working_days` of the ' +
          "employee's contract valid that day, minus the public holidays of its `state` (8 March counts in Bavaria, not in Berlin). Days before the " +
          "employee's first contract count Monday to Friday (no holidays: no state is known); they are not booked on the leave account.",
      }),
      returned_days: Type.Integer({
        minimum: 0,
        description:
          'Of a `vacation`: its working days that a `requested` or `approved` sick leave covers. They return to the leave account (§9 BUrlG): the employee ' +
          'was sick, not on holiday. 0 otherwise.',
      }),
      note: Nullable(Type.String({ description: 'Free text from the request; `null` when none was given.' })),
      created_at: DateTime({ description: 'When the leave was requested (UTC).' }),
      updated_at: DateTime({ description: 'When the status last moved (UTC); `created_at` until then.' }),
    },
    {
      additionalProperties: false,
      description: 'An absence of an employee, in whole days.',
      examples: [
        {
          id: '8d2f6a1e-3b7c-4e9d-a5f0-1c2b3d4e5f60',
          user_id: '5f1c2b7a-2d4e-4c8f-9b1a-7e6d5c4b3a29',
          type: 'vacation',
          status: 'requested',
          start_date: '2026-10-29',
          end_date: '2026-11-03',
          working_days: 4,
          returned_days: 0,
          note: 'Autumn holidays',
          created_at: '2026-10-01T09:00:00.000Z',
          updated_at: '2026-10-01T09:00:00.000Z',
        },
      ],
    },
  ),
);
export type LeaveJson = Static<typeof Leave>;

export const LeavePage = pageSchema('LeavePage', Leave);

export const CreateLeaveBody = named(
  'CreateLeaveRequest',
  strictObject(
    {
      user_id: Uuid({ description: 'The `user_id` of an employee of your tenant (else 422).' }),
      type: leaveType(),
      start_date: RequestDay({ description: 'First day, `YYYY-MM-DD`.', examples: ['2026-10-29'] }),
      end_date: RequestDay({
        description:
          `Last day, \`YYYY-MM-DD\`, not before \`start_date\` and at most ${MAX_LEAVE_YEARS} ` +
          `years after it: before the same day ${MAX_LEAVE_YEARS} years later ` +
          "(parental leave, the longest, ends by the child's third birthday; else 422 naming `latest_end_date`). Equal for a single day.",
        examples: ['2026-11-03'],
      }),
      note: Type.Optional(
        Type.String({
          maxLength: NOTE_MAX,
          pattern: '^[^\\u0000]*$',
          description: `Free text, at most ${NOTE_MAX} characters.`,
        }),
      ),
    },
    {
      description: 'A leave request; it starts `requested`.',
      examples: [
        {
          user_id: '5f1c2b7a-2d4e-4c8f-9b1a-7e6d5c4b3a29',
          type: 'vacation',
          start_date: '2026-10-29',
          end_date: '2026-11-03',
          note: 'Autumn holidays',
        },
      ],
    },
  ),
);
export type CreateLeaveBody = Static<typeof CreateLeaveBody>;

export const UpdateLeaveBody = named(
  'UpdateLeaveRequest',
  strictObject(
    {
      status: leaveStatus({
        description: 'The state to move to: requested → approved | rejected | cancelled, approved → cancelled.',
      }),
    },
    {
      description: "Moves the leave's status; nothing else of a leave changes (cancel it and request another).",
      examples: [{ status: 'approved' }],
    },
  ),
);
export type UpdateLeaveBody = Static<typeof UpdateLeaveBody>;

export const ListLeavesQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  user_id: Type.Optional(Uuid({ description: "Only this user's leaves." })),
  status: Type.Optional(leaveStatus({ description: 'Only leaves in this state.' })),
  type: Type.Optional(leaveType({ description: 'Only leaves of this type.' })),
  from: Type.Optional(
    RequestDay({ description: 'Only leaves that end on or after this day, `YYYY-MM-DD`.', examples: ['2026-10-01'] }),
  ),
  to: Type.Optional(
    RequestDay({
      description: 'Only leaves that start on or before this day, `YYYY-MM-DD` (not before `from`).',
      examples: ['2026-10-31'],
    }),
  ),
});
export type ListLeavesQuery = Static<typeof ListLeavesQuery>;

export const LeaveRuleProblem = businessRuleProblem(
  'LeaveRuleProblem',
  {
    current_status: Type.Optional(leaveStatus({ description: "The leave's status, unchanged (illegal moves only)." })),
    allowed_transitions: Type.Optional(
      Type.Array(leaveStatus(), {
        description: 'The states the leave may move to from its current one (illegal moves only).',
      }),
    ),
    latest_end_date: Type.Optional(
      DateOnly({
        description: `The last day a leave from \`start_date\` may end on (at most ${MAX_LEAVE_YEARS} years; a longer leave only).`,
      }),
    ),
  },
  'RFC 9457 problem document. An illegal status move (`urn:msp:problem:illegal-transition`) carries `current_status` and `allowed_transitions`; ' +
    `the other rules (\`user_id\` no employee, \`end_date\` before \`start_date\` or more than ` +
    `${MAX_LEAVE_YEARS} years after it, with \`latest_end_date\`) name the field in \`errors\`.`,
);
