import { Type, type Static } from '@sinclair/typebox';
import {
  DateOnly,
  DateTime,
  named,
  Nullable,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  strictObject,
  stringEnum,
  Uuid,
} from '@msp/http';
import { RUN_DATE_BOUNDS_TEXT } from '../runs/run-dates';
import { previewSchema } from '../runs/run-preview';
import { taskSchema } from '../runs/run-tasks';

export const OFFBOARDING_STATUSES = [
  'scheduled',
  'in_progress',
  'completed',
  'completed_with_errors',
  'failed',
  'cancelled',
] as const;
export type OffboardingStatus = (typeof OFFBOARDING_STATUSES)[number];

/** In execution order; all but the last are due when last_day has ended, the last after the retention. */
export const OFFBOARDING_TASKS = [
  'reassign_tickets',
  'deactivate_user',
  'disable_account',
  'delegate_mailbox',
  'delete_account',
] as const;
export type OffboardingTaskName = (typeof OFFBOARDING_TASKS)[number];

const EXAMPLE_USER = '5c4b3a29-1807-4f6e-8d5c-4b3a29180f6e';
const EXAMPLE_SUCCESSOR = '9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4';

export const OffboardingTask = taskSchema('OffboardingTask', OFFBOARDING_TASKS, {
  dueAt: true,
  description:
    "One step, run when `due_at` has come: `reassign_tickets` (the leaver's open, in-progress " +
    'and pending desk tickets go to the successor; `result.reassigned`), ' +
    "`deactivate_user` (the leaver's desk user is deactivated, as desk's `DELETE /users/:id` does; " +
    '`result.user_id`, `result.deactivated`: false when desk already had them inactive. ' +
    'It fails, deactivating nothing, while desk still has tickets being worked on assigned to ' +
    'them, which deactivating would leave unassigned: `result.still_assigned`), ' +
    "`disable_account` (SCIM PATCH active false on the account whose userName is the leaver's e-mail; `result.directory_user_id`), " +
    '`delegate_mailbox` (a desk ticket, category email, for a technician to delegate the ' +
    'mailbox to the successor; `result.ticket_id`, `result.ticket_number`), ' +
    'and after the retention `delete_account` (SCIM DELETE /Users/:id).',
});

export const Offboarding = named(
  'Offboarding',
  Type.Object(
    {
      id: Uuid(),
      status: stringEnum(OFFBOARDING_STATUSES, {
        description:
          '`scheduled` until the first task is due (cancellable), `in_progress`, then `completed` ' +
          '(every task succeeded), `completed_with_errors` (some failed), ' +
          '`failed` (none succeeded); or `cancelled` (nothing was done).',
      }),
      user_id: Uuid({ description: 'The leaving desk user.' }),
      successor_id: Uuid({ description: 'The desk user who takes over tickets and mailbox.' }),
      email: Type.String({ description: "The leaver's e-mail as desk had it: the directory account's userName." }),
      tenant_id: Nullable(
        Uuid({
          description:
            "The managed tenant of the e-mail's domain (null when none was registered at creation; looked up again when due).",
        }),
      ),
      last_day: DateOnly(),
      mailbox_retention_days: Type.Integer({ minimum: 0, maximum: 3650 }),
      directory_user_id: Nullable(Type.String({ description: "The directory's id of the account, once found." })),
      tasks: Type.Array(OffboardingTask),
      created_at: DateTime(),
      updated_at: DateTime(),
      started_at: Nullable(DateTime()),
      finished_at: Nullable(DateTime()),
      cancelled_at: Nullable(DateTime()),
    },
    {
      additionalProperties: false,
      description: 'Letting one person go, each step at its due time.',
      examples: [
        {
          id: '3a2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d',
          status: 'scheduled',
          user_id: EXAMPLE_USER,
          successor_id: EXAMPLE_SUCCESSOR,
          email: 'grace.hopper@contoso.com',
          tenant_id: '1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b',
          last_day: '2026-12-31',
          mailbox_retention_days: 30,
          directory_user_id: null,
          tasks: [
            {
              name: 'reassign_tickets',
              status: 'pending',
              detail: null,
              attempts: 0,
              result: null,
              started_at: null,
              finished_at: null,
              due_at: '2027-01-01T00:00:00.000Z',
            },
            {
              name: 'deactivate_user',
              status: 'pending',
              detail: null,
              attempts: 0,
              result: null,
              started_at: null,
              finished_at: null,
              due_at: '2027-01-01T00:00:00.000Z',
            },
            {
              name: 'disable_account',
              status: 'pending',
              detail: null,
              attempts: 0,
              result: null,
              started_at: null,
              finished_at: null,
              due_at: '2027-01-01T00:00:00.000Z',
            },
            {
              name: 'delegate_mailbox',
              status: 'pending',
              detail: null,
              attempts: 0,
              result: null,
              started_at: null,
              finished_at: null,
              due_at: '2027-01-01T00:00:00.000Z',
            },
            {
              name: 'delete_account',
              status: 'pending',
              detail: null,
              attempts: 0,
              result: null,
              started_at: null,
              finished_at: null,
              due_at: '2027-01-31T00:00:00.000Z',
            },
          ],
          created_at: '2026-11-23T09:00:00.000Z',
          updated_at: '2026-11-23T09:00:00.000Z',
          started_at: null,
          finished_at: null,
          cancelled_at: null,
        },
      ],
    },
  ),
);
export type OffboardingJson = Static<typeof Offboarding>;

export const OffboardingPage = pageSchema('OffboardingPage', Offboarding);

export const CreateOffboardingBody = named(
  'CreateOffboardingRequest',
  strictObject(
    {
      user_id: Uuid({
        description: 'The leaving user: an active desk user of your tenant (else 422).',
        examples: [EXAMPLE_USER],
      }),
      last_day: DateOnly({
        description:
          'Last working day (YYYY-MM-DD). The first tasks are due when it has ended (UTC); a past day means now. ' +
          RUN_DATE_BOUNDS_TEXT,
        examples: ['2026-12-31'],
      }),
      mailbox_retention_days: Type.Integer({
        minimum: 0,
        maximum: 3650,
        description: 'Days the mailbox is kept after last_day before the account is deleted (0–3650).',
        examples: [30],
      }),
      successor_id: Uuid({
        description: 'An active desk user of your tenant other than user_id (else 422).',
        examples: [EXAMPLE_SUCCESSOR],
      }),
    },
    {
      description: 'The offboarding request of the source documentation.',
      examples: [
        { user_id: EXAMPLE_USER, last_day: '2026-12-31', mailbox_retention_days: 30, successor_id: EXAMPLE_SUCCESSOR },
      ],
    },
  ),
);
export type CreateOffboardingBody = Static<typeof CreateOffboardingBody>;

export const ListOffboardingsQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  status: Type.Optional(stringEnum(OFFBOARDING_STATUSES, { description: 'Only offboardings in this status.' })),
});
export type ListOffboardingsQuery = Static<typeof ListOffboardingsQuery>;

export const OffboardingPreview = previewSchema('OffboardingPreview', 'offboarding', Offboarding, OffboardingTask, {
  plans: [
    'reassign 3 open ticket(s) of grace.hopper@contoso.com to the successor',
    'deactivate the desk user grace.hopper@contoso.com once their tickets are reassigned',
    "disable grace.hopper@contoso.com in contoso.com's directory",
    'open an email ticket in desk to delegate the mailbox of grace.hopper@contoso.com to the successor',
    "delete grace.hopper@contoso.com from contoso.com's directory after 30 day(s)",
  ],
  problems: [
    {
      task: 'disable_account',
      code: 'account_not_found',
      detail: 'The directory of contoso.com has no account with userName grace.hopper@contoso.com.',
    },
  ],
});
