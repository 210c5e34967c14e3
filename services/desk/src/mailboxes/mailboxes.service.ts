import { conflict, currentContext, notFound, unprocessable, type Logger, type PageRequest } from '@msp/http';
import type { Outbound } from '@msp/outbound';
import type { SecretBox } from '@msp/secrets';
import { unlessDuplicate } from '../db';
import type { Repositories, Store } from '../store';
import type { InboundService } from './inbound.service';
import { toTicketEmail, type TicketEmail } from './outbound';
import type { MailReader } from './mail-reader';
import type {
  InboundFilters,
  InboundReplay,
  Mailbox,
  MailboxChanges,
  MailboxHealth,
  NewMailbox,
} from './mailbox.schemas';
import { publicMailbox, type MailboxRecord, type MailboxWrite, type ServerSettings } from './mailboxes.repository';
import type { OAuthTokens, StoredOAuth2 } from './oauth-tokens';

type OAuth2Input = { token_url?: string; client_id?: string; client_secret?: string; scope?: string | null };

/** XOAUTH2 settings as stored: merged into `stored` (a JSON merge patch), the client secret sealed; null turns them off. */
function oauth2Of(
  secrets: SecretBox,
  stored: StoredOAuth2 | null,
  given: OAuth2Input | null | undefined,
): StoredOAuth2 | null {
  if (given === undefined) return stored;
  if (given === null) return null;
  const merged = {
    token_url: given.token_url ?? stored?.token_url,
    client_id: given.client_id ?? stored?.client_id,
    scope: given.scope !== undefined ? given.scope : (stored?.scope ?? null),
    secret: given.client_secret !== undefined ? secrets.seal(given.client_secret) : (stored?.secret ?? null),
  };
  if (!merged.token_url || !merged.client_id) {
    const errors = [
      ...(merged.token_url ? [] : [{ field: 'oauth2.token_url', message: 'is required to turn XOAUTH2 on' }]),
      ...(merged.client_id ? [] : [{ field: 'oauth2.client_id', message: 'is required to turn XOAUTH2 on' }]),
    ];
    throw unprocessable('XOAUTH2 needs token_url and client_id.', { code: 'validation-error', errors });
  }
  return merged as StoredOAuth2;
}

const mailboxNotFound = () => notFound('No mailbox with this id exists in your tenant.');
const addressTaken = () =>
  conflict('Your tenant already has a mailbox of this address.', { code: 'duplicate-mailbox' });
/** How long one poll may hold its claim before another instance may take the mailbox over. */
const POLL_LEASE_MS = 5 * 60_000;
/** The longest a failing mailbox waits between polls. */
const MAX_BACKOFF_MS = 15 * 60_000;

async function assertClient(tx: Repositories, tenantId: string, clientId: string | null | undefined) {
  if (clientId && !(await tx.clients.exists(tenantId, clientId))) {
    const message = 'does not name a client of your tenant';
    throw unprocessable(`default_client_id ${message}.`, {
      code: 'unknown-reference',
      errors: [{ field: 'default_client_id', message }],
    });
  }
}

function settingsWrite(input: Omit<Partial<NewMailbox>, 'imap' | 'smtp'>): MailboxWrite {
  return {
    name: input.name,
    folder: input.folder,
    processedFolder: input.processed_folder,
    pollIntervalSeconds: input.poll_interval_seconds,
    defaultClientId: input.default_client_id,
    unknownSender: input.unknown_sender,
    closedTicketPolicy: input.closed_ticket_policy,
    reopenWithinDays: input.reopen_within_days,
    maxMessageBytes: input.max_message_bytes,
    autoAcknowledge: input.auto_acknowledge,
    enabled: input.enabled,
  };
}

export interface MailboxPollerDeps {
  store: Store;
  secrets: SecretBox;
  reader: MailReader;
  inbound: InboundService;
  outbound: Outbound;
  /** XOAUTH2 access tokens (the client credentials grant), fetched through `outbound`. */
  tokens: OAuthTokens;
  logger: Logger;
}

export function createMailboxesService({
  store,
  secrets,
  reader,
  inbound,
  outbound,
  tokens,
  logger,
}: MailboxPollerDeps) {
  async function record(tenantId: string, id: string): Promise<MailboxRecord> {
    const mailbox = await store.mailboxes.findById(tenantId, id);
    if (!mailbox) throw mailboxNotFound();
    return mailbox;
  }

  /** An XOAUTH2 login's token, or undefined for a password login. */
  async function accessTokenOf(
    mailboxId: string,
    side: 'imap' | 'smtp',
    oauth2: StoredOAuth2 | null,
  ): Promise<string | undefined> {
    if (!oauth2) return undefined;
    return tokens.accessToken(`${mailboxId}:${side}`, oauth2, oauth2.secret ? secrets.open(oauth2.secret) : '');
  }

  /** Polls one claimed mailbox: every unseen message stored, flagged and processed; failures back off. */
  async function pollClaimed(mailbox: MailboxRecord): Promise<void> {
    let processed = 0;
    let quarantined = 0;
    let error: string | null = null;
    try {
      await outbound.check(
        `http://${mailbox.imap.host.includes(':') ? `[${mailbox.imap.host}]` : mailbox.imap.host}:${mailbox.imap.port}/`,
      );
      const server = {
        ...mailbox.imap,
        password: mailbox.imapSecret ? secrets.open(mailbox.imapSecret) : '',
        accessToken: await accessTokenOf(mailbox.id, 'imap', mailbox.imapOAuth),
      };
      // Left `received` by a poll that ended between storing and processing: processed first.
      for (const left of await store.mailboxes.unprocessed(mailbox.tenantId, mailbox.id)) {
        const entry = await store.mailboxes.findInbound(mailbox.tenantId, left.id);
        if (entry && left.raw) await inbound.process(mailbox, entry, left.raw);
      }
      await reader.readUnseen(
        server,
        { folder: mailbox.folder, processedFolder: mailbox.processed_folder, maxBytes: mailbox.max_message_bytes },
        async (batch) => {
          // In the order read: a reply in the same batch as its original threads into it.
          const stored = inbound.storeInOrder(mailbox, batch);
          for (const [index, fetched] of batch.entries()) {
            const entry = await stored[index];
            if (!entry || entry.status !== 'received' || !fetched.raw) continue;
            const outcome = await inbound.process(mailbox, entry, fetched.raw);
            if (outcome.status === 'processed') processed++;
            if (outcome.status === 'quarantined') quarantined++;
          }
        },
      );
    } catch (caught) {
      error = caught instanceof Error ? caught.message : String(caught);
      logger.warn('mailbox poll failed', { mailbox_id: mailbox.id, error });
      // A token the server refused (revoked early) is not tried again: the next poll fetches one.
      if (mailbox.imapOAuth) tokens.forget(`${mailbox.id}:imap`);
    }
    const delay =
      error === null
        ? mailbox.poll_interval_seconds * 1000
        : Math.min(MAX_BACKOFF_MS, mailbox.poll_interval_seconds * 1000 * 2 ** Math.min(mailbox.failures, 10));
    const { before, after } = await store.mailboxes.finishPoll(mailbox.id, {
      error,
      nextPollAt: new Date(Date.now() + delay),
      processed,
      quarantined,
    });
    if (before.health.status !== after.health.status) {
      const type = after.health.status === 'failing' ? 'mailbox.failing' : 'mailbox.recovered';
      await store.transaction((tx) =>
        tx.events.record({
          type,
          tenantId: after.tenantId,
          resourceType: 'mailbox',
          resourceId: after.id,
          object: after.health,
        }),
      );
    }
  }

  const service = {
    async list(tenantId: string, page: PageRequest) {
      const found = await store.mailboxes.list(tenantId, page);
      return { items: found.items.map(publicMailbox), total: found.total };
    },

    async get(tenantId: string, id: string): Promise<Mailbox> {
      return publicMailbox(await record(tenantId, id));
    },

    async health(tenantId: string, id: string): Promise<MailboxHealth> {
      return (await record(tenantId, id)).health;
    },

    create(tenantId: string, input: NewMailbox): Promise<Mailbox> {
      const created = store.transaction(async (tx) => {
        await assertClient(tx, tenantId, input.default_client_id);
        const { password: imapPassword, oauth2: imapOAuth, ...imap } = input.imap;
        const { password: smtpPassword, oauth2: smtpOAuth, ...smtp } = input.smtp;
        const mailbox = await tx.mailboxes.create(
          tenantId,
          {
            ...settingsWrite(input),
            address: input.address.toLowerCase(),
            imap: { ...imap, oauth2: oauth2Of(secrets, null, imapOAuth) } as ServerSettings,
            imapSecret: imapPassword ? secrets.seal(imapPassword) : null,
            smtp: {
              ...smtp,
              username: smtp.username ?? null,
              oauth2: oauth2Of(secrets, null, smtpOAuth),
            } as ServerSettings,
            smtpSecret: smtpPassword ? secrets.seal(smtpPassword) : null,
          },
          currentContext()?.idempotencyClaim ?? null,
        );
        return publicMailbox(mailbox);
      });
      return unlessDuplicate(created, addressTaken);
    },

    /** A JSON merge patch: `imap` and `smtp` merge into the stored settings; a password given is sealed anew. */
    update(tenantId: string, id: string, changes: MailboxChanges): Promise<Mailbox> {
      const updated = store.transaction(async (tx) => {
        const mailbox = await tx.mailboxes.findForUpdate(tenantId, id);
        if (!mailbox) throw mailboxNotFound();
        await assertClient(tx, tenantId, changes.default_client_id);
        const write: MailboxWrite = { ...settingsWrite(changes), address: changes.address?.toLowerCase() };
        if (changes.imap) {
          const { password, oauth2, ...rest } = changes.imap;
          const { host, port, tls, username } = mailbox.imap;
          write.imap = {
            host,
            port,
            tls,
            username,
            ...rest,
            oauth2: oauth2Of(secrets, mailbox.imapOAuth, oauth2),
          } as ServerSettings;
          if (password !== undefined) write.imapSecret = secrets.seal(password);
        }
        if (changes.smtp) {
          const { password, oauth2, ...rest } = changes.smtp;
          const { host, port, tls, username } = mailbox.smtp;
          write.smtp = {
            host,
            port,
            tls,
            username,
            ...rest,
            oauth2: oauth2Of(secrets, mailbox.smtpOAuth, oauth2),
          } as ServerSettings;
          if (password !== undefined) write.smtpSecret = secrets.seal(password);
        }
        return publicMailbox(await tx.mailboxes.update(tenantId, id, write));
      });
      return unlessDuplicate(updated, addressTaken);
    },

    async delete(tenantId: string, id: string): Promise<void> {
      await record(tenantId, id);
      await store.mailboxes.delete(tenantId, id);
    },

    /** Makes the mailbox due and polls it now unless another poll of it holds its claim. */
    async pollNow(tenantId: string, id: string): Promise<void> {
      await record(tenantId, id);
      await store.mailboxes.dueNow(tenantId, id);
      void service
        .pollDue(id)
        .catch((error: unknown) => logger.error('mailbox poll failed', { mailbox_id: id, error: String(error) }));
    },

    /** Polls the due mailboxes (or `id` alone), each claimed by one instance at a time; answers how many. */
    async pollDue(id?: string): Promise<number> {
      let polled = 0;
      for (;;) {
        const claimed = await store.mailboxes.claimDue(POLL_LEASE_MS, id);
        if (!claimed) return polled;
        await pollClaimed(claimed);
        polled++;
        if (id) return polled;
      }
    },

    /** A ticket's messages in and out, oldest first. */
    async ticketEmails(tenantId: string, ticketId: string): Promise<TicketEmail[]> {
      if (!(await store.tickets.findById(tenantId, ticketId)))
        throw notFound('No ticket with this id exists in your tenant.');
      const { inbound, outbound } = await store.mailboxes.ticketEmails(tenantId, ticketId);
      const received: TicketEmail[] = inbound.map((row) => ({
        id: row.id,
        direction: 'inbound',
        message_id: row.message_id,
        from: row.from,
        to: row.to ?? [],
        cc: [],
        subject: row.subject,
        status: 'received',
        error: null,
        created_at: row.received_at,
      }));
      return [...received, ...outbound.map(toTicketEmail)].sort((a, b) =>
        a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0,
      );
    },

    listInbound(tenantId: string, filters: InboundFilters, page: PageRequest) {
      return store.mailboxes.listInbound(tenantId, filters, page);
    },

    async getInbound(tenantId: string, id: string) {
      const entry = await store.mailboxes.findInbound(tenantId, id);
      if (!entry) throw notFound('No inbound e-mail with this id exists in your tenant.');
      return entry;
    },

    replayInbound(tenantId: string, id: string, input: InboundReplay) {
      return inbound.replay(tenantId, id, input);
    },

    async rawInbound(tenantId: string, id: string): Promise<Buffer> {
      const raw = await store.mailboxes.rawOf(tenantId, id);
      if (raw === undefined) throw notFound('No inbound e-mail with this id exists in your tenant.');
      if (raw === null)
        throw notFound("The message was not stored: it was larger than its mailbox's max_message_bytes.", {
          code: 'raw-not-stored',
        });
      return raw;
    },
  };
  return service;
}

export type MailboxesService = ReturnType<typeof createMailboxesService>;
