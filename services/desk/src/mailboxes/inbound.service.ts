import { createHash } from 'node:crypto';
import type { Logger } from '@msp/http';
import { createContactIn } from '../contacts/contacts.service';
import type { Contact } from '../contacts/contact.schemas';
import type { SlaService } from '../sla/sla.service';
import type { Repositories, Store } from '../store';
import type { Ticket } from '../tickets/ticket.schemas';
import { timestampsFor } from '../tickets/ticket-status';
import { openTicketIn } from '../tickets/tickets.service';
import { automaticReason, bareMessageId, parseMail, stripReply, subjectTicketNumber, type ParsedMail } from './mail-message';
import type { FetchedMessage } from './mail-reader';
import { toTicketEmail } from './outbound';
import type { InboundEmail } from './mailbox.schemas';
import type { MailboxRecord } from './mailboxes.repository';

const DAY_MS = 86_400_000;

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
  const header = fetched.raw ? fetched.raw.subarray(0, fetched.raw.indexOf('\r\n\r\n') >= 0 ? fetched.raw.indexOf('\r\n\r\n') : fetched.raw.length) : null;
  const found = header ? /^message-id:\s*(<[^>]+>)/im.exec(header.toString('latin1')) : null;
  if (found) return bareMessageId(found[1]!);
  return `${createHash('sha256').update(fetched.raw ?? `${fetched.from}|${fetched.subject}|${fetched.size}`).digest('hex')}@desk.invalid`;
}

/**
 * Inbound mail: a message is stored raw first (its own commit; a Message-ID the tenant has is
 * skipped: one message, one ticket, whatever polls or mailboxes saw it), then processed in one
 * transaction of its own. A message that fails is logged `failed` and the poll goes on.
 */
export function createInboundService(store: Store, sla: SlaService, logger: Logger) {
  /** The ticket the mail continues: by In-Reply-To/References, else `[#n]` when the sender belongs to it. */
  async function threadOf(tx: Repositories, tenantId: string, mail: ParsedMail, sender: Contact | null): Promise<Ticket | null> {
    const byHeader = await tx.mailboxes.ticketOfMessageIds(tenantId, [...mail.inReplyTo, ...mail.references]);
    if (byHeader) return tx.tickets.findForUpdate(tenantId, byHeader);
    const number = subjectTicketNumber(mail.subject);
    if (number === null) return null;
    const id = await tx.tickets.findIdByNumber(tenantId, number);
    const ticket = id ? await tx.tickets.findForUpdate(tenantId, id) : null;
    if (!ticket) return null;
    // A number from another customer's mail must not thread into that customer's ticket.
    const belongs =
      ticket.requester?.email === mail.from || ticket.cc.includes(mail.from) || (sender !== null && sender.client_id !== null && sender.client_id === ticket.client_id);
    return belongs ? ticket : null;
  }

  /** A delivery-status report of desk's mail: that mail `bounced`, its recipients' contacts `bounced`. */
  async function bounce(tx: Repositories, tenantId: string, mail: ParsedMail, raw: Buffer) {
    // The report names the original in its headers, or quotes them (Message-ID of the returned mail).
    const quoted = (raw.toString('latin1').match(/^message-id:\s*<[^>]+>/gim) ?? []).map((line) => bareMessageId(line.replace(/^message-id:\s*/i, '')));
    const bounced = await tx.mailboxes.bounceOutbound(tenantId, [...new Set([...mail.inReplyTo, ...mail.references, ...quoted])]);
    for (const row of bounced) {
      await tx.events.record({ type: 'email.bounced', tenantId, resourceType: 'outbound_email', resourceId: row.id, object: toTicketEmail(row) });
      for (const address of row.to) {
        const before = await tx.contacts.findByEmail(tenantId, address);
        const after = await tx.contacts.markBounced(tenantId, address);
        if (before && after) await tx.events.record({ type: 'contact.updated', tenantId, resourceType: 'contact', resourceId: after.id, object: after, before });
      }
    }
  }

  async function changeStatus(tx: Repositories, tenantId: string, ticket: Ticket, status: 'open'): Promise<Ticket> {
    const now = new Date();
    const written = await tx.tickets.update(tenantId, ticket.id, { status, ...timestampsFor(ticket.status, status, now), closedAt: null }, now);
    const updated = await sla.onTicketChanged(tx, tenantId, ticket, { ...written, sla: ticket.sla }, now);
    await tx.events.record({ type: 'ticket.updated', tenantId, resourceType: 'ticket', resourceId: ticket.id, object: updated, before: ticket });
    return updated;
  }

  async function process(tx: Repositories, mailbox: MailboxRecord, entry: InboundEmail, raw: Buffer): Promise<InboundOutcome> {
    const tenantId = mailbox.tenantId;
    let mail: ParsedMail;
    try {
      mail = await parseMail(raw);
    } catch {
      return { status: 'failed', reason: 'unparseable', ticketId: null, commentId: null };
    }
    await tx.mailboxes.finishInbound(entry.id, { status: 'received', from: mail.from, subject: mail.subject });
    if (mail.from === mailbox.address.toLowerCase()) return { status: 'ignored', reason: 'loop', ticketId: null, commentId: null };
    let sender = await tx.contacts.findByEmail(tenantId, mail.from);
    const automatic = automaticReason(mail);
    let ticket = await threadOf(tx, tenantId, mail, sender);
    if (automatic === 'bounce') await bounce(tx, tenantId, mail, raw);
    // Automatic mail never reopens, opens or comments: it is logged on the ticket it threads to.
    if (automatic) return { status: 'ignored', reason: automatic, ticketId: ticket?.id ?? null, commentId: null };

    let followUpOf: string | null = null;
    if (ticket && ticket.status === 'closed') {
      const closedAt = ticket.closed_at ? Date.parse(ticket.closed_at) : 0;
      if (mailbox.closed_ticket_policy === 'reopen' && Date.now() - closedAt <= mailbox.reopen_within_days * DAY_MS && ticket.merged_into_id === null) {
        ticket = await changeStatus(tx, tenantId, ticket, 'open');
      } else {
        followUpOf = ticket.id;
        ticket = null;
      }
    }
    const body = stripReply(mail.text) || mail.text || '(no text)';
    if (ticket) {
      const comment = await tx.comments.create(tenantId, {
        ticketId: ticket.id,
        body: body.slice(0, 100_000),
        internal: false,
        author: mail.from,
        authorType: 'contact',
        authorContactId: sender?.id ?? null,
      });
      await tx.events.record({ type: 'comment.created', tenantId, resourceType: 'comment', resourceId: comment.id, object: comment });
      // The requester answered what the technician asked: the ticket is being worked on again.
      if (ticket.status === 'pending' && ticket.requester?.email === mail.from) await changeStatus(tx, tenantId, ticket, 'open');
      return { status: 'processed', reason: null, ticketId: ticket.id, commentId: comment.id };
    }

    // A new ticket: the sender's contact's client, else the client owning the sender's domain,
    // else the mailbox's default client when unknown senders become contacts; else quarantined.
    let clientId = sender?.client_id ?? null;
    if (!clientId) clientId = (await tx.clients.findByEmailDomain(tenantId, mail.from.split('@')[1]!))?.id ?? null;
    if (!clientId && mailbox.unknown_sender === 'create_contact') clientId = mailbox.default_client_id;
    if (!clientId) return { status: 'quarantined', reason: 'unknown_sender', ticketId: null, commentId: null };
    if (!sender) sender = await createContactIn(tx, tenantId, { name: mail.fromName.slice(0, 200), email: mail.from, client_id: clientId });
    const own = mailbox.address.toLowerCase();
    const opened = await openTicketIn(tx, sla, tenantId, {
      title: (mail.subject || '(no subject)').slice(0, 200),
      description: body.slice(0, 10_000),
      clientId,
      requesterId: sender.id,
      source: 'email',
      mailboxId: mailbox.id,
      ccSuggested: [...new Set([...mail.cc, ...mail.to].filter((address) => address !== own && address !== mail.from))],
      followUpOf,
    });
    if (!opened) return { status: 'failed', reason: 'unparseable', ticketId: null, commentId: null };
    return { status: 'processed', reason: null, ticketId: opened.id, commentId: null };
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

    /** Processes a stored message in one transaction; a failure is logged on the entry, never thrown. */
    async process(mailbox: MailboxRecord, entry: InboundEmail, raw: Buffer): Promise<InboundOutcome> {
      try {
        return await store.transaction(async (tx) => {
          const outcome = await process(tx, mailbox, entry, raw);
          await tx.mailboxes.finishInbound(entry.id, outcome);
          const after = await tx.mailboxes.findInbound(mailbox.tenantId, entry.id);
          const type = outcome.status === 'quarantined' ? 'email.quarantined' : 'email.received';
          await tx.events.record({ type, tenantId: mailbox.tenantId, resourceType: 'inbound_email', resourceId: entry.id, object: after! });
          return outcome;
        });
      } catch (error) {
        logger.error('inbound mail failed', { mailbox_id: mailbox.id, inbound_email_id: entry.id, error: error instanceof Error ? error.message : String(error) });
        await store.mailboxes.finishInbound(entry.id, { status: 'failed', reason: 'unparseable' });
        return { status: 'failed', reason: 'unparseable', ticketId: null, commentId: null };
      }
    },
  };
  return service;
}

export type InboundService = ReturnType<typeof createInboundService>;
