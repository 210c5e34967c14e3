import { randomUUID } from 'node:crypto';
import type { Logger } from '@msp/http';
import type { SecretBox } from '@msp/secrets';
import type { Comment } from '../comments/comment.schemas';
import type { Contact } from '../contacts/contact.schemas';
import type { Repositories, Store } from '../store';
import type { Ticket } from '../tickets/ticket.schemas';
import type { MailSender } from './mail-sender';
import type { MailboxRecord } from './mailboxes.repository';
import type { OAuthTokens } from './oauth-tokens';

/** The retry schedule of a mail the SMTP server did not take; after the last, it is `failed`. */
export const SEND_RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000];
const SEND_LEASE_MS = 120_000;
/** One acknowledgement per sender in this time, whatever they send meanwhile. */
export const ACKNOWLEDGE_EVERY_MS = 10 * 60_000;
/** What marks an acknowledgement as automatic (RFC 3834), so that auto-responders do not answer it. */
const AUTOMATIC_HEADERS = { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' };

/** desk's own Message-ID on the mailbox's domain (inbound.service.ts knows it again as a loop). */
const ownMessageId = (mailbox: { address: string }) =>
  `desk.${randomUUID()}@${mailbox.address.split('@')[1] ?? 'desk.invalid'}`;

export interface TicketEmail {
  id: string;
  direction: 'inbound' | 'outbound';
  message_id: string;
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  status: 'received' | 'queued' | 'sent' | 'failed' | 'bounced';
  error: string | null;
  created_at: string;
}

/**
 * Queues a technician's public comment as mail to the ticket's requester and `cc`, in the comment's
 * transaction: through the ticket's mailbox or the tenant's first enabled one; a bounced requester
 * gets nothing until their contact is changed. `cc_suggested` is never mailed.
 */
export async function queueReplyIn(
  tx: Repositories,
  tenantId: string,
  ticket: Ticket,
  comment: Comment,
): Promise<void> {
  if (comment.internal || !ticket.requester) return;
  const mailbox =
    (ticket.mailbox_id && (await tx.mailboxes.findById(tenantId, ticket.mailbox_id))) ||
    (await tx.mailboxes.firstEnabled(tenantId));
  if (!mailbox) return;
  const requester = await tx.contacts.findById(tenantId, ticket.requester.id);
  if (!requester || requester.email_status === 'bounced') return;
  const thread = await tx.mailboxes.threadOf(tenantId, ticket.id);
  await tx.mailboxes.queueOutbound({
    tenantId,
    ticketId: ticket.id,
    mailboxId: mailbox.id,
    commentId: comment.id,
    messageId: ownMessageId(mailbox),
    from: mailbox.address,
    to: [requester.email],
    cc: ticket.cc.filter((address) => address !== requester.email),
    subject: `[#${ticket.number}] ${ticket.title}`,
    inReplyTo: thread[thread.length - 1] ?? null,
    references: thread,
    body: comment.body,
  });
}

/**
 * Queues the acknowledgement of a new e-mail ticket (auto_acknowledge), in the ticket's transaction:
 * to the sender alone, marked Auto-Submitted, at most one per sender and tenant in ACKNOWLEDGE_EVERY_MS,
 * none to a bounced address.
 */
export async function queueAcknowledgementIn(
  tx: Repositories,
  tenantId: string,
  mailbox: MailboxRecord,
  ticket: Ticket,
  sender: Contact,
  inboundMessageId: string,
): Promise<void> {
  if (sender.email_status === 'bounced') return;
  if (await tx.mailboxes.acknowledgedSince(tenantId, sender.email, new Date(Date.now() - ACKNOWLEDGE_EVERY_MS))) return;
  await tx.mailboxes.queueOutbound({
    tenantId,
    ticketId: ticket.id,
    mailboxId: mailbox.id,
    commentId: null,
    kind: 'acknowledgement',
    messageId: ownMessageId(mailbox),
    from: mailbox.address,
    to: [sender.email],
    cc: [],
    subject: `[#${ticket.number}] ${ticket.title}`,
    inReplyTo: inboundMessageId,
    references: [inboundMessageId],
    body:
      `Hello ${sender.name},\n\nwe have received your message and opened ticket #${ticket.number}: ${ticket.title}\n` +
      `To add to it, reply to this mail and keep [#${ticket.number}] in the subject.\n\nThis is an automatic acknowledgement.\n`,
  });
}

/** Sends queued mail, each claimed by one instance; a refusal or an absent server retries later. */
export function createOutboundSender({
  store,
  sender,
  secrets,
  logger,
  tokens,
}: {
  store: Store;
  sender: MailSender;
  secrets: SecretBox;
  logger: Logger;
  tokens?: OAuthTokens;
}) {
  return {
    async sendDue(): Promise<number> {
      let sent = 0;
      for (;;) {
        const mail = await store.mailboxes.claimOutbound(SEND_LEASE_MS);
        if (!mail) return sent;
        const mailbox = mail.mailboxId ? await store.mailboxes.findById(mail.tenantId, mail.mailboxId) : null;
        try {
          if (!mailbox) throw new Error('the mailbox it was to be sent through was deleted');
          const oauth2 = mailbox.smtpOAuth;
          if (oauth2 && !tokens) throw new Error('XOAUTH2 is not available to this sender');
          const accessToken = oauth2
            ? await tokens!.accessToken(`${mailbox.id}:smtp`, oauth2, oauth2.secret ? secrets.open(oauth2.secret) : '')
            : undefined;
          await sender.send(
            { ...mailbox.smtp, password: mailbox.smtpSecret ? secrets.open(mailbox.smtpSecret) : '', accessToken },
            {
              from: mail.from,
              to: mail.to,
              cc: mail.cc,
              subject: mail.subject,
              text: mail.body,
              messageId: `<${mail.messageId}>`,
              inReplyTo: mail.inReplyTo ? `<${mail.inReplyTo}>` : undefined,
              references: mail.references.map((id) => `<${id}>`),
              headers: mail.kind === 'acknowledgement' ? AUTOMATIC_HEADERS : undefined,
            },
          );
          await store.transaction(async (tx) => {
            const after = await tx.mailboxes.finishOutbound(mail.id, {
              status: 'sent',
              error: null,
              sentAt: new Date(),
            });
            await tx.events.record({
              type: 'email.sent',
              tenantId: mail.tenantId,
              resourceType: 'outbound_email',
              resourceId: mail.id,
              object: toTicketEmail(after),
            });
          });
          sent++;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          if (mailbox?.smtpOAuth) tokens?.forget(`${mailbox.id}:smtp`);
          const delay = SEND_RETRY_DELAYS_MS[mail.attempts - 1];
          logger.warn('mail not sent', { outbound_email_id: mail.id, attempt: mail.attempts, error: message });
          if (delay === undefined || !mailbox) {
            await store.transaction(async (tx) => {
              const after = await tx.mailboxes.finishOutbound(mail.id, { status: 'failed', error: message });
              await tx.events.record({
                type: 'email.failed',
                tenantId: mail.tenantId,
                resourceType: 'outbound_email',
                resourceId: mail.id,
                object: toTicketEmail(after),
              });
            });
          } else {
            await store.mailboxes.finishOutbound(mail.id, {
              status: 'queued',
              error: message,
              nextAttemptAt: new Date(Date.now() + delay),
            });
          }
        }
      }
    },
  };
}

export function toTicketEmail(row: {
  id: string;
  messageId: string;
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  status: string;
  error: string | null;
  createdAt: Date;
}): TicketEmail {
  return {
    id: row.id,
    direction: 'outbound',
    message_id: row.messageId,
    from: row.from,
    to: row.to,
    cc: row.cc,
    subject: row.subject,
    status: row.status as TicketEmail['status'],
    error: row.error,
    created_at: row.createdAt.toISOString(),
  };
}
