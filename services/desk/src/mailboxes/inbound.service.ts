import { createHash, randomUUID } from 'node:crypto';
import { conflict, notFound, unprocessable, validationFailed, type Logger } from '@msp/http';
import { refsOf, type NewAttachment } from '../attachments/attachments.repository';
import { createContactIn } from '../contacts/contacts.service';
import type { Contact } from '../contacts/contact.schemas';
import { deskEvents } from '../events/desk-events';
import type { SlaService } from '../sla/sla.service';
import type { Repositories, Store } from '../store';
import type { Ticket } from '../tickets/ticket.schemas';
import { timestampsFor } from '../tickets/ticket-status';
import { openTicketIn } from '../tickets/tickets.service';
import {
  automaticReason,
  bareMessageId,
  parseMail,
  stripReply,
  subjectTicketNumber,
  type ParsedMail,
} from './mail-message';
import type { FetchedMessage } from './mail-reader';
import { queueAcknowledgementIn, toTicketEmail } from './outbound';
import type { InboundEmail, InboundReplay } from './mailbox.schemas';
import type { MailboxRecord } from './mailboxes.repository';

const DAY_MS = 86_400_000;
const UNPARSEABLE: InboundOutcome = { status: 'failed', reason: 'unparseable', ticketId: null, commentId: null };

/** What processing one stored message came to. */
export interface InboundOutcome {
  status: 'processed' | 'quarantined' | 'ignored' | 'failed';
  reason: string | null;
  ticketId: string | null;
  commentId: string | null;
}

/** The Message-ID of a raw message's header, else one made of its bytes (the same message, the same id). */
function messageIdOf(fetched: FetchedMessage): string {
  if (fetched.messageId) return bareMessageId(fetched.messageId);
  const header = fetched.raw
    ? fetched.raw.subarray(
        0,
        fetched.raw.indexOf('\r\n\r\n') >= 0 ? fetched.raw.indexOf('\r\n\r\n') : fetched.raw.length,
      )
    : null;
  const found = header ? /^message-id:\s*(<[^>]+>)/im.exec(header.toString('latin1')) : null;
  if (found) return bareMessageId(found[1]!);
  return `${createHash('sha256')
    .update(fetched.raw ?? `${fetched.from}|${fetched.subject}|${fetched.size}`)
    .digest('hex')}@desk.invalid`;
}

/** desk's own Message-IDs (outbound.ts): `desk.<uuid>@<the mailbox's domain>`. */
const OWN_MESSAGE_ID = /^desk\.[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}@(.+)$/i;

/** The files of a mail as they are to be kept, each with its id chosen now. */
const filesOf = (mail: ParsedMail): NewAttachment[] => mail.attachments.map((file) => ({ id: randomUUID(), ...file }));

/** A message replayed whose bytes were not kept (too large) or cannot be parsed: what its log entry knows. */
function mailOfEntry(entry: InboundEmail, raw: Buffer | null): ParsedMail {
  const text = raw
    ? raw.toString('utf8').replaceAll('\u0000', '').slice(0, 10_000)
    : "(The message was not stored: it was larger than its mailbox's max_message_bytes. It is on the mail server.)";
  return {
    messageId: entry.message_id,
    from: entry.from.includes('@') ? entry.from.toLowerCase() : '',
    fromName: entry.from.split('@')[0] ?? '',
    to: entry.to,
    cc: [],
    subject: entry.subject,
    inReplyTo: [],
    references: [],
    text,
    headers: new Map(),
    isReport: false,
    attachments: [],
  };
}

/**
 * Inbound mail: a message is stored raw first (its own commit; a Message-ID the tenant has is
 * skipped: one message, one ticket, whatever polls or mailboxes saw it), then processed in one
 * transaction of its own. A message that fails is logged `failed` and the poll goes on.
 */
export function createInboundService(store: Store, sla: SlaService, logger: Logger) {
  /** The ticket the mail continues: by In-Reply-To/References, else `[#n]` when the sender belongs to it. */
  async function threadOf(
    tx: Repositories,
    tenantId: string,
    mail: ParsedMail,
    sender: Contact | null,
  ): Promise<Ticket | null> {
    const byHeader = await tx.mailboxes.ticketOfMessageIds(tenantId, [...mail.inReplyTo, ...mail.references]);
    if (byHeader) return tx.tickets.findForUpdate(tenantId, byHeader);
    const number = subjectTicketNumber(mail.subject);
    if (number === null) return null;
    const id = await tx.tickets.findIdByNumber(tenantId, number);
    const ticket = id ? await tx.tickets.findForUpdate(tenantId, id) : null;
    if (!ticket) return null;
    // A number from another customer's mail must not thread into that customer's ticket.
    const belongs =
      ticket.requester?.email === mail.from ||
      ticket.cc.includes(mail.from) ||
      (sender !== null && sender.client_id !== null && sender.client_id === ticket.client_id);
    return belongs ? ticket : null;
  }

  /** A delivery-status report of desk's mail: that mail `bounced`, its recipients' contacts `bounced`. */
  async function bounce(tx: Repositories, tenantId: string, mail: ParsedMail, raw: Buffer) {
    // The report names the original in its headers, or quotes them (Message-ID of the returned mail).
    const quoted = (raw.toString('latin1').match(/^message-id:\s*<[^>]+>/gim) ?? []).map((line) =>
      bareMessageId(line.replace(/^message-id:\s*/i, '')),
    );
    const bounced = await tx.mailboxes.bounceOutbound(tenantId, [
      ...new Set([...mail.inReplyTo, ...mail.references, ...quoted]),
    ]);
    for (const row of bounced) {
      await tx.events.record({
        type: 'email.bounced',
        tenantId,
        resourceType: 'outbound_email',
        resourceId: row.id,
        object: toTicketEmail(row),
      });
      for (const address of row.to) {
        const before = await tx.contacts.findByEmail(tenantId, address);
        const after = await tx.contacts.markBounced(tenantId, address);
        if (before && after)
          await tx.events.record({
            type: 'contact.updated',
            tenantId,
            resourceType: 'contact',
            resourceId: after.id,
            object: after,
            before,
          });
      }
    }
  }

  async function changeStatus(tx: Repositories, tenantId: string, ticket: Ticket, status: 'open'): Promise<Ticket> {
    const now = new Date();
    const written = await tx.tickets.update(
      tenantId,
      ticket.id,
      { status, ...timestampsFor(ticket.status, status, now), closedAt: null },
      now,
    );
    const updated = await sla.onTicketChanged(tx, tenantId, ticket, { ...written, sla: ticket.sla }, now);
    await tx.events.record({
      type: 'ticket.updated',
      tenantId,
      resourceType: 'ticket',
      resourceId: ticket.id,
      object: updated,
      before: ticket,
    });
    return updated;
  }

  async function process(
    tx: Repositories,
    mailbox: MailboxRecord,
    entry: InboundEmail,
    mail: ParsedMail,
    raw: Buffer,
  ): Promise<InboundOutcome> {
    const tenantId = mailbox.tenantId;
    if (mail.from === mailbox.address.toLowerCase() || (await isOwnMessage(tx, mailbox, entry.message_id)))
      return { status: 'ignored', reason: 'loop', ticketId: null, commentId: null };
    const sender = await tx.contacts.findByEmail(tenantId, mail.from);
    const automatic = automaticReason(mail);
    let ticket = await threadOf(tx, tenantId, mail, sender);
    if (automatic === 'bounce') await bounce(tx, tenantId, mail, raw);
    // Automatic mail never reopens, opens or comments: it is logged on the ticket it threads to.
    if (automatic) return { status: 'ignored', reason: automatic, ticketId: ticket?.id ?? null, commentId: null };

    let followUpOf: string | null = null;
    if (ticket && ticket.status === 'closed') {
      const closedAt = ticket.closed_at ? Date.parse(ticket.closed_at) : 0;
      if (
        mailbox.closed_ticket_policy === 'reopen' &&
        Date.now() - closedAt <= mailbox.reopen_within_days * DAY_MS &&
        ticket.merged_into_id === null
      ) {
        ticket = await changeStatus(tx, tenantId, ticket, 'open');
      } else {
        followUpOf = ticket.id;
        ticket = null;
      }
    }
    if (ticket) return commentFromMail(tx, tenantId, ticket, entry, mail, sender);

    // A new ticket: the sender's contact's client, else the client owning the sender's domain,
    // else the mailbox's default client when unknown senders become contacts; else quarantined.
    let clientId = sender?.client_id ?? null;
    if (!clientId) clientId = (await tx.clients.findByEmailDomain(tenantId, mail.from.split('@')[1]!))?.id ?? null;
    if (!clientId && mailbox.unknown_sender === 'create_contact') clientId = mailbox.default_client_id;
    if (!clientId) return { status: 'quarantined', reason: 'unknown_sender', ticketId: null, commentId: null };
    return ticketFromMail(tx, mailbox, tenantId, entry, mail, { sender, clientId, followUpOf });
  }

  /** A public comment of the sender on `ticket`, with the mail's files; a requester's answer opens a pending ticket. */
  async function commentFromMail(
    tx: Repositories,
    tenantId: string,
    ticket: Ticket,
    entry: InboundEmail,
    mail: ParsedMail,
    sender: Contact | null,
  ): Promise<InboundOutcome> {
    const body = stripReply(mail.text) || mail.text || '(no text)';
    const files = filesOf(mail);
    const comment = await tx.comments.createRecorded(
      tenantId,
      {
        ticketId: ticket.id,
        body: body.slice(0, 100_000),
        internal: false,
        author: mail.from || 'unknown',
        authorType: 'contact',
        authorContactId: sender?.id ?? null,
        attachments: refsOf(files),
      },
      deskEvents.head({ type: 'comment.created', resourceType: 'comment' }),
    );
    await tx.attachments.saveAll(
      tenantId,
      { inboundEmailId: entry.id, ticketId: ticket.id, commentId: comment.id },
      files,
    );
    // The requester answered what the technician asked: the ticket is being worked on again.
    if (ticket.status === 'pending' && mail.from && ticket.requester?.email === mail.from)
      await changeStatus(tx, tenantId, ticket, 'open');
    return { status: 'processed', reason: null, ticketId: ticket.id, commentId: comment.id };
  }

  /**
   * A new e-mail ticket of `clientId`: the sender its requester (a contact made under the client when
   * unknown), the mail's files listed on it, and an acknowledgement queued when the mailbox sends them.
   */
  async function ticketFromMail(
    tx: Repositories,
    mailbox: MailboxRecord | null,
    tenantId: string,
    entry: InboundEmail,
    mail: ParsedMail,
    { sender, clientId, followUpOf }: { sender: Contact | null; clientId: string; followUpOf: string | null },
  ): Promise<InboundOutcome> {
    if (!sender && mail.from)
      sender = await createContactIn(tx, tenantId, {
        name: (mail.fromName || mail.from.split('@')[0]!).slice(0, 200),
        email: mail.from,
        client_id: clientId,
      });
    const own = mailbox?.address.toLowerCase();
    const files = filesOf(mail);
    const body = stripReply(mail.text) || mail.text || '(no text)';
    const opened = await openTicketIn(tx, sla, tenantId, {
      title: (mail.subject || '(no subject)').slice(0, 200),
      description: body.slice(0, 10_000),
      clientId,
      requesterId: sender?.id ?? null,
      source: 'email',
      mailboxId: mailbox?.id ?? null,
      ccSuggested: [...new Set([...mail.cc, ...mail.to].filter((address) => address !== own && address !== mail.from))],
      followUpOf,
      attachments: refsOf(files),
    });
    if (!opened) return UNPARSEABLE;
    await tx.attachments.saveAll(tenantId, { inboundEmailId: entry.id, ticketId: opened.id, commentId: null }, files);
    if (mailbox?.auto_acknowledge && sender)
      await queueAcknowledgementIn(tx, tenantId, mailbox, opened, sender, entry.message_id);
    return { status: 'processed', reason: null, ticketId: opened.id, commentId: null };
  }

  /** desk's own mail come back: a Message-ID of desk's form on the mailbox's domain, or one desk sent. */
  async function isOwnMessage(tx: Repositories, mailbox: MailboxRecord, messageId: string): Promise<boolean> {
    const own = OWN_MESSAGE_ID.exec(messageId);
    if (!own) return false;
    if (own[1]!.toLowerCase() === mailbox.address.split('@')[1]?.toLowerCase()) return true;
    return (await tx.mailboxes.ticketOfMessageIds(mailbox.tenantId, [messageId])) !== null;
  }

  /** The entry's outcome written and its event (`email.received`, or `email.quarantined`) recorded; answers the entry as it is then. */
  async function finish(
    tx: Repositories,
    tenantId: string,
    entry: InboundEmail,
    outcome: InboundOutcome,
  ): Promise<InboundEmail> {
    const after: InboundEmail = {
      ...entry,
      status: outcome.status,
      reason: outcome.reason,
      ticket_id: outcome.ticketId,
      comment_id: outcome.commentId,
    };
    const type = outcome.status === 'quarantined' ? 'email.quarantined' : 'email.received';
    await tx.mailboxes.finishInboundRecorded(tenantId, after, deskEvents.head({ type, resourceType: 'inbound_email' }));
    return after;
  }

  const service = {
    /** Stores the fetched message (committed) unless the tenant has its Message-ID; answers the entry to process, or null. */
    async store(mailbox: MailboxRecord, fetched: FetchedMessage): Promise<InboundEmail | null> {
      const tooLarge = fetched.raw === null || fetched.size > mailbox.max_message_bytes;
      return store.mailboxes.recordInbound({
        tenantId: mailbox.tenantId,
        mailboxId: mailbox.id,
        messageId: messageIdOf(fetched),
        from: fetched.from,
        to: [],
        subject: fetched.subject,
        sizeBytes: fetched.size,
        raw: tooLarge ? null : fetched.raw,
        ...(tooLarge ? { status: 'failed', reason: 'too_large' } : {}),
      });
    },

    /**
     * Stores the fetched messages in order, one after another, without waiting for their processing
     * (their round trips overlap it); answers each one's `store`. A store that fails fails the ones after it.
     */
    storeInOrder(mailbox: MailboxRecord, messages: FetchedMessage[]): Promise<InboundEmail | null>[] {
      let previous: Promise<unknown> = Promise.resolve();
      return messages.map((fetched) => {
        const stored = previous.then(() => service.store(mailbox, fetched));
        // Awaited by the caller; one it never gets to (a poll that failed before) is no unhandled rejection.
        stored.catch(() => undefined);
        previous = stored;
        return stored;
      });
    },

    /** Processes a stored message in one transaction; a failure is logged on the entry, never thrown. */
    async process(mailbox: MailboxRecord, entry: InboundEmail, raw: Buffer): Promise<InboundOutcome> {
      // Parsed before the transaction: no connection is held while the CPU works.
      const mail = await parseMail(raw).catch(() => null);
      try {
        return await store.transaction(async (tx) => {
          const outcome = mail ? await process(tx, mailbox, entry, mail, raw) : UNPARSEABLE;
          const read = mail ? { from: mail.from, subject: mail.subject } : {};
          await finish(tx, mailbox.tenantId, { ...entry, ...read }, outcome);
          return outcome;
        });
      } catch (error) {
        logger.error('inbound mail failed', {
          mailbox_id: mailbox.id,
          inbound_email_id: entry.id,
          error: error instanceof Error ? error.message : String(error),
        });
        await store.mailboxes.finishInbound(entry.id, { status: 'failed', reason: 'unparseable' });
        return UNPARSEABLE;
      }
    },

    /**
     * An entry that did not become a ticket or comment (quarantined, ignored, failed), made one now as
     * the admin says: a new ticket (`client_id`, else the sender's or its domain's client, else the
     * mailbox's default) or a comment on `ticket_id`. All or nothing, the entry locked meanwhile: a
     * refusal changes nothing.
     */
    replay(tenantId: string, id: string, input: InboundReplay): Promise<InboundEmail> {
      return store.transaction(async (tx) => {
        const locked = await tx.mailboxes.lockInbound(tenantId, id);
        if (!locked) throw notFound('No inbound e-mail with this id exists in your tenant.');
        const { entry, raw } = locked;
        if (entry.status === 'processed')
          throw conflict('The message was processed already: it is on the ticket `ticket_id` names.', {
            code: 'already-processed',
          });
        if (entry.status === 'received')
          throw conflict('The message is being processed by a poll right now; look again in a moment.', {
            code: 'being-processed',
          });
        if (input.action === 'attach' && input.ticket_id === undefined)
          throw validationFailed([{ field: 'ticket_id', message: 'is required with action attach' }]);
        if (input.action === 'attach' && input.client_id !== undefined)
          throw validationFailed([{ field: 'client_id', message: 'is only taken with action create_ticket' }]);
        if (input.action === 'create_ticket' && input.ticket_id !== undefined)
          throw validationFailed([{ field: 'ticket_id', message: 'is only taken with action attach' }]);

        let mail: ParsedMail;
        try {
          mail = raw ? await parseMail(raw) : mailOfEntry(entry, null);
        } catch {
          mail = mailOfEntry(entry, raw);
        }
        const mailbox = entry.mailbox_id ? await tx.mailboxes.findById(tenantId, entry.mailbox_id) : null;
        const sender = mail.from ? await tx.contacts.findByEmail(tenantId, mail.from) : null;
        let outcome: InboundOutcome;
        if (input.action === 'attach') {
          let ticket = await tx.tickets.findForUpdate(tenantId, input.ticket_id!);
          if (!ticket)
            throw unprocessable('ticket_id does not name a ticket of your tenant.', {
              code: 'unknown-reference',
              errors: [{ field: 'ticket_id', message: 'does not name a ticket of your tenant' }],
            });
          if (ticket.merged_into_id !== null) {
            throw unprocessable('The ticket was merged into another one: attach the message to that one.', {
              code: 'ticket-closed',
              errors: [{ field: 'ticket_id', message: 'was merged into another ticket' }],
            });
          }
          // As a mail to it would: a closed ticket opens again.
          if (ticket.status === 'closed') ticket = await changeStatus(tx, tenantId, ticket, 'open');
          outcome = await commentFromMail(tx, tenantId, ticket, entry, mail, sender);
        } else {
          let clientId = input.client_id ?? null;
          if (clientId && !(await tx.clients.exists(tenantId, clientId))) {
            throw unprocessable('client_id does not name a client of your tenant.', {
              code: 'unknown-reference',
              errors: [{ field: 'client_id', message: 'does not name a client of your tenant' }],
            });
          }
          if (!clientId) clientId = sender?.client_id ?? null;
          if (!clientId && mail.from)
            clientId = (await tx.clients.findByEmailDomain(tenantId, mail.from.split('@')[1]!))?.id ?? null;
          if (!clientId) clientId = mailbox?.default_client_id ?? null;
          if (!clientId) {
            throw unprocessable('No client is known for the sender: give client_id.', {
              code: 'client-required',
              errors: [{ field: 'client_id', message: 'is required: neither the sender nor the mailbox has a client' }],
            });
          }
          outcome = await ticketFromMail(tx, mailbox, tenantId, entry, mail, { sender, clientId, followUpOf: null });
          if (outcome.status !== 'processed')
            throw unprocessable('The ticket could not be opened for this client.', { code: 'unknown-reference' });
        }
        return finish(tx, tenantId, entry, outcome);
      });
    },
  };
  return service;
}

export type InboundService = ReturnType<typeof createInboundService>;
