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

export const ONBOARDING_STATUSES = [
  'scheduled',
  'in_progress',
  'completed',
  'completed_with_errors',
  'failed',
  'cancelled',
] as const;
export type OnboardingStatus = (typeof ONBOARDING_STATUSES)[number];

/** In execution order; `activate_account` only when the start date is still ahead (a staged account). */
export const ONBOARDING_TASKS = ['create_account', 'assign_bundles', 'equipment_ticket', 'activate_account'] as const;
export type OnboardingTaskName = (typeof ONBOARDING_TASKS)[number];

const EXAMPLE_ID = '7d4f9a8e-3c2b-4e1f-9a6d-5b8c7e2f1a30';
const EXAMPLE_TENANT = '1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b';
const EXAMPLE_MANAGER = '9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4';

const Physical = Type.Object(
  {
    laptop: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The laptop model (free text).',
      examples: ['ThinkPad T14 Gen 5'],
    }),
    badge: Type.Boolean({ description: 'Whether a building badge is needed.', examples: [true] }),
    phone_extension: Type.Boolean({ description: 'Whether a phone extension is needed.', examples: [false] }),
  },
  { additionalProperties: false, description: 'Equipment for the hardware ticket.' },
);

export const OnboardingTask = taskSchema('OnboardingTask', ONBOARDING_TASKS, {
  dueAt: true,
  description:
    'One step, run in order when `due_at` has come. Due as soon as the onboarding is created: ' +
    '`create_account` (SCIM POST /Users; `result.directory_user_id`; ' +
    'with `active: false` when the start date is still ahead), `assign_bundles` (each bundle is the ' +
    'directory group of that displayName; `result.assigned`, `result.missing`), ' +
    '`equipment_ticket` (a desk ticket, category hardware; `result.ticket_id`, `result.ticket_number`). ' +
    'Only when `start_date` was still ahead at creation (a staged account): `activate_account` ' +
    '(SCIM PATCH active true), due at the start of `start_date` (00:00 UTC).',
});

export const Onboarding = named(
  'Onboarding',
  Type.Object(
    {
      id: Uuid(),
      tenant_id: Uuid({ description: 'The managed tenant whose directory receives the account.' }),
      status: stringEnum(ONBOARDING_STATUSES, {
        description:
          '`scheduled` (created, not begun), `in_progress` (a staged onboarding stays so until its start ' +
          'date), `completed` (every task succeeded), `completed_with_errors` (some failed), ' +
          '`failed` (no task succeeded: the account could not be created, the rest was skipped), or ' +
          '`cancelled` (a staged onboarding cancelled before its start date; its account deleted).',
      }),
      first_name: Type.String(),
      last_name: Type.String(),
      email: Type.String({ description: 'In lower case; the directory userName and primary e-mail.' }),
      department: Type.String(),
      job_title: Nullable(Type.String({ description: 'The job title (SCIM `title`, LDAP `title`), when given.' })),
      manager_id: Uuid({ description: 'The desk user who manages the new person.' }),
      start_date: DateOnly(),
      bundles: Type.Array(Type.String(), { description: 'Directory group names the account joins.' }),
      physical: Physical,
      directory_user_id: Nullable(Type.String({ description: "The directory's id of the new account, once created." })),
      equipment_ticket: Nullable(
        Type.Object(
          { id: Uuid(), number: Type.Integer() },
          { additionalProperties: false, description: 'The desk ticket for the equipment, once opened.' },
        ),
      ),
      tasks: Type.Array(OnboardingTask),
      created_at: DateTime(),
      updated_at: DateTime(),
      started_at: Nullable(DateTime()),
      finished_at: Nullable(DateTime()),
      cancelled_at: Nullable(DateTime({ description: 'When a staged onboarding was cancelled.' })),
    },
    {
      additionalProperties: false,
      description: 'Bringing one person in: a directory account, its bundles (groups) and a hardware ticket in desk.',
      examples: [
        {
          id: EXAMPLE_ID,
          tenant_id: EXAMPLE_TENANT,
          status: 'completed',
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'ada.lovelace@contoso.com',
          department: 'Engineering',
          job_title: 'Research Engineer',
          manager_id: EXAMPLE_MANAGER,
          start_date: '2026-11-23',
          bundles: ['M365 E3', 'VPN'],
          physical: { laptop: 'ThinkPad T14 Gen 5', badge: true, phone_extension: false },
          directory_user_id: '2819c223-7f76-453a-919d-413861904646',
          equipment_ticket: { id: '0f4e3d2c-1b0a-4c9d-8e7f-6a5b4c3d2e1f', number: 42 },
          tasks: [
            {
              name: 'create_account',
              status: 'succeeded',
              detail: 'Created ada.lovelace@contoso.com in the directory.',
              attempts: 1,
              result: { directory_user_id: '2819c223-7f76-453a-919d-413861904646' },
              started_at: '2026-11-23T09:00:00.000Z',
              finished_at: '2026-11-23T09:00:01.000Z',
              due_at: '2026-11-23T09:00:00.000Z',
            },
            {
              name: 'assign_bundles',
              status: 'succeeded',
              detail: 'Added to M365 E3, VPN.',
              attempts: 1,
              result: { assigned: ['M365 E3', 'VPN'], missing: [] },
              started_at: '2026-11-23T09:00:01.000Z',
              finished_at: '2026-11-23T09:00:02.000Z',
              due_at: '2026-11-23T09:00:00.000Z',
            },
            {
              name: 'equipment_ticket',
              status: 'succeeded',
              detail: 'Opened desk ticket #42.',
              attempts: 1,
              result: { ticket_id: '0f4e3d2c-1b0a-4c9d-8e7f-6a5b4c3d2e1f', ticket_number: 42 },
              started_at: '2026-11-23T09:00:02.000Z',
              finished_at: '2026-11-23T09:00:02.000Z',
              due_at: '2026-11-23T09:00:00.000Z',
            },
          ],
          created_at: '2026-11-23T09:00:00.000Z',
          updated_at: '2026-11-23T09:00:02.000Z',
          started_at: '2026-11-23T09:00:00.000Z',
          finished_at: '2026-11-23T09:00:02.000Z',
          cancelled_at: null,
        },
      ],
    },
  ),
);
export type OnboardingJson = Static<typeof Onboarding>;

export const OnboardingPage = pageSchema('OnboardingPage', Onboarding);

export const CreateOnboardingBody = named(
  'CreateOnboardingRequest',
  strictObject(
    {
      first_name: Type.String({ minLength: 1, maxLength: 100, examples: ['Ada'] }),
      last_name: Type.String({ minLength: 1, maxLength: 100, examples: ['Lovelace'] }),
      email: Type.String({
        format: 'email',
        maxLength: 254,
        description: "The new person's address; its domain selects the managed tenant.",
        examples: ['ada.lovelace@contoso.com'],
      }),
      department: Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Free text; goes to the SCIM enterprise extension.',
        examples: ['Engineering'],
      }),
      manager_id: Uuid({
        description:
          "An active desk user of your tenant (else 422). Their directory account, found by their e-mail, becomes the account's manager where there is one.",
        examples: [EXAMPLE_MANAGER],
      }),
      job_title: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description: 'The job title (SCIM `title`, LDAP `title`).',
          examples: ['Research Engineer'],
        }),
      ),
      start_date: DateOnly({
        description:
          'First working day (YYYY-MM-DD). Still ahead: the account is created inactive now ' +
          '(licences and groups ready) and activated at its start (00:00 UTC). ' +
          RUN_DATE_BOUNDS_TEXT,
        examples: ['2026-12-01'],
      }),
      bundles: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
        maxItems: 100,
        uniqueItems: true,
        description: 'License bundles: each is the displayName of a group in the directory.',
        examples: [['M365 E3', 'VPN']],
      }),
      physical: Physical,
      tenant_id: Type.Optional(
        Uuid({
          description: "The managed tenant to use instead of the one whose domain is the e-mail's.",
          examples: [EXAMPLE_TENANT],
        }),
      ),
    },
    {
      description: 'The onboarding request of the source documentation.',
      examples: [
        {
          first_name: 'Ada',
          last_name: 'Lovelace',
          email: 'ada.lovelace@contoso.com',
          department: 'Engineering',
          manager_id: EXAMPLE_MANAGER,
          start_date: '2026-12-01',
          bundles: ['M365 E3', 'VPN'],
          physical: { laptop: 'ThinkPad T14 Gen 5', badge: true, phone_extension: false },
        },
      ],
    },
  ),
);
export type CreateOnboardingBody = Static<typeof CreateOnboardingBody>;

export const ListOnboardingsQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  status: Type.Optional(stringEnum(ONBOARDING_STATUSES, { description: 'Only onboardings in this status.' })),
});
export type ListOnboardingsQuery = Static<typeof ListOnboardingsQuery>;

export const OnboardingPreview = previewSchema('OnboardingPreview', 'onboarding', Onboarding, OnboardingTask, {
  plans: [
    "create user ada.lovelace@contoso.com in contoso.com's directory",
    'add to group M365 E3, add to group VPN',
    'open a hardware ticket in desk for the equipment of Ada Lovelace (laptop ThinkPad T14 Gen 5)',
  ],
  problems: [{ task: 'assign_bundles', code: 'group_missing', detail: 'The directory has no group named "VPN".' }],
});

export const OnboardingCredentialsJson = named(
  'OnboardingCredentials',
  Type.Object(
    {
      user_name: Type.String({ description: "The account's logon name (`sAMAccountName` on AD, `uid` on OpenLDAP)." }),
      initial_password: Type.String({
        description: 'The random initial password; it must be changed at first logon. Shown once.',
      }),
    },
    {
      additionalProperties: false,
      examples: [{ user_name: 'ada.lovelace', initial_password: 'k7#Qm2-vRt9!xWp4Zc8e' }],
    },
  ),
);
