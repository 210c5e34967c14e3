import { inListOrder, type ListOrder } from '@msp/db';
import { announceEventRecorded, type EventHead } from '@msp/events';
import type { PageRequest } from '@msp/http';
import { sql, type Selectable } from 'kysely';
import { jsonb, type Db } from '../db';
import { eventInsertFrom } from '../events/event-insert';
import type {
  InboundEmail as InboundTable,
  Mailbox as MailboxRow,
  OutboundEmail as OutboundRow,
} from '../generated/kysely/database';
import { pageOfList } from '../shared/lists';
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
  stored
    ? {
        token_url: stored.token_url,
        client_id: stored.client_id,
        scope: stored.scope,
        client_secret_set: stored.secret !== null,
      }
    : null;

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

function toMailbox(row: Selectable<MailboxRow>): MailboxRecord {
  const imap = row.imap as unknown as ServerSettings;
  const smtp = row.smtp as unknown as ServerSettings;
  return {
    id: row.id,
    address: row.address,
    name: row.name,
    imap: {
      host: imap.host,
      port: imap.port,
      tls: imap.tls,
      username: imap.username ?? '',
      password_set: row.imap_secret !== null,
      oauth2: publicOAuth2(imap.oauth2),
    },
    smtp: {
      host: smtp.host,
      port: smtp.port,
      tls: smtp.tls,
      username: smtp.username,
      password_set: row.smtp_secret !== null,
      oauth2: publicOAuth2(smtp.oauth2),
    },
    folder: row.folder,
    processed_folder: row.processed_folder,
    poll_interval_seconds: row.poll_interval_seconds,
    default_client_id: row.default_client_id,
    unknown_sender: row.unknown_sender as Mailbox['unknown_sender'],
    closed_ticket_policy: row.closed_ticket_policy as Mailbox['closed_ticket_policy'],
    reopen_within_days: row.reopen_within_days,
    max_message_bytes: row.max_message_bytes,
    auto_acknowledge: row.auto_acknowledge,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    tenantId: row.tenant_id,
    imapSecret: row.imap_secret,
    smtpSecret: row.smtp_secret,
    imapOAuth: imap.oauth2 ?? null,
    smtpOAuth: smtp.oauth2 ?? null,
    failures: row.failures,
    health: {
      status: row.last_error === null ? 'ok' : 'failing',
      last_poll_at: row.last_poll_at?.toISOString() ?? null,
      last_success_at: row.last_success_at?.toISOString() ?? null,
      last_error: row.last_error,
      messages_processed: row.messages_processed,
      messages_quarantined: row.messages_quarantined,
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

/** An inbound_emails row without its raw message. */
type InboundRow = Omit<Selectable<InboundTable>, 'raw' | 'tenant_id'>;

function toInbound(row: InboundRow): InboundEmail {
  return {
    id: row.id,
    mailbox_id: row.mailbox_id,
    message_id: row.message_id,
    from: row.from,
    to: row.to ?? [],
    subject: row.subject,
    received_at: row.received_at.toISOString(),
    size_bytes: row.size_bytes,
    status: row.status as InboundEmail['status'],
    reason: row.reason,
    ticket_id: row.ticket_id,
    comment_id: row.comment_id,
  };
}

const INBOUND_COLUMNS = [
  'id',
  'mailbox_id',
  'message_id',
  'from',
  'to',
  'subject',
  'received_at',
  'size_bytes',
  'status',
  'reason',
  'ticket_id',
  'comment_id',
] as const;

/** A queued or sent reply, as the sender and the events read it. */
export interface OutboundRecord {
  id: string;
  /** `reply` (a technician's comment) or `acknowledgement` (auto_acknowledge). */
  kind: string;
  tenantId: string;
  ticketId: string;
  mailboxId: string | null;
  commentId: string | null;
  messageId: string;
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  inReplyTo: string | null;
  references: string[];
  body: string;
  status: string;
  error: string | null;
  attempts: number;
  sentAt: Date | null;
  createdAt: Date;
}

function toOutbound(row: Selectable<OutboundRow>): OutboundRecord {
  return {
    id: row.id,
    kind: row.kind,
    tenantId: row.tenant_id,
    ticketId: row.ticket_id,
    mailboxId: row.mailbox_id,
    commentId: row.comment_id,
    messageId: row.message_id,
    from: row.from,
    to: row.to,
    cc: row.cc,
    subject: row.subject,
    inReplyTo: row.in_reply_to,
    references: row.references,
    body: row.body,
    status: row.status,
    error: row.error,
    attempts: row.attempts,
    sentAt: row.sent_at,
    createdAt: row.created_at,
  };
}

/** Newest first. */
const MAILBOX_ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'desc' };
const INBOUND_ORDER: ListOrder = { columns: ['received_at', 'id'], direction: 'desc' };

/** The columns a write sets: only the fields it gives (undefined is left out). */
function mailboxColumns(data: MailboxWrite) {
  return {
    address: data.address,
    name: data.name,
    imap: data.imap === undefined ? undefined : jsonb(data.imap),
    imap_secret: data.imapSecret,
    smtp: data.smtp === undefined ? undefined : jsonb(data.smtp),
    smtp_secret: data.smtpSecret,
    folder: data.folder,
    processed_folder: data.processedFolder,
    poll_interval_seconds: data.pollIntervalSeconds,
    default_client_id: data.defaultClientId,
    unknown_sender: data.unknownSender,
    closed_ticket_policy: data.closedTicketPolicy,
    reopen_within_days: data.reopenWithinDays,
    max_message_bytes: data.maxMessageBytes,
    auto_acknowledge: data.autoAcknowledge,
    enabled: data.enabled,
  };
}

export function createMailboxesRepository(db: Db) {
  const byId = async (id: string) =>
    toMailbox(await db.selectFrom('mailboxes').selectAll().where('id', '=', id).executeTakeFirstOrThrow());

  return {
    async list(tenantId: string, page: PageRequest): Promise<{ items: MailboxRecord[]; total: number }> {
      const scope = db.selectFrom('mailboxes').where('tenant_id', '=', tenantId);
      const found = await pageOfList(page, {
        scope,
        order: MAILBOX_ORDER,
        page: (window, afterKey) => inListOrder(scope.selectAll(), MAILBOX_ORDER, window, afterKey).execute(),
        total: async () =>
          (await scope.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count,
      });
      return { items: found.items.map(toMailbox), total: found.total };
    },

    /** The mailbox that the request holding this Idempotency-Key claim created, whatever its tenant. */
    async findByIdempotencyClaim(claim: string): Promise<MailboxRecord | null> {
      const row = await db
        .selectFrom('mailboxes')
        .selectAll()
        .where('idempotency_claim', '=', claim)
        .executeTakeFirst();
      return row ? toMailbox(row) : null;
    },

    async findById(tenantId: string, id: string): Promise<MailboxRecord | null> {
      const row = await db
        .selectFrom('mailboxes')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? toMailbox(row) : null;
    },

    async findForUpdate(tenantId: string, id: string): Promise<MailboxRecord | null> {
      const row = await db
        .selectFrom('mailboxes')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return row ? toMailbox(row) : null;
    },

    /** `idempotencyClaim`: the Idempotency-Key claim of the request creating it, if any (findByIdempotencyClaim). */
    async create(
      tenantId: string,
      data: MailboxWrite & { address: string; imap: ServerSettings; smtp: ServerSettings },
      idempotencyClaim: string | null,
    ): Promise<MailboxRecord> {
      const row = await db
        .insertInto('mailboxes')
        .values({
          ...mailboxColumns(data),
          address: data.address,
          imap: jsonb(data.imap),
          smtp: jsonb(data.smtp),
          tenant_id: tenantId,
          idempotency_claim: idempotencyClaim,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toMailbox(row);
    },

    async update(tenantId: string, id: string, data: MailboxWrite): Promise<MailboxRecord> {
      const row = await db
        .updateTable('mailboxes')
        .set({ ...mailboxColumns(data), updated_at: new Date() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toMailbox(row);
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await db.deleteFrom('mailboxes').where('id', '=', id).where('tenant_id', '=', tenantId).execute();
    },

    /** Makes the mailbox due now (POST /mailboxes/{id}/poll). */
    async dueNow(tenantId: string, id: string): Promise<void> {
      const now = new Date();
      await db
        .updateTable('mailboxes')
        .set({ next_poll_at: now, updated_at: now })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .execute();
    },

    /**
     * Claims one due mailbox for `leaseMs` (SKIP LOCKED: instances never claim the same one), or
     * `id`'s when given and due. Answers null when none is due.
     */
    async claimDue(leaseMs: number, id?: string): Promise<MailboxRecord | null> {
      const only = id ? sql`AND id = ${id}::uuid` : sql``;
      const { rows } = await sql<Selectable<MailboxRow>>`
        UPDATE mailboxes SET locked_until = now() + ${leaseMs} * interval '1 millisecond', last_poll_at = now()
        WHERE id = (SELECT id FROM mailboxes WHERE enabled AND next_poll_at <= now() AND (locked_until IS NULL OR locked_until < now()) ${only}
          ORDER BY next_poll_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`.execute(db);
      return rows[0] ? toMailbox(rows[0]) : null;
    },

    /** Ends a poll: the next one due after the interval, or (failing) after a back-off. */
    async finishPoll(
      id: string,
      outcome: { error: string | null; nextPollAt: Date; processed: number; quarantined: number },
    ): Promise<{ before: MailboxRecord; after: MailboxRecord }> {
      const before = await byId(id);
      const after = await db
        .updateTable('mailboxes')
        .set((eb) => ({
          locked_until: null,
          next_poll_at: outcome.nextPollAt,
          last_error: outcome.error,
          failures: outcome.error === null ? 0 : eb('failures', '+', 1),
          ...(outcome.error === null ? { last_success_at: new Date() } : {}),
          messages_processed: eb('messages_processed', '+', outcome.processed),
          messages_quarantined: eb('messages_quarantined', '+', outcome.quarantined),
          // A poll is no change of the mailbox's settings.
          updated_at: new Date(before.updated_at),
        }))
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { before, after: toMailbox(after) };
    },

    async firstEnabled(tenantId: string): Promise<MailboxRecord | null> {
      const row = await db
        .selectFrom('mailboxes')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('enabled', '=', true)
        .orderBy('created_at', 'asc')
        .limit(1)
        .executeTakeFirst();
      return row ? toMailbox(row) : null;
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
      const row = await db
        .insertInto('inbound_emails')
        .values({
          tenant_id: entry.tenantId,
          mailbox_id: entry.mailboxId,
          message_id: entry.messageId,
          from: entry.from,
          to: entry.to,
          subject: entry.subject,
          size_bytes: entry.sizeBytes,
          raw: entry.raw,
          status: entry.status ?? 'received',
          reason: entry.reason ?? null,
        })
        .onConflict((oc) => oc.columns(['tenant_id', 'message_id']).doNothing())
        .returning(INBOUND_COLUMNS)
        .executeTakeFirst();
      return row ? toInbound(row) : null;
    },

    /** Marks an entry whose processing failed (its transaction rolled back). */
    async finishInbound(id: string, outcome: { status: string; reason: string | null }) {
      await db
        .updateTable('inbound_emails')
        .set({ status: outcome.status, reason: outcome.reason })
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    },

    /**
     * Ends processing an entry: `after` (the entry as the API shows it once processed) written and
     * the event of `head` recording it, in one statement (one round trip per message less).
     */
    async finishInboundRecorded(tenantId: string, after: InboundEmail, head: EventHead): Promise<void> {
      const { rows: recorded } = await sql<{ id: string }>`
        WITH finished AS (
          UPDATE inbound_emails SET status = ${after.status}, reason = ${after.reason}, ticket_id = ${after.ticket_id},
            comment_id = ${after.comment_id}, "from" = ${after.from}, subject = ${after.subject}
          WHERE id = ${after.id}::uuid AND tenant_id = ${tenantId}::uuid
          RETURNING id
        )
        ${eventInsertFrom('finished', tenantId, head, sql`${JSON.stringify(after)}::jsonb`)}
        RETURNING id`.execute(db);
      if (!recorded.length) throw new Error(`inbound e-mail ${after.id} is gone`);
      announceEventRecorded();
    },

    /** Messages left `received` by a poll that ended before processing them. */
    async unprocessed(tenantId: string, mailboxId: string): Promise<{ id: string; raw: Buffer | null }[]> {
      return db
        .selectFrom('inbound_emails')
        .select(['id', 'raw'])
        .where('tenant_id', '=', tenantId)
        .where('mailbox_id', '=', mailboxId)
        .where('status', '=', 'received')
        .orderBy('received_at', 'asc')
        .execute();
    },

    /** The ticket a Message-ID desk received or sent threads to, if any: the latest it sent, else the latest it received. */
    async ticketOfMessageIds(tenantId: string, messageIds: string[]): Promise<string | null> {
      if (!messageIds.length) return null;
      // One statement for both logs: a reply looks its thread up on every message.
      const { rows } = await sql<{ ticket_id: string }>`
        SELECT ticket_id FROM (
          (SELECT ticket_id, 0 AS preference FROM outbound_emails
            WHERE tenant_id = ${tenantId}::uuid AND message_id = ANY(${messageIds}::text[]) ORDER BY created_at DESC LIMIT 1)
          UNION ALL
          (SELECT ticket_id, 1 FROM inbound_emails
            WHERE tenant_id = ${tenantId}::uuid AND message_id = ANY(${messageIds}::text[]) AND ticket_id IS NOT NULL
            ORDER BY received_at DESC LIMIT 1)
        ) found ORDER BY preference LIMIT 1`.execute(db);
      return rows[0]?.ticket_id ?? null;
    },

    /** The Message-IDs of a ticket's thread, oldest first: what a reply's References continue. */
    async threadOf(tenantId: string, ticketId: string): Promise<string[]> {
      const { rows } = await sql<{ message_id: string }>`
        SELECT message_id FROM (
          SELECT message_id, received_at AS at FROM inbound_emails WHERE tenant_id = ${tenantId}::uuid
            AND ticket_id = ${ticketId}::uuid AND status = 'processed'
          UNION ALL
          SELECT message_id, created_at FROM outbound_emails WHERE tenant_id = ${tenantId}::uuid AND ticket_id = ${ticketId}::uuid
        ) thread ORDER BY at`.execute(db);
      return rows.map((row) => row.message_id);
    },

    async queueOutbound(entry: {
      kind?: string;
      tenantId: string;
      ticketId: string;
      mailboxId: string | null;
      commentId: string | null;
      messageId: string;
      from: string;
      to: string[];
      cc: string[];
      subject: string;
      inReplyTo: string | null;
      references: string[];
      body: string;
    }): Promise<OutboundRecord> {
      const row = await db
        .insertInto('outbound_emails')
        .values({
          ...(entry.kind === undefined ? {} : { kind: entry.kind }),
          tenant_id: entry.tenantId,
          ticket_id: entry.ticketId,
          mailbox_id: entry.mailboxId,
          comment_id: entry.commentId,
          message_id: entry.messageId,
          from: entry.from,
          to: entry.to,
          cc: entry.cc,
          subject: entry.subject,
          in_reply_to: entry.inReplyTo,
          references: entry.references,
          body: entry.body,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toOutbound(row);
    },

    /** Claims one due queued mail for `leaseMs` (SKIP LOCKED: one instance sends it). */
    async claimOutbound(leaseMs: number): Promise<OutboundRecord | null> {
      const { rows } = await sql<Selectable<OutboundRow>>`
        UPDATE outbound_emails SET locked_until = now() + ${leaseMs} * interval '1 millisecond', attempts = attempts + 1
        WHERE id = (SELECT id FROM outbound_emails WHERE status = 'queued' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
          ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`.execute(db);
      return rows[0] ? toOutbound(rows[0]) : null;
    },

    async finishOutbound(
      id: string,
      data: { status: string; error?: string | null; nextAttemptAt?: Date; sentAt?: Date },
    ): Promise<OutboundRecord> {
      const row = await db
        .updateTable('outbound_emails')
        .set({
          status: data.status,
          error: data.error,
          next_attempt_at: data.nextAttemptAt,
          sent_at: data.sentAt,
          locked_until: null,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toOutbound(row);
    },

    /** Marks the sent mails of these Message-IDs bounced; answers them. */
    async bounceOutbound(tenantId: string, messageIds: string[]): Promise<OutboundRecord[]> {
      if (!messageIds.length) return [];
      const rows = await db
        .updateTable('outbound_emails')
        .set({ status: 'bounced' })
        .where('tenant_id', '=', tenantId)
        .where('message_id', 'in', messageIds)
        .where('status', 'in', ['sent', 'queued'])
        .returningAll()
        .execute();
      return rows.map(toOutbound);
    },

    async ticketEmails(
      tenantId: string,
      ticketId: string,
    ): Promise<{ inbound: InboundEmail[]; outbound: OutboundRecord[] }> {
      const inbound = await db
        .selectFrom('inbound_emails')
        .select(INBOUND_COLUMNS)
        .where('tenant_id', '=', tenantId)
        .where('ticket_id', '=', ticketId)
        .orderBy('received_at', 'asc')
        .execute();
      const outbound = await db
        .selectFrom('outbound_emails')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('ticket_id', '=', ticketId)
        .orderBy('created_at', 'asc')
        .execute();
      return { inbound: inbound.map(toInbound), outbound: outbound.map(toOutbound) };
    },

    async listInbound(
      tenantId: string,
      filters: InboundFilters,
      page: PageRequest,
    ): Promise<{ items: InboundEmail[]; total: number }> {
      const scope = db.selectFrom('inbound_emails').where('tenant_id', '=', tenantId);
      let filtered = scope;
      if (filters.mailbox_id) filtered = filtered.where('mailbox_id', '=', filters.mailbox_id);
      if (filters.status) filtered = filtered.where('status', '=', filters.status);
      if (filters.message_id) filtered = filtered.where('message_id', '=', filters.message_id.replace(/^<|>$/g, ''));
      const found = await pageOfList(page, {
        scope,
        order: INBOUND_ORDER,
        page: (window, afterKey) =>
          inListOrder(filtered.select(INBOUND_COLUMNS), INBOUND_ORDER, window, afterKey).execute(),
        total: async () =>
          (await filtered.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count,
      });
      return { items: found.items.map(toInbound), total: found.total };
    },

    async findInbound(tenantId: string, id: string): Promise<InboundEmail | null> {
      const row = await db
        .selectFrom('inbound_emails')
        .select(INBOUND_COLUMNS)
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? toInbound(row) : null;
    },

    /** The entry and its bytes, locked for the rest of the transaction (a replay). */
    async lockInbound(tenantId: string, id: string): Promise<{ entry: InboundEmail; raw: Buffer | null } | null> {
      const row = await db
        .selectFrom('inbound_emails')
        .select([...INBOUND_COLUMNS, 'raw'])
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return row ? { entry: toInbound(row), raw: row.raw ? Buffer.from(row.raw) : null } : null;
    },

    /** Whether `address` was sent an acknowledgement since `since`; serialised per tenant and address for the rest of the transaction. */
    async acknowledgedSince(tenantId: string, address: string, since: Date): Promise<boolean> {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`ack:${tenantId}:${address}`}, 0))`.execute(db);
      const found = await sql<{ id: string }>`
        SELECT id FROM outbound_emails WHERE tenant_id = ${tenantId}::uuid AND kind = 'acknowledgement'
          AND ${address} = ANY("to") AND created_at > ${since} LIMIT 1`.execute(db);
      return found.rows.length > 0;
    },

    async rawOf(tenantId: string, id: string): Promise<Buffer | null | undefined> {
      const row = await db
        .selectFrom('inbound_emails')
        .select('raw')
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? row.raw : undefined;
    },
  };
}

export type MailboxesRepository = ReturnType<typeof createMailboxesRepository>;
