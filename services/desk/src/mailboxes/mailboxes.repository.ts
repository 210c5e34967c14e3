import { sqlRows } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type Mailbox as MailboxRow, type InboundEmail as InboundRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { InboundEmail, InboundFilters, Mailbox, MailboxHealth } from './mailbox.schemas';
import type { StoredOAuth2 } from './oauth-tokens';

export interface ServerSettings {
  host: string;
  port: number;
  tls: Mailbox['imap']['tls'];
  username: string | null;
  oauth2?: StoredOAuth2 | null;
}

const publicOAuth2 = (stored: StoredOAuth2 | null | undefined): Mailbox['imap']['oauth2'] =>
  stored ? { token_url: stored.token_url, client_id: stored.client_id, scope: stored.scope, client_secret_set: stored.secret !== null } : null;

/** A mailbox with what polling needs and the API never shows: the sealed secrets. */
export interface MailboxRecord extends Mailbox {
  tenantId: string;
  imapSecret: string | null;
  smtpSecret: string | null;
  /** XOAUTH2 settings with the sealed client secret, or null. */
  imapOAuth: StoredOAuth2 | null;
  smtpOAuth: StoredOAuth2 | null;
  failures: number;
  health: MailboxHealth;
}

function toMailbox(row: MailboxRow): MailboxRecord {
  const imap = row.imap as unknown as ServerSettings;
  const smtp = row.smtp as unknown as ServerSettings;
  return {
    id: row.id,
    address: row.address,
    name: row.name,
    imap: { host: imap.host, port: imap.port, tls: imap.tls, username: imap.username ?? '', password_set: row.imapSecret !== null, oauth2: publicOAuth2(imap.oauth2) },
    smtp: { host: smtp.host, port: smtp.port, tls: smtp.tls, username: smtp.username, password_set: row.smtpSecret !== null, oauth2: publicOAuth2(smtp.oauth2) },
    folder: row.folder,
    processed_folder: row.processedFolder,
    poll_interval_seconds: row.pollIntervalSeconds,
    default_client_id: row.defaultClientId,
    unknown_sender: row.unknownSender as Mailbox['unknown_sender'],
    closed_ticket_policy: row.closedTicketPolicy as Mailbox['closed_ticket_policy'],
    reopen_within_days: row.reopenWithinDays,
    max_message_bytes: row.maxMessageBytes,
    auto_acknowledge: row.autoAcknowledge,
    enabled: row.enabled,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    tenantId: row.tenantId,
    imapSecret: row.imapSecret,
    smtpSecret: row.smtpSecret,
    imapOAuth: imap.oauth2 ?? null,
    smtpOAuth: smtp.oauth2 ?? null,
    failures: row.failures,
    health: {
      status: row.lastError === null ? 'ok' : 'failing',
      last_poll_at: row.lastPollAt?.toISOString() ?? null,
      last_success_at: row.lastSuccessAt?.toISOString() ?? null,
      last_error: row.lastError,
      messages_processed: row.messagesProcessed,
      messages_quarantined: row.messagesQuarantined,
    },
  };
}

/** The API's shape of a record: no secrets, no health. */
export function publicMailbox(record: MailboxRecord): Mailbox {
  const mailbox: Partial<MailboxRecord> = { ...record };
  delete mailbox.tenantId;
  delete mailbox.imapSecret;
  delete mailbox.smtpSecret;
  delete mailbox.imapOAuth;
  delete mailbox.smtpOAuth;
  delete mailbox.failures;
  delete mailbox.health;
  return mailbox as Mailbox;
}

export interface MailboxWrite {
  address?: string;
  name?: string | null;
  imap?: ServerSettings;
  imapSecret?: string | null;
  smtp?: ServerSettings;
  smtpSecret?: string | null;
  folder?: string;
  processedFolder?: string | null;
  pollIntervalSeconds?: number;
  defaultClientId?: string | null;
  unknownSender?: string;
  closedTicketPolicy?: string;
  reopenWithinDays?: number;
  maxMessageBytes?: number;
  autoAcknowledge?: boolean;
  enabled?: boolean;
}

function toInbound(row: InboundRow): InboundEmail {
  return {
    id: row.id,
    mailbox_id: row.mailboxId,
    message_id: row.messageId,
    from: row.from,
    to: row.to ?? [],
    subject: row.subject,
    received_at: new Date(row.receivedAt).toISOString(),
    size_bytes: row.sizeBytes,
    status: row.status as InboundEmail['status'],
    reason: row.reason,
    ticket_id: row.ticketId,
    comment_id: row.commentId,
  };
}

const INBOUND_COLUMNS = Prisma.raw(
  `id, mailbox_id AS "mailboxId", message_id AS "messageId", "from", "to", subject, received_at AS "receivedAt", size_bytes AS "sizeBytes", status, reason, ticket_id AS "ticketId", comment_id AS "commentId"`,
);

export function createMailboxesRepository(db: DbTx) {
  const rows = sqlRows(db);
  const toJson = (settings: ServerSettings | undefined) => settings as unknown as Prisma.InputJsonValue | undefined;

  return {
    async list(tenantId: string, page: PageRequest): Promise<{ items: MailboxRecord[]; total: number }> {
      const found = await lists.keysetListPage<{ id: string }>(rows, listWindow(page), {
        table: 'mailboxes',
        select: Prisma.raw('id'),
        scope: Prisma.sql`tenant_id = ${tenantId}::uuid`,
        columns: ['created_at', 'id'],
        direction: 'desc',
        total: Prisma.sql`SELECT count(*) FROM mailboxes WHERE tenant_id = ${tenantId}::uuid`,
      });
      const all = await db.mailbox.findMany({ where: { id: { in: found.items.map((item) => item.id) } } });
      return { items: found.items.map((item) => toMailbox(all.find((row) => row.id === item.id)!)), total: found.total };
    },

    async findById(tenantId: string, id: string): Promise<MailboxRecord | null> {
      const row = await db.mailbox.findFirst({ where: { id, tenantId } });
      return row && toMailbox(row);
    },

    async findForUpdate(tenantId: string, id: string): Promise<MailboxRecord | null> {
      const locked = await db.$queryRaw<{ id: string }[]>`SELECT id FROM mailboxes WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      if (!locked.length) return null;
      return toMailbox((await db.mailbox.findUnique({ where: { id } }))!);
    },

    async create(tenantId: string, data: MailboxWrite & { address: string; imap: ServerSettings; smtp: ServerSettings }): Promise<MailboxRecord> {
      return toMailbox(await db.mailbox.create({ data: { ...data, imap: toJson(data.imap)!, smtp: toJson(data.smtp)!, tenantId } }));
    },

    async update(tenantId: string, id: string, data: MailboxWrite): Promise<MailboxRecord> {
      return toMailbox(await db.mailbox.update({ where: { id, tenantId }, data: { ...data, imap: toJson(data.imap), smtp: toJson(data.smtp) } }));
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await db.mailbox.delete({ where: { id, tenantId } });
    },

    /** Makes the mailbox due now (POST /mailboxes/{id}/poll). */
    async dueNow(tenantId: string, id: string): Promise<void> {
      await db.mailbox.update({ where: { id, tenantId }, data: { nextPollAt: new Date() } });
    },

    /**
     * Claims one due mailbox for `leaseMs` (SKIP LOCKED: instances never claim the same one), or
     * `id`'s when given and due. Answers null when none is due.
     */
    async claimDue(leaseMs: number, id?: string): Promise<MailboxRecord | null> {
      const only = id ? Prisma.sql`AND id = ${id}::uuid` : Prisma.empty;
      const [claimed] = await rows<{ id: string }>(Prisma.sql`
        UPDATE mailboxes SET locked_until = now() + ${leaseMs} * interval '1 millisecond', last_poll_at = now()
        WHERE id = (SELECT id FROM mailboxes WHERE enabled AND next_poll_at <= now() AND (locked_until IS NULL OR locked_until < now()) ${only}
          ORDER BY next_poll_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id`);
      if (!claimed) return null;
      return toMailbox((await db.mailbox.findUnique({ where: { id: claimed.id } }))!);
    },

    /** Ends a poll: the next one due after the interval, or (failing) after a back-off. */
    async finishPoll(id: string, outcome: { error: string | null; nextPollAt: Date; processed: number; quarantined: number }): Promise<{ before: MailboxRecord; after: MailboxRecord }> {
      const before = toMailbox((await db.mailbox.findUnique({ where: { id } }))!);
      const after = await db.mailbox.update({
        where: { id },
        data: {
          lockedUntil: null,
          nextPollAt: outcome.nextPollAt,
          lastError: outcome.error,
          failures: outcome.error === null ? 0 : { increment: 1 },
          ...(outcome.error === null ? { lastSuccessAt: new Date() } : {}),
          messagesProcessed: { increment: outcome.processed },
          messagesQuarantined: { increment: outcome.quarantined },
          updatedAt: before.updated_at,
        },
      });
      return { before, after: toMailbox(after) };
    },

    async firstEnabled(tenantId: string): Promise<MailboxRecord | null> {
      const row = await db.mailbox.findFirst({ where: { tenantId, enabled: true }, orderBy: { createdAt: 'asc' } });
      return row && toMailbox(row);
    },

    // ---- the inbound log ----

    /** Stores a message as read; null when the tenant has this Message-ID already (seen before). */
    async recordInbound(entry: {
      tenantId: string;
      mailboxId: string;
      messageId: string;
      from: string;
      to: string[];
      subject: string;
      sizeBytes: number;
      raw: Buffer | null;
      status?: string;
      reason?: string | null;
    }): Promise<InboundEmail | null> {
      const [row] = await rows<InboundRow>(Prisma.sql`
        INSERT INTO inbound_emails (tenant_id, mailbox_id, message_id, "from", "to", subject, size_bytes, raw, status, reason)
        VALUES (${entry.tenantId}::uuid, ${entry.mailboxId}::uuid, ${entry.messageId}, ${entry.from}, ${entry.to}::text[], ${entry.subject}, ${entry.sizeBytes},
          ${entry.raw}, ${entry.status ?? 'received'}, ${entry.reason ?? null})
        ON CONFLICT (tenant_id, message_id) DO NOTHING
        RETURNING ${INBOUND_COLUMNS}`);
      return row ? toInbound(row) : null;
    },

    async finishInbound(id: string, outcome: { status: string; reason?: string | null; ticketId?: string | null; commentId?: string | null; from?: string; subject?: string }) {
      await db.inboundEmail.update({ where: { id }, data: { status: outcome.status, reason: outcome.reason ?? null, ticketId: outcome.ticketId, commentId: outcome.commentId, from: outcome.from, subject: outcome.subject } });
    },

    /** Messages left `received` by a poll that ended before processing them. */
    async unprocessed(tenantId: string, mailboxId: string): Promise<{ id: string; raw: Buffer | null }[]> {
      const found = await db.inboundEmail.findMany({ where: { tenantId, mailboxId, status: 'received' }, select: { id: true, raw: true }, orderBy: { receivedAt: 'asc' } });
      return found.map((row) => ({ id: row.id, raw: row.raw ? Buffer.from(row.raw) : null }));
    },

    /** The ticket a Message-ID desk received or sent threads to, if any. */
    async ticketOfMessageIds(tenantId: string, messageIds: string[]): Promise<string | null> {
      if (!messageIds.length) return null;
      const sent = await db.outboundEmail.findFirst({ where: { tenantId, messageId: { in: messageIds } }, orderBy: { createdAt: 'desc' } });
      if (sent) return sent.ticketId;
      const found = await db.inboundEmail.findFirst({ where: { tenantId, messageId: { in: messageIds }, ticketId: { not: null } }, orderBy: { receivedAt: 'desc' } });
      return found?.ticketId ?? null;
    },

    /** The Message-IDs of a ticket's thread, oldest first: what a reply's References continue. */
    async threadOf(tenantId: string, ticketId: string): Promise<string[]> {
      const found = await rows<{ message_id: string }>(Prisma.sql`
        SELECT message_id FROM (
          SELECT message_id, received_at AS at FROM inbound_emails WHERE tenant_id = ${tenantId}::uuid AND ticket_id = ${ticketId}::uuid AND status = 'processed'
          UNION ALL
          SELECT message_id, created_at FROM outbound_emails WHERE tenant_id = ${tenantId}::uuid AND ticket_id = ${ticketId}::uuid
        ) thread ORDER BY at`);
      return found.map((row) => row.message_id);
    },

    async queueOutbound(entry: Prisma.OutboundEmailUncheckedCreateInput) {
      return db.outboundEmail.create({ data: entry });
    },

    /** Claims one due queued mail for `leaseMs` (SKIP LOCKED: one instance sends it). */
    async claimOutbound(leaseMs: number) {
      const [claimed] = await rows<{ id: string }>(Prisma.sql`
        UPDATE outbound_emails SET locked_until = now() + ${leaseMs} * interval '1 millisecond', attempts = attempts + 1
        WHERE id = (SELECT id FROM outbound_emails WHERE status = 'queued' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
          ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING id`);
      return claimed ? db.outboundEmail.findUnique({ where: { id: claimed.id } }) : null;
    },

    async finishOutbound(id: string, data: { status: string; error?: string | null; nextAttemptAt?: Date; sentAt?: Date }) {
      return db.outboundEmail.update({ where: { id }, data: { ...data, lockedUntil: null } });
    },

    /** Marks the sent mails of these Message-IDs bounced; answers them. */
    async bounceOutbound(tenantId: string, messageIds: string[]) {
      if (!messageIds.length) return [];
      return db.outboundEmail.updateManyAndReturn({ where: { tenantId, messageId: { in: messageIds }, status: { in: ['sent', 'queued'] } }, data: { status: 'bounced' } });
    },

    async ticketEmails(tenantId: string, ticketId: string) {
      const inbound = await db.inboundEmail.findMany({ where: { tenantId, ticketId }, omit: { raw: true }, orderBy: { receivedAt: 'asc' } });
      const outbound = await db.outboundEmail.findMany({ where: { tenantId, ticketId }, orderBy: { createdAt: 'asc' } });
      return { inbound, outbound };
    },

    async listInbound(tenantId: string, filters: InboundFilters, page: PageRequest): Promise<{ items: InboundEmail[]; total: number }> {
      const where: Prisma.Sql[] = [];
      if (filters.mailbox_id) where.push(Prisma.sql`mailbox_id = ${filters.mailbox_id}::uuid`);
      if (filters.status) where.push(Prisma.sql`status = ${filters.status}`);
      if (filters.message_id) where.push(Prisma.sql`message_id = ${filters.message_id.replace(/^<|>$/g, '')}`);
      const scope = Prisma.sql`tenant_id = ${tenantId}::uuid`;
      const found = await lists.keysetListPage<InboundRow>(rows, listWindow(page), {
        table: 'inbound_emails',
        select: INBOUND_COLUMNS,
        scope,
        filters: where,
        columns: ['received_at', 'id'],
        direction: 'desc',
        total: Prisma.sql`SELECT count(*) FROM inbound_emails WHERE ${Prisma.join([scope, ...where], ' AND ')}`,
      });
      return { items: found.items.map(toInbound), total: found.total };
    },

    async findInbound(tenantId: string, id: string): Promise<InboundEmail | null> {
      const row = await db.inboundEmail.findFirst({ where: { id, tenantId }, omit: { raw: true } });
      return row && toInbound(row as InboundRow);
    },

    /** The entry and its bytes, locked for the rest of the transaction (a replay). */
    async lockInbound(tenantId: string, id: string): Promise<{ entry: InboundEmail; raw: Buffer | null } | null> {
      const [row] = await rows<InboundRow>(Prisma.sql`SELECT ${INBOUND_COLUMNS}, raw FROM inbound_emails WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`);
      return row ? { entry: toInbound(row), raw: row.raw ? Buffer.from(row.raw) : null } : null;
    },

    /** Whether `address` was sent an acknowledgement since `since`; serialised per tenant and address for the rest of the transaction. */
    async acknowledgedSince(tenantId: string, address: string, since: Date): Promise<boolean> {
      await rows(Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${`ack:${tenantId}:${address}`}, 0)) IS NULL AS locked`);
      const [found] = await rows<{ id: string }>(Prisma.sql`
        SELECT id FROM outbound_emails WHERE tenant_id = ${tenantId}::uuid AND kind = 'acknowledgement' AND ${address} = ANY("to") AND created_at > ${since} LIMIT 1`);
      return found !== undefined;
    },

    async rawOf(tenantId: string, id: string): Promise<Buffer | null | undefined> {
      const row = await db.inboundEmail.findFirst({ where: { id, tenantId }, select: { raw: true } });
      return row ? (row.raw ? Buffer.from(row.raw) : null) : undefined;
    },
  };
}

export type MailboxesRepository = ReturnType<typeof createMailboxesRepository>;
