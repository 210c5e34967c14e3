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
import { EMAIL_MAX, NAME_MAX, Text } from '../shared/http.schemas';

export const EMAIL_STATUSES = ['ok', 'bounced'] as const;
/** The most addresses one contact has. */
export const CONTACT_EMAILS_MAX = 20;

const Name = Text({ minLength: 1, maxLength: NAME_MAX });
const Email = Type.String({ format: 'email', maxLength: EMAIL_MAX });
const Emails = Type.Array(Email, {
  maxItems: CONTACT_EMAILS_MAX,
  description:
    `Every address of the contact, the primary \`email\` included (added when missing), at ` +
    `most ${CONTACT_EMAILS_MAX}; lower-cased. Each is one contact's per tenant, compared ` +
    `case-insensitively (else 409 \`urn:msp:problem:email-taken\`).`,
});
const ClientId = Nullable(
  Uuid({ description: 'The client the contact works for (a client of the tenant, else 422); null: none yet.' }),
);
const Phone = Nullable(
  Type.String({
    minLength: 1,
    maxLength: 50,
    pattern: '^[0-9+()./ -]+$',
    description: 'Digits, spaces and + ( ) . / -',
  }),
);
const Language = Nullable(
  Type.String({
    pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
    maxLength: 35,
    description: 'BCP 47 language tag the contact is written to in, e.g. `de` or `en-GB`.',
  }),
);
export const EmailStatus = stringEnum(EMAIL_STATUSES, {
  description:
    '`bounced` after a mail to the contact came back undeliverable: nothing is mailed to the contact until it is changed (any PATCH sets `ok` again).',
});

export const ContactSchema = named(
  'Contact',
  Type.Object(
    {
      id: Uuid(),
      name: Type.String(),
      email: Type.String({ description: 'The primary address, lower-cased.' }),
      emails: Type.Array(Type.String(), { description: 'Every address of the contact, the primary first.' }),
      client_id: Nullable(Uuid()),
      phone: Nullable(Type.String()),
      language: Nullable(Type.String()),
      email_status: EmailStatus,
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: 'A person who writes to the helpdesk, usually of a client.',
      examples: [
        {
          id: '2b7e4c1d-9a3f-4e5b-8c6d-1f0e2a3b4c5d',
          name: 'Anna Berger',
          email: 'anna.berger@contoso.example',
          emails: ['anna.berger@contoso.example', 'a.berger@contoso.example'],
          client_id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          phone: '+49 30 1234567',
          language: 'de',
          email_status: 'ok',
          created_at: '2026-11-02T10:00:00.000Z',
          updated_at: '2026-11-02T10:00:00.000Z',
        },
      ],
    },
  ),
);
export type Contact = Static<typeof ContactSchema>;

export const NewContactSchema = named(
  'NewContact',
  strictObject(
    {
      name: Name,
      email: Email,
      emails: Type.Optional(Emails),
      client_id: Type.Optional(ClientId),
      phone: Type.Optional(Phone),
      language: Type.Optional(Language),
    },
    {
      examples: [
        {
          name: 'Anna Berger',
          email: 'anna.berger@contoso.example',
          client_id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          language: 'de',
        },
      ],
    },
  ),
);
export type NewContact = Static<typeof NewContactSchema>;

export const ContactChangesSchema = named(
  'ContactChanges',
  strictObject(
    {
      name: Type.Optional(Name),
      email: Type.Optional(Email),
      emails: Type.Optional(Emails),
      client_id: Type.Optional(ClientId),
      phone: Type.Optional(Phone),
      language: Type.Optional(Language),
    },
    {
      minProperties: 1,
      description:
        'The fields to change; at least one. `emails` replaces the list (the primary is kept in it); a new ' +
        '`email` alone is added to it. `null` clears client_id, phone or language. ' +
        'Any change sets `email_status` to `ok`.',
      examples: [{ phone: '+49 30 7654321' }, { email: 'anna@contoso.example' }],
    },
  ),
);
export type ContactChanges = Static<typeof ContactChangesSchema>;

export const ContactListQuery = Type.Object(
  {
    ...pageQueryProperties,
    ...keysetQueryProperties,
    client_id: Type.Optional(Uuid({ description: 'Only contacts of this client.' })),
    email: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: EMAIL_MAX,
        description: 'Only the contact with this address (any of its `emails`), compared case-insensitively.',
      }),
    ),
    q: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 200,
        description:
          'Only contacts with, for each of its words, a word starting with it, in any letter case: a word of the name, one of ' +
          'the addresses whole, its local part, its domain or a piece of these between punctuation (`Lovel`, `ada.lovelace`, ' +
          '`lovelace`, `acme.com`); a word with `@` the start of an address (`ada.lovelace@`, `@acme.com` a domain).',
      }),
    ),
  },
  { additionalProperties: false },
);
/** How many matches of a search (`q`) `pagination.total` counts at most: past it, `total_exact` is false. */
export const CONTACT_SEARCH_COUNT_LIMIT = 1000;

export type ContactFilters = Pick<Static<typeof ContactListQuery>, 'client_id' | 'email' | 'q'>;
export const ContactPageSchema = pageSchema('ContactPage', ContactSchema);
