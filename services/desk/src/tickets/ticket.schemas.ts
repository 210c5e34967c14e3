import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, Uuid, named, pageQueryProperties, pageSchema, stringEnum, strictObject } from '@msp/http';
import { LONG_TEXT_MAX, Text, businessRuleProblem } from '../shared/http.schemas';
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
    },
    { additionalProperties: false },
  ),
);
export type Ticket = Static<typeof TicketSchema>;

export const NewTicketSchema = named(
  'NewTicket',
  strictObject({
    title: Title,
    description: Type.Optional(Text({ maxLength: LONG_TEXT_MAX, default: '' })),
    priority: Type.Optional(stringEnum(TICKET_PRIORITIES, { default: 'normal' })),
    category: Type.Optional(stringEnum(TICKET_CATEGORIES, { default: 'other' })),
    client_id: ClientId,
    assignee_id: Type.Optional(AssigneeId),
  }),
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
    },
    { minProperties: 1, description: 'The fields to change; at least one.' },
  ),
);
export type TicketChanges = Static<typeof TicketChangesSchema>;

export const TicketFiltersSchema = Type.Object(
  {
    ...pageQueryProperties,
    status: Type.Optional(TicketStatus),
    priority: Type.Optional(TicketPriority),
    category: Type.Optional(TicketCategory),
    client_id: Type.Optional(Uuid({ description: 'Only tickets of this client.' })),
    assignee_id: Type.Optional(Uuid({ description: 'Only tickets assigned to this user.' })),
  },
  { additionalProperties: false },
);
export type TicketFilters = Omit<Static<typeof TicketFiltersSchema>, 'page' | 'per_page'>;

export const TicketPageSchema = pageSchema('TicketPage', TicketSchema);

export const TicketRuleProblem = businessRuleProblem(
  'TicketRuleProblem',
  {
    current_status: Type.Optional(TicketStatus),
    allowed_transitions: Type.Optional(Type.Array(TicketStatus, { description: 'The states the ticket may move to from its current one.' })),
  },
  'RFC 9457 problem document. An illegal status move (`urn:msp:problem:illegal-transition`) or a change to a closed ticket ' +
    '(`urn:msp:problem:ticket-closed`) carries `current_status` and `allowed_transitions`; an unknown client or assignee ' +
    '(`urn:msp:problem:unknown-reference`) names the field in `errors`.',
);
