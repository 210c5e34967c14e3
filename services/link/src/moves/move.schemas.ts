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
import { RUN_STATUSES } from '../runs/run-kind';

export const MOVE_STATUSES = RUN_STATUSES;
export type MoveStatus = (typeof MOVE_STATUSES)[number];

/** In execution order, all due at the start of `effective_date` (UTC); `equipment_ticket` only with `physical`. */
export const MOVE_TASKS = ['update_account', 'change_bundles', 'equipment_ticket'] as const;
export type MoveTaskName = (typeof MOVE_TASKS)[number];

const EXAMPLE_USER = '5c4b3a29-1807-4f6e-8d5c-4b3a29180f6e';
const EXAMPLE_MANAGER = '9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4';

const BundleName = Type.String({ minLength: 1, maxLength: 256, description: 'A directory group, by its displayName.' });
const BundleList = (description: string, examples: string[]) =>
  Type.Array(BundleName, { maxItems: 50, uniqueItems: true, description, examples: [examples] });

const MovePhysical = Type.Object(
  {
    laptop: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'A laptop to hand over (free text).',
        examples: ['MacBook Pro 14'],
      }),
    ),
    badge: Type.Optional(Type.Boolean({ description: 'Whether the building badge must change.', examples: [true] })),
    phone_extension: Type.Optional(
      Type.Boolean({ description: 'Whether the phone extension must move.', examples: [false] }),
    ),
    notes: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'Anything else for the technician (desk, building, equipment to collect).',
        examples: ['Moves to the 3rd floor, desk 3.14.'],
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Equipment that changes with the move: a desk ticket (category hardware) is opened for it.',
  },
);

export const MoveTask = taskSchema('MoveTask', MOVE_TASKS, {
  dueAt: true,
  description:
    'One step, run in order when `due_at` (the start of `effective_date`, UTC) has come: ' +
    "`update_account` (SCIM PATCH of `title` and the enterprise extension's `department` and " +
    "`manager`, the manager's directory id found by their e-mail; `result.directory_user_id`, " +
    '`result.changed`), `change_bundles` (PATCH on `/Groups`: added to `bundles.add`, removed from ' +
    '`bundles.remove`; `result.added`, `result.removed`, `result.missing`: a group the directory does ' +
    'not have is reported there, the rest proceeds, and the task is then `failed`), ' +
    '`equipment_ticket` (only with `physical`: a desk ticket, category hardware; `result.ticket_id`, `result.ticket_number`).',
});

const Bundles = Type.Object(
  {
    add: BundleList('Groups the user joins.', ['Sales', 'CRM']),
    remove: BundleList('Groups the user leaves.', ['Engineering']),
  },
  { additionalProperties: false },
);

const taskExample = (name: MoveTaskName) => ({
  name,
  status: 'pending',
  detail: null,
  attempts: 0,
  result: null,
  started_at: null,
  finished_at: null,
  due_at: '2027-01-04T00:00:00.000Z',
});

export const Move = named(
  'Move',
  Type.Object(
    {
      id: Uuid(),
      status: stringEnum(MOVE_STATUSES, {
        description:
          '`scheduled` until the start of `effective_date` (cancellable), `in_progress`, then `completed` (every ' +
          'task succeeded), `completed_with_errors` (some failed, e.g. a missing group), ' +
          '`failed` (none succeeded); or `cancelled` (nothing was done).',
      }),
      user_id: Uuid({ description: 'The desk user who moves.' }),
      email: Type.String({ description: "Their e-mail as desk had it: the directory account's userName." }),
      tenant_id: Nullable(
        Uuid({
          description:
            "The managed tenant of the e-mail's domain (null when none was registered at creation; looked up again when due).",
        }),
      ),
      effective_date: DateOnly(),
      department: Nullable(Type.String({ description: 'The new department (null: unchanged).' })),
      manager_id: Nullable(Uuid({ description: 'The new manager, a desk user (null: unchanged).' })),
      job_title: Nullable(Type.String({ description: 'The new title (null: unchanged).' })),
      bundles: Bundles,
      physical: Nullable(MovePhysical),
      directory_user_id: Nullable(Type.String({ description: "The directory's id of the account, once found." })),
      tasks: Type.Array(MoveTask),
      created_at: DateTime(),
      updated_at: DateTime(),
      started_at: Nullable(DateTime()),
      finished_at: Nullable(DateTime()),
      cancelled_at: Nullable(DateTime()),
    },
    {
      additionalProperties: false,
      description: 'One person changing role, department, manager or groups, on a date.',
      examples: [
        {
          id: '6f5e4d3c-2b1a-4098-8f7e-6d5c4b3a2918',
          status: 'scheduled',
          user_id: EXAMPLE_USER,
          email: 'grace.hopper@contoso.com',
          tenant_id: '1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b',
          effective_date: '2027-01-04',
          department: 'Sales',
          manager_id: EXAMPLE_MANAGER,
          job_title: 'Account Executive',
          bundles: { add: ['Sales', 'CRM'], remove: ['Engineering'] },
          physical: { notes: 'Moves to the 3rd floor, desk 3.14.' },
          directory_user_id: null,
          tasks: [taskExample('update_account'), taskExample('change_bundles'), taskExample('equipment_ticket')],
          created_at: '2026-11-25T09:00:00.000Z',
          updated_at: '2026-11-25T09:00:00.000Z',
          started_at: null,
          finished_at: null,
          cancelled_at: null,
        },
      ],
    },
  ),
);
export type MoveJson = Static<typeof Move>;

export const MovePage = pageSchema('MovePage', Move);

export const CreateMoveBody = named(
  'CreateMoveRequest',
  strictObject(
    {
      user_id: Uuid({
        description: 'Who moves: an active desk user of your tenant (else 422).',
        examples: [EXAMPLE_USER],
      }),
      effective_date: DateOnly({
        description:
          'The day the move takes effect (YYYY-MM-DD): its tasks are due at its start (UTC); today or ' +
          "a past day means now. Not after the user's scheduled last day (422). " +
          RUN_DATE_BOUNDS_TEXT,
        examples: ['2027-01-04'],
      }),
      department: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description: "The new department (the enterprise extension's `department`).",
          examples: ['Sales'],
        }),
      ),
      manager_id: Type.Optional(
        Uuid({
          description:
            'The new manager: an active desk user of your tenant (else 422); in the directory, the account whose userName is their e-mail.',
          examples: [EXAMPLE_MANAGER],
        }),
      ),
      job_title: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description: 'The new title (SCIM `title`).',
          examples: ['Account Executive'],
        }),
      ),
      bundles: Type.Object(
        {
          add: Type.Optional(BundleList('Groups the user joins (default none).', ['Sales', 'CRM'])),
          remove: Type.Optional(
            BundleList('Groups the user leaves (default none); not one also in `add` (422).', ['Engineering']),
          ),
        },
        { additionalProperties: false, description: 'Directory groups (bundles) by displayName.' },
      ),
      physical: Type.Optional(MovePhysical),
    },
    {
      description: 'A mover: what changes for one person, and when.',
      examples: [
        {
          user_id: EXAMPLE_USER,
          effective_date: '2027-01-04',
          department: 'Sales',
          manager_id: EXAMPLE_MANAGER,
          job_title: 'Account Executive',
          bundles: { add: ['Sales', 'CRM'], remove: ['Engineering'] },
          physical: { notes: 'Moves to the 3rd floor, desk 3.14.' },
        },
      ],
    },
  ),
);
export type CreateMoveBody = Static<typeof CreateMoveBody>;

export const ListMovesQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  status: Type.Optional(stringEnum(MOVE_STATUSES, { description: 'Only moves in this status.' })),
});
export type ListMovesQuery = Static<typeof ListMovesQuery>;

export const MovePreview = previewSchema('MovePreview', 'move', Move, MoveTask, {
  plans: [
    'set title "Account Executive", department "Sales", manager ada.lovelace@contoso.com of grace.hopper@contoso.com in contoso.com\'s directory',
    'add to group Sales, add to group CRM, remove from group Engineering',
    'open a hardware ticket in desk for the move of grace.hopper@contoso.com',
  ],
  problems: [{ task: 'change_bundles', code: 'group_missing', detail: 'The directory has no group named "CRM".' }],
});
