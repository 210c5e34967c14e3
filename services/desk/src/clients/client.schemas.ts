import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  Nullable,
  Uuid,
  named,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  stringEnum,
  strictObject,
} from '@msp/http';
import { CURRENCIES, DEFAULT_CURRENCY, HOURLY_RATE_MAX } from '../shared/currencies';
import { EMAIL_MAX, LONG_TEXT_MAX, NAME_MAX, Text } from '../shared/http.schemas';

const Name = Text({
  minLength: 1,
  maxLength: NAME_MAX,
  description: 'Unique within the tenant, compared case-insensitively ("ACME" = "Acme").',
});
const Email = Nullable(Type.String({ format: 'email', maxLength: EMAIL_MAX }));
const Phone = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 50,
    pattern: '^[0-9+()./ -]+$',
    description: 'Digits, spaces and + ( ) . / -',
  }),
);
const Notes = Nullable(Text({ maxLength: LONG_TEXT_MAX }));
const HourlyRate = Nullable(
  Type.Integer({
    minimum: 0,
    maximum: HOURLY_RATE_MAX,
    description:
      `What an hour of the client's time is billed at, in minor units of \`currency\` per ` +
      'hour (cents: 9500 is 95.00 EUR an hour; a currency without decimals, such as JPY, ' +
      `in whole units), 0–${HOURLY_RATE_MAX}; null: none. ` +
      "A time entry recorded on the client's tickets takes it as its `hourly_rate` unless it names its own; a change applies to entries recorded afterwards.",
  }),
);
const Currency = stringEnum(CURRENCIES, {
  description:
    `ISO 4217 code of \`hourly_rate\` and of the amounts of the client's time (default ` +
    `${DEFAULT_CURRENCY}); another code is a 400. Time entries take it when they are recorded.`,
});
const EmailDomains = Type.Array(Type.String({ format: 'hostname', pattern: '\\.', minLength: 3, maxLength: 253 }), {
  maxItems: 50,
  uniqueItems: true,
  description:
    "The mail domains the client's people write from, lower-cased (at most 50): a sender at one of them is taken as the client's. " +
    "A domain is one client's per tenant (else 409 `urn:msp:problem:email-domain-taken`); a free-mail domain " +
    '(gmail.com, outlook.com, gmx.de, …) is a 422 `urn:msp:problem:free-mail-domain`.',
});
const SlaPolicyId = Nullable(
  Uuid({
    description:
      "The SLA policy the client's new tickets take (an SLA policy of the tenant, else 422); null: the tenant's default policy, if any.",
  }),
);

export const ClientSchema = named(
  'Client',
  Type.Object(
    {
      id: Uuid(),
      name: Type.String(),
      email: Nullable(Type.String()),
      phone: Nullable(Type.String()),
      notes: Nullable(Type.String()),
      email_domains: Type.Array(Type.String(), {
        description: 'The mail domains the client owns, lower-cased, sorted.',
      }),
      sla_policy_id: SlaPolicyId,
      hourly_rate: HourlyRate,
      currency: Currency,
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: 'A customer company of the tenant.',
      examples: [
        {
          id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          name: 'Contoso Ltd',
          email: 'it@contoso.example',
          phone: '+49 30 1234567',
          notes: 'Office hours 8–17; call before on-site visits.',
          email_domains: ['contoso.example'],
          sla_policy_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          hourly_rate: 9500,
          currency: 'EUR',
          created_at: '2026-11-02T10:00:00.000Z',
          updated_at: '2026-11-02T10:00:00.000Z',
        },
      ],
    },
  ),
);
export type Client = Static<typeof ClientSchema>;

export const NewClientSchema = named(
  'NewClient',
  strictObject(
    {
      name: Name,
      email: Type.Optional(Email),
      phone: Type.Optional(Phone),
      notes: Type.Optional(Notes),
      email_domains: Type.Optional(EmailDomains),
      sla_policy_id: Type.Optional(SlaPolicyId),
      hourly_rate: Type.Optional(HourlyRate),
      currency: Type.Optional(Currency),
    },
    {
      description: `\`hourly_rate\` defaults to null (none), \`currency\` to ${DEFAULT_CURRENCY}.`,
      examples: [
        {
          name: 'Contoso Ltd',
          email: 'it@contoso.example',
          phone: '+49 30 1234567',
          notes: 'Office hours 8–17; call before on-site visits.',
          hourly_rate: 9500,
          currency: 'EUR',
        },
      ],
    },
  ),
);
export type NewClient = Static<typeof NewClientSchema>;

export const ClientChangesSchema = named(
  'ClientChanges',
  strictObject(
    {
      name: Type.Optional(Name),
      email: Type.Optional(Email),
      phone: Type.Optional(Phone),
      notes: Type.Optional(Notes),
      email_domains: Type.Optional(EmailDomains),
      sla_policy_id: Type.Optional(SlaPolicyId),
      hourly_rate: Type.Optional(HourlyRate),
      currency: Type.Optional(Currency),
    },
    {
      minProperties: 1,
      description:
        'The fields to change; at least one. `email_domains` replaces the list. `null` clears email, phone, ' +
        'notes, sla_policy_id or hourly_rate. A new rate or currency applies to time entries recorded afterwards.',
      examples: [{ phone: '+49 30 7654321', notes: null }, { sla_policy_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' }],
    },
  ),
);
export type ClientChanges = Static<typeof ClientChangesSchema>;

export const ClientListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);
export const ClientPageSchema = pageSchema('ClientPage', ClientSchema);
