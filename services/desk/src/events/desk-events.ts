// The events desk emits: what its webhooks may subscribe to, and what its audit log holds. Each is
// recorded in the transaction of the change it describes (services call `tx.events.record`).
import { Type } from '@sinclair/typebox';
import type { EventType } from '@msp/events';
import { eventCatalogue } from '@msp/events';
import { CalendarSchema } from '../calendars/calendar.schemas';
import { ClientSchema } from '../clients/client.schemas';
import { ContactSchema } from '../contacts/contact.schemas';
import { InboundEmailSchema, MailboxHealthSchema, TicketEmailSchema } from '../mailboxes/mailbox.schemas';
import { CommentSchema } from '../comments/comment.schemas';
import { SlaPolicySchema } from '../sla-policies/sla-policy.schemas';
import { SLA_TARGETS } from '../sla/sla.schemas';
import { TicketSchema } from '../tickets/ticket.schemas';
import { TimeEntrySchema } from '../time-entries/time-entry.schemas';
import { UserSchema } from '../users/user.schemas';

const EVENTS = [
  { type: 'ticket.created', summary: 'A ticket was opened (it starts `open`).', object: TicketSchema },
  {
    type: 'ticket.updated',
    summary:
      'A ticket changed: `changes` has each field that differs, a status move as `changes.status = {from, to}` with the timestamps it set ' +
      '(`resolved_at`, `closed_at`), and `changes.sla` when a status move or a new priority moved the SLA clocks. ' +
      'Deactivating a user records one for each ticket it unassigned (`changes.assignee_id`).',
    object: TicketSchema,
    changes: true,
  },
  {
    type: 'ticket.sla_breached',
    summary:
      'An SLA target of the ticket passed its due time before it was met: noticed within a minute (SLA_SWEEP_INTERVAL_MS), once per target and ticket, ' +
      'also across restarts and replicas. `target` names it; `object` is the ticket, `object.sla` its clocks.',
    object: TicketSchema,
    extra: {
      target: Type.Union(
        SLA_TARGETS.map((target) => Type.Literal(target)),
        { description: '`first_response` or `resolution`.', examples: ['resolution'] },
      ),
    },
  },
  {
    type: 'ticket.merged',
    summary:
      'Tickets were merged into this one (`POST /tickets/{id}/merge`): `object` is the target as answered, `source_ids` the merged tickets. ' +
      'Each source closed by the merge records its own `ticket.updated` (`changes.status`, `changes.merged_into_id`) before it, ' +
      "and the merge's internal note a `comment.created`.",
    object: TicketSchema,
    extra: {
      source_ids: Type.Array(Type.String({ format: 'uuid' }), {
        description: 'The tickets merged into the target, in the order given.',
        examples: [['3f6c2a1e-9b8d-4c7e-a5f4-1d2e3c4b5a69']],
      }),
    },
  },
  { type: 'comment.created', summary: 'A comment was written on a ticket.', object: CommentSchema },
  { type: 'client.created', summary: 'A client was created.', object: ClientSchema },
  {
    type: 'client.updated',
    summary: 'A client changed; `changes` has the fields that differ.',
    object: ClientSchema,
    changes: true,
  },
  {
    type: 'contact.created',
    summary:
      'A contact was created (`POST /contacts`, a ticket naming a new `requester_email`, or a mail from a new sender).',
    object: ContactSchema,
  },
  {
    type: 'contact.updated',
    summary: 'A contact changed; `changes` has the fields that differ (`email_status` when a mail to it bounced).',
    object: ContactSchema,
    changes: true,
  },
  {
    type: 'contact.deleted',
    summary: 'A contact was deleted; `object` is the contact as it was.',
    object: ContactSchema,
  },
  {
    type: 'email.received',
    summary:
      'A mail was read from a mailbox and processed, ignored or failed; `object` is its inbound log entry (`status`, `reason`, `ticket_id`, `comment_id`).',
    object: InboundEmailSchema,
  },
  {
    type: 'email.quarantined',
    summary:
      'A mail from an unknown sender was quarantined (`unknown_sender: quarantine`); replay it with `POST /inbound-emails/{id}/replay`.',
    object: InboundEmailSchema,
  },
  {
    type: 'email.sent',
    summary: "A technician's reply was taken by the SMTP server; `object` is the ticket's e-mail.",
    object: TicketEmailSchema,
  },
  {
    type: 'email.failed',
    summary: "A reply could not be sent after its retries; `object` is the ticket's e-mail with `error`.",
    object: TicketEmailSchema,
  },
  {
    type: 'email.bounced',
    summary:
      "A reply came back undeliverable (a delivery-status report); its contact's `email_status` is now `bounced`.",
    object: TicketEmailSchema,
  },
  {
    type: 'mailbox.failing',
    summary: "A mailbox's poll failed after succeeding (the server down, a login refused); `object` is its health.",
    object: MailboxHealthSchema,
  },
  {
    type: 'mailbox.recovered',
    summary: "A failing mailbox's poll succeeded again; `object` is its health.",
    object: MailboxHealthSchema,
  },
  { type: 'user.created', summary: 'A technician was created.', object: UserSchema },
  {
    type: 'user.updated',
    summary:
      'A user changed (`PATCH /users/{id}`); `changes` has the fields that differ. A deactivation by PATCH ' +
      '(`changes.active`) unassigns their open tickets, which follow as `ticket.updated`; ' +
      '`DELETE /users/{id}` records `user.deactivated` instead.',
    object: UserSchema,
    changes: true,
  },
  {
    type: 'user.deactivated',
    summary:
      'A user was deactivated (`DELETE /users/{id}`); `changes` has `active` and `deactivated_at`. Their unassigned tickets follow as `ticket.updated`.',
    object: UserSchema,
    changes: true,
  },
  {
    type: 'time_entry.created',
    summary: 'Time was recorded on a ticket (`POST /tickets/{id}/time-entries`).',
    object: TimeEntrySchema,
  },
  {
    type: 'time_entry.updated',
    summary: 'A time entry changed; `changes` has the fields that differ.',
    object: TimeEntrySchema,
    changes: true,
  },
  {
    type: 'time_entry.deleted',
    summary: 'A time entry was deleted; `object` is the entry as it was.',
    object: TimeEntrySchema,
  },
  { type: 'calendar.created', summary: 'A business-hours calendar was created.', object: CalendarSchema },
  {
    type: 'calendar.updated',
    summary: 'A calendar changed; `changes` has the fields that differ.',
    object: CalendarSchema,
    changes: true,
  },
  {
    type: 'calendar.deleted',
    summary: 'A calendar was deleted; `object` is the calendar as it was.',
    object: CalendarSchema,
  },
  { type: 'sla_policy.created', summary: 'An SLA policy was created.', object: SlaPolicySchema },
  {
    type: 'sla_policy.updated',
    summary:
      'An SLA policy changed; `changes` has the fields that differ. A new default unsets the previous one, which records its own (`changes.is_default`).',
    object: SlaPolicySchema,
    changes: true,
  },
  {
    type: 'sla_policy.deleted',
    summary: 'An SLA policy was deleted; `object` is the policy as it was.',
    object: SlaPolicySchema,
  },
] as const satisfies readonly EventType[];

export const deskEvents = eventCatalogue(EVENTS);
