import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  Nullable,
  groupDigits,
  Uuid,
  UuidKeyed,
  named,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  stringEnum,
  strictObject,
} from '@msp/http';
import { EMAIL_MAX, LONG_TEXT_MAX, Text, businessRuleProblem } from '../shared/http.schemas';
import { AttachmentListProperty } from '../attachments/attachment.schemas';
import { TicketSlaSchema, slaListQueryProperties } from '../sla/sla.schemas';
import { TICKET_STATUSES } from './ticket-status';

export const TICKET_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const TICKET_CATEGORIES = ['network', 'hardware', 'software', 'account', 'email', 'security', 'other'] as const;

export const TicketStatus = named(
  'TicketStatus',
  stringEnum(TICKET_STATUSES, {
    description:
      'open → in_progress | pending | resolved | closed; in_progress → open | pending | resolved; pending → open | in_progress | resolved; ' +
      'resolved → open | closed; closed is final.',
  }),
);
export const TicketPriority = named('TicketPriority', stringEnum(TICKET_PRIORITIES));
export const TicketCategory = named('TicketCategory', stringEnum(TICKET_CATEGORIES));

const Title = Text({ minLength: 1, maxLength: 200 });
const Description = Text({ maxLength: LONG_TEXT_MAX });
const ClientId = Uuid({ description: 'A client of the tenant.' });
export const TICKET_SOURCES = ['api', 'email'] as const;
export const TicketSource = stringEnum(TICKET_SOURCES, { description: '`email` when a mail opened it, else `api`.' });
const CcList = Type.Array(Type.String({ format: 'email', maxLength: EMAIL_MAX }), {
  maxItems: 20,
  description: 'Addresses mailed with every public reply on the ticket besides the requester, lower-cased, at most 20.',
});
export const RequesterSchema = named(
  'TicketRequester',
  Type.Object(
    { id: Uuid(), name: Type.String(), email: Type.String() },
    { additionalProperties: false, description: 'The contact who asked.' },
  ),
);
const AssigneeId = Nullable(Uuid({ description: 'An active user of the tenant; null unassigns.' }));

export const TicketSchema = named(
  'Ticket',
  Type.Object(
    {
      id: Uuid(),
      number: Type.Integer({ minimum: 1, description: 'Per tenant, increasing: 1, 2, 3, …' }),
      title: Type.String(),
      description: Type.String(),
      priority: TicketPriority,
      category: TicketCategory,
      status: TicketStatus,
      client_id: Uuid(),
      assignee_id: Nullable(Uuid()),
      created_at: DateTime(),
      updated_at: DateTime(),
      resolved_at: Nullable(DateTime({ description: 'When it entered `resolved`; cleared when reopened.' })),
      closed_at: Nullable(DateTime({ description: 'When it was closed.' })),
      merged_into_id: Nullable(
        Uuid({
          description:
            'The ticket this one was merged into (`POST /tickets/{id}/merge`); it was closed then. Null if never merged.',
        }),
      ),
      merged_ids: Type.Array(Uuid(), {
        description: 'The tickets merged into this one, in the order they were merged; empty if none.',
      }),
      requester: Nullable(RequesterSchema),
      cc: Type.Array(Type.String(), { description: 'Addresses mailed with every public reply besides the requester.' }),
      cc_suggested: Type.Array(Type.String(), {
        description:
          'Addresses that were CC of the mail that opened the ticket: never mailed until a technician adds them to `cc`.',
      }),
      source: TicketSource,
      mailbox_id: Nullable(
        Uuid({ description: 'The mailbox the ticket came in through; null unless `source` is `email`.' }),
      ),
      follow_up_of: Nullable(
        Uuid({ description: 'The closed ticket a mail to it opened this one in place of; else null.' }),
      ),
      attachments: AttachmentListProperty,
      sla: Nullable(TicketSlaSchema),
    },
    {
      additionalProperties: false,
      examples: [
        {
          id: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70',
          number: 42,
          title: 'Printer on the 2nd floor jams',
          description: 'The HP LaserJet in room 2.14 jams on every duplex print since Monday.',
          priority: 'high',
          category: 'hardware',
          status: 'in_progress',
          client_id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          assignee_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01',
          created_at: '2026-11-23T08:15:00.000Z',
          updated_at: '2026-11-23T09:02:11.000Z',
          resolved_at: null,
          closed_at: null,
          merged_into_id: null,
          merged_ids: ['3f6c2a1e-9b8d-4c7e-a5f4-1d2e3c4b5a69'],
          requester: {
            id: '2b7e4c1d-9a3f-4e5b-8c6d-1f0e2a3b4c5d',
            name: 'Anna Berger',
            email: 'anna.berger@contoso.example',
          },
          cc: [],
          cc_suggested: ['it@contoso.example'],
          source: 'email',
          mailbox_id: '6d5c4b3a-2f1e-4d0c-9b8a-7f6e5d4c3b2a',
          follow_up_of: null,
          attachments: [
            {
              id: '4c3b2a19-0f8e-4d7c-9b6a-5f4e3d2c1b0a',
              filename: 'error.png',
              content_type: 'image/png',
              size_bytes: 48213,
            },
          ],
          sla: {
            policy_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
            first_response: {
              due_at: '2026-11-23T09:15:00.000Z',
              completed_at: '2026-11-23T09:02:11.000Z',
              status: 'met',
            },
            resolution: { due_at: '2026-11-23T16:15:00.000Z', completed_at: null, status: 'running' },
          },
        },
      ],
    },
  ),
);
export type Ticket = Static<typeof TicketSchema>;

export const NewTicketSchema = named(
  'NewTicket',
  strictObject(
    {
      title: Title,
      description: Type.Optional(Text({ maxLength: LONG_TEXT_MAX, default: '' })),
      priority: Type.Optional(stringEnum(TICKET_PRIORITIES, { default: 'normal' })),
      category: Type.Optional(stringEnum(TICKET_CATEGORIES, { default: 'other' })),
      client_id: Type.Optional(ClientId),
      assignee_id: Type.Optional(AssigneeId),
      requester_id: Type.Optional(Uuid({ description: 'The contact who asked (a contact of the tenant, else 422).' })),
      requester_email: Type.Optional(
        Type.String({
          format: 'email',
          maxLength: EMAIL_MAX,
          description:
            "The address of who asked, instead of `requester_id`: its contact, else a new contact under the ticket's client (created with the ticket).",
        }),
      ),
      cc: Type.Optional(CcList),
    },
    {
      description:
        "`client_id` may be left out when the requester's contact has a client (the ticket takes it); `requester_id` and `requester_email` exclude each other.",
      examples: [
        {
          title: 'Printer on the 2nd floor jams',
          description: 'The HP LaserJet in room 2.14 jams on every duplex print since Monday.',
          priority: 'high',
          category: 'hardware',
          client_id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          assignee_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01',
        },
      ],
    },
  ),
);
export type NewTicket = Static<typeof NewTicketSchema>;

export const TicketChangesSchema = named(
  'TicketChanges',
  strictObject(
    {
      title: Type.Optional(Title),
      description: Type.Optional(Description),
      priority: Type.Optional(TicketPriority),
      category: Type.Optional(TicketCategory),
      status: Type.Optional(TicketStatus),
      client_id: Type.Optional(ClientId),
      assignee_id: Type.Optional(AssigneeId),
      requester_id: Type.Optional(
        Nullable(Uuid({ description: 'The contact who asked (a contact of the tenant, else 422); null: none.' })),
      ),
      cc: Type.Optional(CcList),
    },
    {
      minProperties: 1,
      description: 'The fields to change; at least one.',
      examples: [{ status: 'resolved' }, { priority: 'urgent', assignee_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01' }],
    },
  ),
);
export type TicketChanges = Static<typeof TicketChangesSchema>;

/**
 * How many of the newest matching tickets a search (`q`) ranks and counts: past it, `total` is this
 * and `pagination.total_exact` false (tickets.repository's searchPage says why).
 */
export const SEARCH_WINDOW = 1_000;
/** SEARCH_WINDOW as the docs write it. */
export const SEARCH_WINDOW_TEXT = groupDigits(SEARCH_WINDOW);

export const TicketFiltersSchema = Type.Object(
  {
    ...pageQueryProperties,
    ...keysetQueryProperties,
    status: Type.Optional(TicketStatus),
    priority: Type.Optional(TicketPriority),
    category: Type.Optional(TicketCategory),
    client_id: Type.Optional(Uuid({ description: 'Only tickets of this client.' })),
    assignee_id: Type.Optional(Uuid({ description: 'Only tickets assigned to this user.' })),
    requester_id: Type.Optional(Uuid({ description: 'Only tickets this contact requested.' })),
    source: Type.Optional(TicketSource),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Full-text search in the title, the description and the comments (internal ones too; of a thread ' +
          'longer than 100,000 characters, its newest comments up to that), German and English: every word must ' +
          'occur ' +
          '(in any inflection, umlauts as typed), the last one also as a prefix (`netw` finds `network`). Combines with the other filters; ' +
          'ordered by relevance (title over description over comments, then newest first) unless `sort` is given. ' +
          `A search looks at the ${SEARCH_WINDOW_TEXT} newest tickets that match it and the other filters: it ranks (or sorts) those, ` +
          `\`pagination.total\` counts them, and \`pagination.total_exact\` is false when more tickets match (add words or filters to reach older ones); ` +
          `then a page past them (page × per_page over ${SEARCH_WINDOW_TEXT}) is a 400. ` +
          'A `q` of only stop words or punctuation is a 400.',
        examples: ['Drucker Störung'],
      }),
    ),
    ...slaListQueryProperties,
  },
  { additionalProperties: false },
);
/** The list's filters on the ticket's own columns; `q`, and `sla_status`, `at_risk_minutes` and `sort`, the SLA module's (SlaListing), are apart. */
export type TicketFilters = Omit<
  Static<typeof TicketFiltersSchema>,
  'page' | 'per_page' | 'after' | 'q' | keyof typeof slaListQueryProperties
>;
/**
 * A search: the tsquery (as text) made of the words of `q`, its rarer words' where they are rare,
 * and whether the tenant is small enough to read all its tickets (tickets.repository's searchQuery).
 */
export interface TicketSearch {
  query?: string;
  narrow?: string | null;
  walk?: boolean;
}

export const TicketPageSchema = pageSchema('TicketPage', TicketSchema);

const ILLEGAL_MOVE_EXAMPLE = {
  type: 'urn:msp:problem:illegal-transition',
  title: 'Unprocessable Content',
  status: 422,
  detail: 'A ticket cannot move from resolved to in_progress; allowed: open, closed.',
  request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
  current_status: 'resolved',
  allowed_transitions: ['open', 'closed'],
};

export const TicketRuleProblem = businessRuleProblem(
  'TicketRuleProblem',
  {
    current_status: Type.Optional(TicketStatus),
    allowed_transitions: Type.Optional(
      Type.Array(TicketStatus, { description: 'The states the ticket may move to from its current one.' }),
    ),
  },
  'RFC 9457 problem document. An illegal status move (`urn:msp:problem:illegal-transition`) or a change to a closed ticket ' +
    '(`urn:msp:problem:ticket-closed`) carries `current_status` and `allowed_transitions`; an unknown client or assignee ' +
    '(`urn:msp:problem:unknown-reference`) names the field in `errors`.',
  ILLEGAL_MOVE_EXAMPLE,
);

/** 1 to `max` ticket ids, none twice (a repeated id is a 400). */
const ticketIds = (max: number, description: string) =>
  Type.Array(Uuid(), { minItems: 1, maxItems: max, uniqueItems: true, description });

export const BulkChangesSchema = named(
  'BulkTicketChanges',
  strictObject(
    {
      ids: ticketIds(100, 'The tickets to change, 1–100, each once; the results come in this order.'),
      changes: strictObject(
        {
          status: Type.Optional(TicketStatus),
          priority: Type.Optional(TicketPriority),
          assignee_id: Type.Optional(AssigneeId),
          category: Type.Optional(TicketCategory),
        },
        {
          minProperties: 1,
          description: 'The fields to change on every ticket, by the rules of `PATCH /tickets/{id}`; at least one.',
        },
      ),
      if_match: Type.Optional(
        UuidKeyed(Type.String({ minLength: 1 }), {
          description:
            'Optional: for some of the `ids`, the ETag (as `GET /tickets/{id}` sends it) the ticket must still have, as `If-Match` on its PATCH; ' +
            'a ticket that changed since answers 412 in its result and is not changed. `*` matches ' +
            'any ticket. Keys are ids in either letter case, as `ids` are; ' +
            'a key not in `ids`, or one id given twice in different cases, is a 400.',
        }),
      ),
    },
    {
      examples: [
        {
          ids: ['7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70', '3f6c2a1e-9b8d-4c7e-a5f4-1d2e3c4b5a69'],
          changes: { status: 'in_progress', assignee_id: '0b6f1c52-8c4e-4d3a-9f8e-2a1d5c7b9e01' },
          if_match: { '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70': '"2f-x8Lk0aVbq1qXqzWb7tMoL4yYIdNg"' },
        },
      ],
    },
  ),
);
export type BulkChanges = Static<typeof BulkChangesSchema>;

const BulkProblem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    request_id: Type.String(),
  },
  {
    additionalProperties: true,
    description:
      'The RFC 9457 problem document its PATCH would have answered (a 422 with `current_status` and `allowed_transitions`, …).',
  },
);

export const BulkResultsSchema = named(
  'BulkTicketResults',
  Type.Object(
    {
      results: Type.Array(
        Type.Union([
          Type.Object(
            { id: Uuid(), status: Type.Literal(200), ticket: TicketSchema },
            { additionalProperties: false, description: 'Changed (or already as asked).' },
          ),
          Type.Object(
            {
              id: Uuid(),
              status: Type.Union([Type.Literal(404), Type.Literal(412), Type.Literal(422)]),
              problem: BulkProblem,
            },
            {
              additionalProperties: false,
              description:
                'Not changed: 404 no such ticket in your tenant, 412 `if_match` no longer current, 422 the ' +
                'change breaks a rule (an illegal status move, a closed ticket, an unknown assignee).',
            },
          ),
        ]),
        { description: 'One result per id, in the order of `ids`.' },
      ),
    },
    {
      additionalProperties: false,
      examples: [
        {
          results: [
            { id: '7d0f3a52-1c4b-4e8a-9b6d-2f5e8c1a3b70', status: 200, ticket: TicketSchema.examples[0] },
            {
              id: '3f6c2a1e-9b8d-4c7e-a5f4-1d2e3c4b5a69',
              status: 422,
              problem: ILLEGAL_MOVE_EXAMPLE,
            },
          ],
        },
      ],
    },
  ),
);

export const MergeRequestSchema = named(
  'TicketMerge',
  strictObject(
    {
      source_ids: ticketIds(
        50,
        'The tickets to merge into this one, 1–50, each once: none closed by a merge before, not the target itself.',
      ),
    },
    { examples: [{ source_ids: ['3f6c2a1e-9b8d-4c7e-a5f4-1d2e3c4b5a69'] }] },
  ),
);
export type MergeRequest = Static<typeof MergeRequestSchema>;
