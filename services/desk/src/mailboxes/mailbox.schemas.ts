import { Type, type Static, type TOptional, type TSchema } from '@sinclair/typebox';
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

export const MAIL_TLS = ['implicit', 'starttls', 'none'] as const;
export const UNKNOWN_SENDER = ['create_contact', 'quarantine'] as const;
export const CLOSED_TICKET_POLICIES = ['reopen', 'follow_up'] as const;
export const MIN_MESSAGE_BYTES = 10_000;
export const DEFAULT_MESSAGE_BYTES = 10_485_760;

const optional = <T extends Record<string, TSchema>>(props: T) =>
  Object.fromEntries(Object.entries(props).map(([key, schema]) => [key, Type.Optional(schema)])) as {
    [K in keyof T]: TOptional<T[K]>;
  };

const Host = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:\\[\\]-]+$' });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Tls = stringEnum(MAIL_TLS, {
  description:
    '`implicit` (TLS from the first byte, IMAPS 993 / SMTPS 465), `starttls`, or `none` (only for a server on a trusted network).',
});
const Username = Text({ minLength: 1, maxLength: 320 });
const Password = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'Write-only: stored encrypted, never answered (`password_set` says whether one is).',
});
const Folder = Text({ minLength: 1, maxLength: 200 });

const OAuth2Fields = {
  token_url: Type.String({
    format: 'uri',
    maxLength: 2000,
    pattern: '^https?://',
    description:
      'The token endpoint of the client credentials grant (`https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token`).',
  }),
  client_id: Text({ minLength: 1, maxLength: 500 }),
  client_secret: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'Write-only: stored encrypted, never answered (`client_secret_set` says whether one is).',
  }),
  scope: Nullable(
    Text({ minLength: 1, maxLength: 1000, description: 'E.g. `https://outlook.office365.com/.default`.' }),
  ),
};
const OAuth2In = strictObject(
  { ...OAuth2Fields, scope: Type.Optional(OAuth2Fields.scope) },
  {
    description:
      'XOAUTH2 instead of a password: a token of the client credentials grant, fetched and refreshed before it expires.',
  },
);
const OAuth2Changes = Nullable(
  strictObject(optional(OAuth2Fields), { description: 'Merged into the stored settings; null turns XOAUTH2 off.' }),
);
const OAuth2Out = Nullable(
  Type.Object(
    {
      token_url: Type.String(),
      client_id: Type.String(),
      scope: Nullable(Type.String()),
      client_secret_set: Type.Boolean(),
    },
    { additionalProperties: false, description: 'XOAUTH2 settings, or null when the login is by password.' },
  ),
);

const ImapIn = { host: Host, port: Port, tls: Tls, username: Username, password: Password };
const SmtpIn = { host: Host, port: Port, tls: Tls, username: Nullable(Username), password: Password };

const settings = {
  name: Nullable(Text({ minLength: 1, maxLength: NAME_MAX })),
  folder: Folder,
  processed_folder: Nullable(Folder),
  poll_interval_seconds: Type.Integer({
    minimum: 10,
    maximum: 86_400,
    description: 'Seconds between polls, at least 10 (default 60).',
  }),
  default_client_id: Nullable(
    Uuid({
      description: 'The client of a sender no contact or client domain knows, with `unknown_sender: create_contact`.',
    }),
  ),
  unknown_sender: stringEnum(UNKNOWN_SENDER, {
    description: '`create_contact` (under `default_client_id`) or `quarantine` a mail from an unknown sender.',
  }),
  closed_ticket_policy: stringEnum(CLOSED_TICKET_POLICIES, {
    description:
      'A mail to a closed ticket: `reopen` it (within `reopen_within_days` of its closing), else a new ticket with `follow_up_of`.',
  }),
  reopen_within_days: Type.Integer({ minimum: 0, maximum: 3650 }),
  max_message_bytes: Type.Integer({
    minimum: MIN_MESSAGE_BYTES,
    maximum: 2_147_483_647,
    description:
      'A bigger message (attachments included) is logged `failed`/`too_large`, not processed (default 10,485,760).',
  }),
  auto_acknowledge: Type.Boolean(),
  enabled: Type.Boolean(),
};

export const MailboxSchema = named(
  'Mailbox',
  Type.Object(
    {
      id: Uuid(),
      address: Type.String(),
      imap: Type.Object(
        {
          host: Type.String(),
          port: Port,
          tls: Tls,
          username: Type.String(),
          password_set: Type.Boolean(),
          oauth2: OAuth2Out,
        },
        { additionalProperties: false },
      ),
      smtp: Type.Object(
        {
          host: Type.String(),
          port: Port,
          tls: Tls,
          username: Nullable(Type.String()),
          password_set: Type.Boolean(),
          oauth2: OAuth2Out,
        },
        { additionalProperties: false },
      ),
      ...settings,
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: 'A mailbox desk reads over IMAP (new mail becomes tickets and comments) and answers from over SMTP.',
      examples: [
        {
          id: '6d5c4b3a-2f1e-4d0c-9b8a-7f6e5d4c3b2a',
          address: 'help@msp.example',
          name: 'Helpdesk',
          imap: {
            host: 'imap.msp.example',
            port: 993,
            tls: 'implicit',
            username: 'help@msp.example',
            password_set: true,
            oauth2: null,
          },
          smtp: {
            host: 'smtp.msp.example',
            port: 465,
            tls: 'implicit',
            username: 'help@msp.example',
            password_set: true,
            oauth2: null,
          },
          folder: 'INBOX',
          processed_folder: null,
          poll_interval_seconds: 60,
          default_client_id: null,
          unknown_sender: 'quarantine',
          closed_ticket_policy: 'reopen',
          reopen_within_days: 14,
          max_message_bytes: 10485760,
          auto_acknowledge: false,
          enabled: true,
          created_at: '2026-11-02T10:00:00.000Z',
          updated_at: '2026-11-02T10:00:00.000Z',
        },
      ],
    },
  ),
);
export type Mailbox = Static<typeof MailboxSchema>;

export const NewMailboxSchema = named(
  'NewMailbox',
  strictObject(
    {
      address: Type.String({ format: 'email', maxLength: EMAIL_MAX }),
      imap: strictObject({ ...ImapIn, password: Type.Optional(Password), oauth2: Type.Optional(OAuth2In) }),
      smtp: strictObject({
        ...SmtpIn,
        username: Type.Optional(SmtpIn.username),
        password: Type.Optional(Password),
        oauth2: Type.Optional(OAuth2In),
      }),
      ...optional(settings),
    },
    {
      examples: [
        {
          address: 'help@msp.example',
          imap: {
            host: 'imap.msp.example',
            port: 993,
            tls: 'implicit',
            username: 'help@msp.example',
            password: 'app-password',
          },
          smtp: {
            host: 'smtp.msp.example',
            port: 465,
            tls: 'implicit',
            username: 'help@msp.example',
            password: 'app-password',
          },
          unknown_sender: 'quarantine',
        },
        {
          address: 'help@msp.example',
          imap: {
            host: 'outlook.office365.com',
            port: 993,
            tls: 'implicit',
            username: 'help@msp.example',
            oauth2: {
              token_url: 'https://login.microsoftonline.com/contoso.example/oauth2/v2.0/token',
              client_id: 'desk-mail',
              client_secret: 'client-secret',
              scope: 'https://outlook.office365.com/.default',
            },
          },
          smtp: {
            host: 'smtp.office365.com',
            port: 587,
            tls: 'starttls',
            username: 'help@msp.example',
            oauth2: {
              token_url: 'https://login.microsoftonline.com/contoso.example/oauth2/v2.0/token',
              client_id: 'desk-mail',
              client_secret: 'client-secret',
              scope: 'https://outlook.office365.com/.default',
            },
          },
        },
      ],
    },
  ),
);
export type NewMailbox = Static<typeof NewMailboxSchema>;

export const MailboxChangesSchema = named(
  'MailboxChanges',
  strictObject(
    {
      address: Type.Optional(Type.String({ format: 'email', maxLength: EMAIL_MAX })),
      imap: Type.Optional(
        strictObject({ ...optional(ImapIn), oauth2: Type.Optional(OAuth2Changes) }, { minProperties: 1 }),
      ),
      smtp: Type.Optional(
        strictObject({ ...optional(SmtpIn), oauth2: Type.Optional(OAuth2Changes) }, { minProperties: 1 }),
      ),
      ...optional(settings),
    },
    {
      minProperties: 1,
      description:
        'A JSON merge patch (RFC 7396): `imap` and `smtp` merge into the stored ones; a field left out keeps its value.',
      examples: [{ imap: { password: 'new-app-password' } }, { enabled: false }],
    },
  ),
);
export type MailboxChanges = Static<typeof MailboxChangesSchema>;

export const MailboxListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);
export const MailboxPageSchema = pageSchema('MailboxPage', MailboxSchema);

export const MailboxHealthSchema = named(
  'MailboxHealth',
  Type.Object(
    {
      status: stringEnum(['ok', 'failing'] as const),
      last_poll_at: Nullable(DateTime()),
      last_success_at: Nullable(DateTime()),
      last_error: Nullable(Type.String()),
      messages_processed: Type.Integer({ minimum: 0 }),
      messages_quarantined: Type.Integer({ minimum: 0 }),
    },
    {
      additionalProperties: false,
      examples: [
        {
          status: 'ok',
          last_poll_at: '2026-11-02T10:01:00.000Z',
          last_success_at: '2026-11-02T10:01:00.000Z',
          last_error: null,
          messages_processed: 12,
          messages_quarantined: 1,
        },
      ],
    },
  ),
);
export type MailboxHealth = Static<typeof MailboxHealthSchema>;

export const INBOUND_STATUSES = ['received', 'processed', 'quarantined', 'ignored', 'failed'] as const;

export const InboundEmailSchema = named(
  'InboundEmail',
  Type.Object(
    {
      id: Uuid(),
      mailbox_id: Nullable(Uuid()),
      message_id: Type.String({ description: 'Without angle brackets.' }),
      from: Type.String(),
      to: Type.Array(Type.String()),
      subject: Type.String(),
      received_at: DateTime(),
      size_bytes: Type.Integer({ minimum: 0 }),
      status: stringEnum(INBOUND_STATUSES, {
        description:
          '`processed`; `quarantined` (unknown_sender); `ignored` (auto_reply, bounce, loop); ' +
          '`failed` (too_large, unparseable); `received` while it is being processed.',
      }),
      reason: Nullable(Type.String()),
      ticket_id: Nullable(Uuid()),
      comment_id: Nullable(Uuid()),
    },
    {
      additionalProperties: false,
      examples: [
        {
          id: '8e7d6c5b-4a3f-4e2d-9c1b-0a9f8e7d6c5b',
          mailbox_id: '6d5c4b3a-2f1e-4d0c-9b8a-7f6e5d4c3b2a',
          message_id: 'CAF=abc123@mail.contoso.example',
          from: 'anna.berger@contoso.example',
          to: ['help@msp.example'],
          subject: 'Printer jams',
          received_at: '2026-11-02T10:01:00.000Z',
          size_bytes: 2048,
          status: 'processed',
          reason: null,
          ticket_id: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70',
          comment_id: null,
        },
      ],
    },
  ),
);
export type InboundEmail = Static<typeof InboundEmailSchema>;

export const InboundListQuery = Type.Object(
  {
    ...pageQueryProperties,
    ...keysetQueryProperties,
    mailbox_id: Type.Optional(Uuid()),
    status: Type.Optional(stringEnum(INBOUND_STATUSES)),
    message_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 998, description: 'With or without angle brackets.' }),
    ),
  },
  { additionalProperties: false },
);
export type InboundFilters = Pick<Static<typeof InboundListQuery>, 'mailbox_id' | 'status' | 'message_id'>;
export const InboundPageSchema = pageSchema('InboundEmailPage', InboundEmailSchema);

export const InboundReplaySchema = named(
  'InboundReplay',
  strictObject(
    {
      action: stringEnum(['create_ticket', 'attach'] as const, {
        description:
          '`create_ticket`: a new e-mail ticket of the sender; `attach`: a public comment of the sender on `ticket_id`.',
      }),
      ticket_id: Type.Optional(
        Uuid({
          description:
            'With `attach` (required there): a ticket of the tenant. A closed one opens again, as a mail to it would.',
        }),
      ),
      client_id: Type.Optional(
        Uuid({
          description:
            "With `create_ticket`: the ticket's client; else the sender's contact's, its domain's, or the mailbox's `default_client_id`.",
        }),
      ),
    },
    {
      examples: [{ action: 'create_ticket' }, { action: 'attach', ticket_id: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70' }],
    },
  ),
);
export type InboundReplay = Static<typeof InboundReplaySchema>;

export const TicketEmailSchema = named(
  'TicketEmail',
  Type.Object(
    {
      id: Uuid(),
      direction: stringEnum(['inbound', 'outbound'] as const),
      message_id: Type.String({ description: 'Without angle brackets.' }),
      from: Type.String(),
      to: Type.Array(Type.String()),
      cc: Type.Array(Type.String()),
      subject: Type.String(),
      status: stringEnum(['received', 'queued', 'sent', 'failed', 'bounced'] as const, {
        description:
          'Inbound: `received`. Outbound: `queued` (retried while the SMTP server does not take it), ' +
          '`sent`, `failed` (given up), `bounced` (a delivery-status report came back).',
      }),
      error: Nullable(Type.String()),
      created_at: DateTime(),
    },
    {
      additionalProperties: false,
      examples: [
        {
          id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          direction: 'outbound',
          message_id: 'desk.4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f@msp.example',
          from: 'help@msp.example',
          to: ['anna.berger@contoso.example'],
          cc: [],
          subject: '[#42] Printer jams',
          status: 'sent',
          error: null,
          created_at: '2026-11-02T10:05:00.000Z',
        },
      ],
    },
  ),
);
export const TicketEmailListSchema = named(
  'TicketEmailList',
  Type.Object(
    { data: Type.Array(TicketEmailSchema) },
    { additionalProperties: false, examples: [{ data: [TicketEmailSchema.examples[0]] }] },
  ),
);
