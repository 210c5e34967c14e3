import { Type, type Static } from '@sinclair/typebox';
import {
  DateOnly,
  DateTime,
  Nullable,
  Uuid,
  named,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  stringEnum,
  strictObject,
  PaginationSchema,
} from '@msp/http';
import { CURRENCIES, HOURLY_RATE_MAX } from '../shared/currencies';
import { LONG_TEXT_MAX, Text, businessRuleProblem } from '../shared/http.schemas';

/** A day's entry: at least a minute, at most the whole day. */
export const MINUTES_MIN = 1;
export const MINUTES_MAX = 1440;

const Minutes = Type.Integer({
  minimum: MINUTES_MIN,
  maximum: MINUTES_MAX,
  description: `Minutes worked, ${MINUTES_MIN}–${MINUTES_MAX} (a whole day at most).`,
});
const WorkDate = DateOnly({ description: "The day worked, `YYYY-MM-DD`, in the tenant's calendar." });
const Billable = Type.Boolean({
  description: 'Whether the time is invoiced to the client (the time export counts only billable entries).',
});
const Note = Nullable(Text({ maxLength: LONG_TEXT_MAX, description: 'What was done; free text, or null.' }));
const HourlyRate = Nullable(
  Type.Integer({
    minimum: 0,
    maximum: HOURLY_RATE_MAX,
    description: `What an hour of this entry is billed at, in minor units (cents) of \`currency\` per hour, 0–${HOURLY_RATE_MAX}; null: no rate (no amount).`,
  }),
);
const RATE_RULE =
  "An entry is priced when it is recorded: without `hourly_rate` it takes its client's " +
  '`hourly_rate` and `currency` as they are then (null if the client has none); ' +
  "a number overrides the client's rate for this entry, null records it without one. It keeps its price " +
  "when the client's rate changes later or its ticket moves to another client; " +
  'a PATCH of `hourly_rate` prices it again (in its `currency`).';
const UserId = Uuid({
  description:
    'The technician who worked: an active user of the tenant (else 422). A user deactivated later keeps their entries.',
});

const EXAMPLE_ENTRY = {
  id: '3f9c2a71-6b0d-4e8f-a2c5-9d1e7b4f6a03',
  ticket_id: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70',
  client_id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  user_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01',
  minutes: 45,
  date: '2026-11-23',
  billable: true,
  note: 'Replaced the fuser unit, tested duplex printing.',
  hourly_rate: 9500,
  currency: 'EUR',
  amount: 7125,
  created_at: '2026-11-23T10:15:00.000Z',
  updated_at: '2026-11-23T10:15:00.000Z',
};

export const TimeEntrySchema = named(
  'TimeEntry',
  Type.Object(
    {
      id: Uuid(),
      ticket_id: Uuid({ description: 'The ticket the time was spent on.' }),
      client_id: Uuid({
        description: "The ticket's client (read-only): it follows the ticket when the ticket moves to another client.",
      }),
      user_id: Uuid({ description: 'The technician who worked.' }),
      minutes: Minutes,
      date: WorkDate,
      billable: Billable,
      note: Nullable(Type.String({ description: 'What was done, or null.' })),
      hourly_rate: HourlyRate,
      currency: stringEnum(CURRENCIES, {
        description: "ISO 4217 code of `hourly_rate` and `amount`: the client's when the entry was recorded.",
      }),
      amount: Nullable(
        Type.Integer({
          minimum: 0,
          description:
            'What the entry is worth, in minor units (cents) of `currency`: `minutes` × `hourly_rate` / 60, ' +
            'rounded half up to the minor unit (45 min at 9500 = 7125, 95.00 EUR an hour for 0.75 h = 71.25 ' +
            'EUR); ' +
            'null without a rate. Billable or not (the time export and `totals.amounts` tell them apart).',
        }),
      ),
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    { additionalProperties: false, description: RATE_RULE, examples: [EXAMPLE_ENTRY] },
  ),
);
export type TimeEntry = Static<typeof TimeEntrySchema>;

export const NewTimeEntrySchema = named(
  'NewTimeEntry',
  strictObject(
    {
      user_id: UserId,
      minutes: Minutes,
      date: Type.Optional(
        DateOnly({
          description:
            "The day worked, `YYYY-MM-DD`; default today in the tenant's calendar zone (`DEFAULT_TIME_ZONE`, Europe/Berlin unless configured).",
        }),
      ),
      billable: Type.Optional(
        Type.Boolean({ default: true, description: 'Whether the time is invoiced to the client; default true.' }),
      ),
      note: Type.Optional(Note),
      hourly_rate: Type.Optional(HourlyRate),
    },
    {
      description: RATE_RULE,
      examples: [
        {
          user_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01',
          minutes: 45,
          date: '2026-11-23',
          billable: true,
          note: 'Replaced the fuser unit, tested duplex printing.',
        },
        { user_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01', minutes: 15, hourly_rate: 12000 },
      ],
    },
  ),
);
export type NewTimeEntry = Static<typeof NewTimeEntrySchema>;

export const TimeEntryChangesSchema = named(
  'TimeEntryChanges',
  strictObject(
    {
      user_id: Type.Optional(UserId),
      minutes: Type.Optional(Minutes),
      date: Type.Optional(WorkDate),
      billable: Type.Optional(Billable),
      note: Type.Optional(Note),
      hourly_rate: Type.Optional(HourlyRate),
    },
    {
      minProperties: 1,
      description:
        'The fields to change; at least one. An entry stays on its ticket (`ticket_id` cannot change). ' +
        '`hourly_rate` prices it again, null takes its rate away; `currency` stays.',
      examples: [{ minutes: 60 }, { billable: false, note: 'Goodwill: the fault was ours.' }, { hourly_rate: 7500 }],
    },
  ),
);
export type TimeEntryChanges = Static<typeof TimeEntryChangesSchema>;

export const TicketTimeEntryListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);

export const TimeEntryFiltersSchema = Type.Object(
  {
    ...pageQueryProperties,
    ...keysetQueryProperties,
    from: Type.Optional(DateOnly({ description: 'Only entries dated on or after this day (`YYYY-MM-DD`).' })),
    to: Type.Optional(
      DateOnly({
        description: 'Only entries dated on or before this day (`YYYY-MM-DD`); not before `from` (else 400).',
      }),
    ),
    client_id: Type.Optional(Uuid({ description: 'Only entries on tickets of this client.' })),
    user_id: Type.Optional(Uuid({ description: 'Only entries of this technician.' })),
    billable: Type.Optional(Type.Boolean({ description: '`true`: only billable entries; `false`: only the others.' })),
  },
  { additionalProperties: false },
);
export type TimeEntryFilters = Omit<Static<typeof TimeEntryFiltersSchema>, 'page' | 'per_page' | 'after'>;

export const TimeTotalsSchema = named(
  'TimeTotals',
  Type.Object(
    {
      minutes: Type.Integer({
        minimum: 0,
        description: 'The minutes of every entry matching the filters, on all pages.',
      }),
      billable_minutes: Type.Integer({ minimum: 0, description: 'Of those, the minutes of the billable entries.' }),
      amounts: Type.Array(
        Type.Object(
          {
            currency: stringEnum(CURRENCIES, { description: 'ISO 4217 code.' }),
            amount: Type.Integer({
              minimum: 0,
              description:
                'The sum of the `amount`s of the entries matching the filters in this currency, in its minor units.',
            }),
            billable_amount: Type.Integer({ minimum: 0, description: "Of that, the billable entries' amounts." }),
          },
          { additionalProperties: false },
        ),
        {
          description:
            'The amounts of the entries with a rate, one element per currency (by code); entries without a rate ' +
            'count in the minutes only. Amounts of different currencies are never added together.',
        },
      ),
    },
    {
      additionalProperties: false,
      examples: [
        { minutes: 45, billable_minutes: 45, amounts: [{ currency: 'EUR', amount: 7125, billable_amount: 7125 }] },
      ],
    },
  ),
);
export type TimeTotals = Static<typeof TimeTotalsSchema>;

const pageExample = { data: [EXAMPLE_ENTRY], pagination: { page: 1, per_page: 25, total: 1, total_pages: 1 } };

export const TimeEntryPageSchema = pageSchema('TimeEntryPage', TimeEntrySchema);

export const TimeEntryReportSchema = named(
  'TimeEntryReport',
  Type.Object(
    { data: Type.Array(TimeEntrySchema), pagination: PaginationSchema, totals: TimeTotalsSchema },
    {
      additionalProperties: false,
      examples: [
        {
          ...pageExample,
          totals: {
            minutes: 45,
            billable_minutes: 45,
            amounts: [{ currency: 'EUR', amount: 7125, billable_amount: 7125 }],
          },
        },
      ],
    },
  ),
);

export const TIME_EXPORT_FORMATS = ['csv'] as const;

export const TimeExportQuery = strictObject({
  period: Type.String({
    format: 'year-month',
    description: 'The invoicing month, `YYYY-MM` (e.g. `2026-11`).',
    examples: ['2026-11'],
  }),
  format: Type.Optional(
    stringEnum(TIME_EXPORT_FORMATS, {
      default: 'csv',
      description: '`csv` (default, and for now the only one): RFC 4180 CSV in UTF-8.',
    }),
  ),
});
export type TimeExportQuery = Static<typeof TimeExportQuery>;

export const TimeEntryRuleProblem = businessRuleProblem(
  'TimeEntryRuleProblem',
  {},
  'RFC 9457 problem document: `user_id` names no active user of the tenant (`urn:msp:problem:unknown-reference`, the field in `errors`).',
  {
    type: 'urn:msp:problem:unknown-reference',
    title: 'Unprocessable Content',
    status: 422,
    detail: 'user_id does not name an active user of your tenant.',
    request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
    errors: [{ field: 'user_id', message: 'does not name an active user of your tenant' }],
  },
);

export const ExportBusyProblem = named(
  'TimeExportBusyProblem',
  Type.Object(
    {
      type: Type.String({
        description:
          '`urn:msp:problem:export-capacity-exhausted`, or `urn:msp:problem:shutting-down` when the service stops before the export began.',
      }),
      title: Type.String(),
      status: Type.Literal(503),
      detail: Type.String(),
      request_id: Type.String(),
    },
    {
      additionalProperties: true,
      description:
        'RFC 9457 problem document: no export now (every connection of the time export is busy, or ' +
        'the service is shutting down); retry after `Retry-After` seconds.',
      examples: [
        {
          type: 'urn:msp:problem:export-capacity-exhausted',
          title: 'Service Unavailable',
          status: 503,
          detail:
            'Every connection of the time export is busy (4 exports at once) and none came free within 5000 ms. Retry after the time given in Retry-After.',
          request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
        },
      ],
    },
  ),
);
