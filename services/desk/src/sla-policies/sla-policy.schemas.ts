import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  Nullable,
  Uuid,
  named,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  strictObject,
} from '@msp/http';
import { NAME_MAX, Text } from '../shared/http.schemas';

/** A year of minutes: a target past that is a typo. */
const MAX_MINUTES = 525_600;

const Target = strictObject(
  {
    first_response_minutes: Type.Integer({
      minimum: 1,
      maximum: MAX_MINUTES,
      description: "Business minutes from the ticket's creation to its first public comment (`internal: false`).",
    }),
    resolution_minutes: Type.Integer({
      minimum: 1,
      maximum: MAX_MINUTES,
      description:
        "Business minutes from the ticket's creation to `resolved` or `closed`, not counting the time it spent `pending` (or resolved before a reopening).",
    }),
  },
  { examples: [{ first_response_minutes: 60, resolution_minutes: 480 }] },
);

const TARGETS_EXAMPLE = {
  urgent: { first_response_minutes: 15, resolution_minutes: 240 },
  high: { first_response_minutes: 60, resolution_minutes: 480 },
  normal: { first_response_minutes: 240, resolution_minutes: 1440 },
  low: { first_response_minutes: 480, resolution_minutes: 4800 },
};

export const TargetsSchema = named(
  'SlaTargets',
  strictObject(
    { urgent: Target, high: Target, normal: Target, low: Target },
    {
      description: "The targets of each ticket priority, in business minutes of the policy's calendar.",
      examples: [TARGETS_EXAMPLE],
    },
  ),
);
export type SlaTargets = Static<typeof TargetsSchema>;

const Name = Text({
  minLength: 1,
  maxLength: NAME_MAX,
  description: 'Unique within the tenant, compared case-insensitively.',
});
const CalendarId = Nullable(
  Uuid({ description: 'A calendar of the tenant (else 422); null counts around the clock (24×7).' }),
);
const IsDefault = Type.Boolean({
  description:
    'The policy of tickets whose client names none. A tenant has at most one default: making a policy the ' +
    'default unsets the previous one (which records its own `sla_policy.updated`).',
});

const EXAMPLE = {
  id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  name: 'Standard',
  calendar_id: '3f1c2b7a-9d4e-4c8b-a1f2-6e5d4c3b2a10',
  is_default: true,
  targets: TARGETS_EXAMPLE,
  created_at: '2026-11-02T10:00:00.000Z',
  updated_at: '2026-11-02T10:00:00.000Z',
};

export const SlaPolicySchema = named(
  'SlaPolicy',
  Type.Object(
    {
      id: Uuid(),
      name: Type.String(),
      calendar_id: Nullable(Uuid()),
      is_default: Type.Boolean(),
      targets: TargetsSchema,
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description:
        "Response and resolution targets. A new ticket takes its client's policy, else the tenant's " +
        'default, else none; it keeps a copy of the targets and the calendar.',
      examples: [EXAMPLE],
    },
  ),
);
export type SlaPolicy = Static<typeof SlaPolicySchema>;

export const NewSlaPolicySchema = named(
  'NewSlaPolicy',
  strictObject(
    {
      name: Name,
      calendar_id: Type.Optional(CalendarId),
      is_default: Type.Optional(IsDefault),
      targets: TargetsSchema,
    },
    {
      description: '`calendar_id` defaults to null (24×7), `is_default` to false.',
      examples: [{ name: EXAMPLE.name, calendar_id: EXAMPLE.calendar_id, is_default: true, targets: TARGETS_EXAMPLE }],
    },
  ),
);
export type NewSlaPolicy = Static<typeof NewSlaPolicySchema>;

export const SlaPolicyChangesSchema = named(
  'SlaPolicyChanges',
  strictObject(
    {
      name: Type.Optional(Name),
      calendar_id: Type.Optional(CalendarId),
      is_default: Type.Optional(IsDefault),
      targets: Type.Optional(TargetsSchema),
    },
    {
      minProperties: 1,
      description:
        'The fields to change; at least one. `targets` is replaced whole. Tickets opened before keep the targets and calendar they were opened with.',
      examples: [{ is_default: true }, { calendar_id: null }],
    },
  ),
);
export type SlaPolicyChanges = Static<typeof SlaPolicyChangesSchema>;

export const SlaPolicyListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);
export const SlaPolicyPageSchema = pageSchema('SlaPolicyPage', SlaPolicySchema);
