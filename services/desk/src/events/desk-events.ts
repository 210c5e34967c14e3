// The events desk emits: what its webhooks may subscribe to, and what its audit log holds. Each is
// recorded in the transaction of the change it describes (services call `tx.events.record`).
import type { EventType } from '@msp/events';
import { eventCatalogue } from '@msp/events';
import { ClientSchema } from '../clients/client.schemas';
import { CommentSchema } from '../comments/comment.schemas';
import { TicketSchema } from '../tickets/ticket.schemas';
import { TimeEntrySchema } from '../time-entries/time-entry.schemas';
import { UserSchema } from '../users/user.schemas';

const EVENTS = [
  { type: 'ticket.created', summary: 'A ticket was opened (it starts `open`).', object: TicketSchema },
  {
    type: 'ticket.updated',
    summary:
      'A ticket changed: `changes` has each field that differs, a status move as `changes.status = {from, to}` with the timestamps it set ' +
      '(`resolved_at`, `closed_at`). Deactivating a user records one for each ticket it unassigned (`changes.assignee_id`).',
    object: TicketSchema,
    changes: true,
  },
  { type: 'comment.created', summary: 'A comment was written on a ticket.', object: CommentSchema },
  { type: 'client.created', summary: 'A client was created.', object: ClientSchema },
  { type: 'client.updated', summary: 'A client changed; `changes` has the fields that differ.', object: ClientSchema, changes: true },
  { type: 'user.created', summary: 'A technician was created.', object: UserSchema },
  {
    type: 'user.deactivated',
    summary: 'A user was deactivated (`DELETE /users/{id}`); `changes` has `active` and `deactivated_at`. Their unassigned tickets follow as `ticket.updated`.',
    object: UserSchema,
    changes: true,
  },
  { type: 'time_entry.created', summary: 'Time was recorded on a ticket (`POST /tickets/{id}/time-entries`).', object: TimeEntrySchema },
  { type: 'time_entry.updated', summary: 'A time entry changed; `changes` has the fields that differ.', object: TimeEntrySchema, changes: true },
  { type: 'time_entry.deleted', summary: 'A time entry was deleted; `object` is the entry as it was.', object: TimeEntrySchema },
] as const satisfies readonly EventType[];

export const deskEvents = eventCatalogue(EVENTS);
