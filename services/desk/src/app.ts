import type { Redis } from 'ioredis';
import { advisoryResourceLock, rawSqlOverKysely } from '@msp/db';
import { sql } from 'kysely';
import { createAuth, registerWhoAmI, SCOPES, staticKeys } from '@msp/auth';
import {
  API_BASE_PATH,
  createRateLimiter,
  createServiceApp,
  ipKeyGenerator,
  STREAMED_FILE_IDLE_TIMEOUT_MS,
  type Logger,
} from '@msp/http';
import { createdUnderClaim, createServiceEvents, type DispatcherOptions } from '@msp/events';
import { createOutbound, type Outbound } from '@msp/outbound';
import type { SecretBox } from '@msp/secrets';
import { deskEvents } from './events/desk-events';
import { createApiClientsRepository } from './auth/api-clients.repository';
import {
  createClientGuard,
  DEFAULT_CLIENT_FAILURE_LIMIT,
  DEFAULT_CLIENT_FAILURE_WINDOW_SEC,
} from './auth/client-guard';
import { createApiClientsAdminRepository } from './api-clients/api-clients.repository';
import { registerApiClientRoutes } from './api-clients/api-clients.routes';
import { createApiClientsService } from './api-clients/api-clients.service';
import { createRefreshTokensRepository } from './auth/refresh-tokens.repository';
import type { VerificationKey } from './auth/previous-keys';
import type { SecretVerifier } from './auth/secrets';
import type { SigningKey } from './auth/signing-key';
import { tokenEndpointCors } from './auth/token-cors';
import { registerTokenRoutes } from './auth/token.routes';
import { createTokenService } from './auth/token.service';
import { registerWellKnownRoutes, serverMetadata } from './auth/well-known.routes';
import type { DeskDatabase } from './db';
import { createStore } from './store';
import { publicMailbox } from './mailboxes/mailboxes.repository';
import { registerCalendarRoutes } from './calendars/calendars.routes';
import { createCalendarsService } from './calendars/calendars.service';
import { registerClientRoutes } from './clients/clients.routes';
import { createClientsService } from './clients/clients.service';
import { registerAttachmentRoutes } from './attachments/attachments.routes';
import { createAttachmentsService } from './attachments/attachments.service';
import { registerContactRoutes } from './contacts/contacts.routes';
import { createContactsService } from './contacts/contacts.service';
import { createImapReader } from './mailboxes/imap-reader';
import { createInboundService } from './mailboxes/inbound.service';
import type { MailReader } from './mailboxes/mail-reader';
import { createSmtpSender, type MailSender } from './mailboxes/mail-sender';
import { createOutboundSender } from './mailboxes/outbound';
import { createOAuthTokens } from './mailboxes/oauth-tokens';
import { registerMailboxRoutes } from './mailboxes/mailboxes.routes';
import { createMailboxesService } from './mailboxes/mailboxes.service';
import { registerCommentRoutes } from './comments/comments.routes';
import { createCommentsService } from './comments/comments.service';
import { registerSlaPolicyRoutes } from './sla-policies/sla-policies.routes';
import { createSlaPoliciesService } from './sla-policies/sla-policies.service';
import { createSlaBreachJob } from './sla/sla-breach-job';
import { createSlaService } from './sla/sla.service';
import { registerTicketRoutes } from './tickets/tickets.routes';
import { createTicketsService } from './tickets/tickets.service';
import { registerUserRoutes } from './users/users.routes';
import { createUsersService } from './users/users.service';
import { createTimeExportRepository } from './time-entries/time-export.repository';
import { registerTimeEntryRoutes } from './time-entries/time-entries.routes';
import { createTimeEntriesService } from './time-entries/time-entries.service';

/** The calendar zone of time entries' dates until tenants have calendars of their own. */
export const DEFAULT_TIME_ZONE = 'Europe/Berlin';

export interface DeskSettings {
  issuer: string;
  audience: string;
  rateLimitPerMinute: number;
  tokenRateLimitPerMinute: number;
  /** Failed authentications per client id, from all addresses, per window (TOKEN_CLIENT_FAILURE_LIMIT, default 20). */
  tokenClientFailureLimit?: number;
  /** That window, in seconds (TOKEN_CLIENT_FAILURE_WINDOW_SEC, default 900). */
  tokenClientFailureWindowSec?: number;
  refreshTokenTtlDays: number;
  bodyLimit?: string;
  trustProxy?: string;
  /** Origins whose pages may call the whole API from a browser (API_CORS_ORIGINS). */
  apiCorsOrigins?: string[];
  /** Redis key prefix of the rate limiter (tests isolate themselves with it). */
  rateLimitPrefix?: string;
  /** Origins whose pages may call the token endpoint (CORS_ORIGINS); none when not given. */
  corsOrigins?: string[];
  /** The webhook dispatcher's pace (WEBHOOK_CONCURRENCY; tests shorten the retry schedule). */
  webhooks?: Pick<DispatcherOptions, 'concurrency' | 'pollMs' | 'retryDelaysMs' | 'disableAfterMs'>;
  /** EVENTS_RETENTION_DAYS and EVENTS_RETENTION_INTERVAL_MS: the events retention sweep (none without it). */
  eventsRetention?: { days: number; intervalMs: number };
  /** How often due mailboxes are looked for (tests shorten it); default 5 s. Each mailbox has its own poll_interval_seconds. */
  mailPollSweepMs?: number;
  /** How often queued replies are looked for (tests shorten it); default 2 s. */
  mailSendSweepMs?: number;
  /** How often the SLA breach sweep runs (SLA_SWEEP_INTERVAL_MS); default 15 s. */
  slaSweepIntervalMs?: number;
  /** IANA zone of the tenants' calendar days (DEFAULT_TIME_ZONE): a time entry's default date is today there. Europe/Berlin when not given. */
  timeZone?: string;
  /** The time export's idle timeout (EXPORT_IDLE_TIMEOUT_MS; 30 s when not given) and its pool's acquire timeout (EXPORT_POOL_ACQUIRE_TIMEOUT_MS; 5 s). */
  exports?: { idleTimeoutMs?: number; acquireTimeoutMs?: number };
}

export interface DeskDeps {
  /** desk's database (createDb): Kysely over its pool, and `reads` (the replica with DATABASE_READ_URL). */
  database: DeskDatabase;
  /** Calls to webhook endpoints; outside production by default (no address refused). */
  outbound?: Outbound;
  /** Seals and opens webhook signing secrets (webhookSecretsFromConfig: WEBHOOK_ENCRYPTION_KEY). */
  webhookSecrets: SecretBox;
  redis?: Redis;
  logger: Logger;
  signingKey: SigningKey;
  /** Keys desk signed with before a rotation: served in the JWKS and accepted by desk itself. */
  previousKeys?: VerificationKey[];
  settings: DeskSettings;
  /** Reads mailboxes; IMAP (imapflow) unless given. */
  mailReader?: MailReader;
  /** Sends replies; SMTP (nodemailer) unless given. */
  mailSender?: MailSender;
  /** How client secrets are checked against their hashes: scrypt (tests observe the calls). */
  verifySecret?: SecretVerifier;
}

/**
 * The app, the webhook dispatcher and the SLA breach sweep (start them with the service, stop them
 * on shutdown), and `close()` for what it opened itself (nothing now: the database is the caller's).
 */
export function createDeskApp({
  database,
  outbound,
  webhookSecrets,
  redis,
  logger,
  signingKey,
  previousKeys = [],
  settings,
  verifySecret,
  mailReader,
  mailSender,
}: DeskDeps) {
  const { db } = database;
  // desk trusts its own key directly: no HTTP round trip to itself.
  const auth = createAuth({
    issuer: settings.issuer,
    audience: settings.audience,
    keys: staticKeys([...previousKeys, signingKey].map((key) => [key.kid, key.publicKey])),
  });
  const prefix = settings.rateLimitPrefix ?? 'rl:desk:';
  const tokens = createTokenService({
    clients: createApiClientsRepository(db),
    refreshTokens: createRefreshTokensRepository(db),
    signingKey,
    issuer: settings.issuer,
    audience: settings.audience,
    refreshTokenTtlDays: settings.refreshTokenTtlDays,
    logger,
    // Against guessing from many addresses: failures per client id, shared in Redis.
    guard: createClientGuard({
      redis,
      prefix: `${prefix}token-client:`,
      failureLimit: settings.tokenClientFailureLimit ?? DEFAULT_CLIENT_FAILURE_LIMIT,
      windowMs: (settings.tokenClientFailureWindowSec ?? DEFAULT_CLIENT_FAILURE_WINDOW_SEC) * 1000,
      logger,
    }),
    verifySecret,
  });
  // Against secret guessing: per address and client id, far below the API limit.
  const tokenLimiter = createRateLimiter({
    limit: settings.tokenRateLimitPerMinute,
    redis,
    prefix: `${prefix}token:`,
    name: 'desk-token',
    logger,
    keyGenerator: (req) => {
      const body = (req.body ?? {}) as { client_id?: unknown };
      const basic = /^Basic\s+(.+)$/i.exec(req.get('authorization') ?? '');
      const clientId = basic
        ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':')[0]
        : typeof body.client_id === 'string'
          ? body.client_id
          : '';
      return `${ipKeyGenerator(req.ip ?? 'unknown')}:${clientId}`;
    },
  });

  const metadataPath = `/.well-known/oauth-authorization-server${new URL(settings.issuer).pathname.replace(/\/$/, '')}`;
  const metadata = serverMetadata(settings.issuer);

  // The export streams from `reads` (the read replica when there is one), a few exports at a time.
  const timeExports = createTimeExportRepository(database.reads, {
    acquireTimeoutMs: settings.exports?.acquireTimeoutMs,
  });

  const store = createStore(database);
  const events = createServiceEvents({
    // @msp/events still reads and writes through the raw-SQL surface; over the same pool.
    db: rawSqlOverKysely(db),
    logger,
    catalogue: deskEvents,
    outbound: outbound ?? createOutbound(),
    secrets: webhookSecrets,
    dispatcher: settings.webhooks,
    retention: settings.eventsRetention,
    // A mailbox records no event: its row keeps the claim of the request that created it.
    createdWithoutEvents: {
      mailbox: createdUnderClaim((claim) => store.mailboxes.findByIdempotencyClaim(claim), publicMailbox),
    },
  });

  const sla = createSlaService(store);
  // Every instance takes the same lock for a write to one resource: If-Match holds across replicas.
  // The tickets service takes the same locks for the tickets a bulk change or a merge writes.
  const resourceLock = advisoryResourceLock(database.pool);
  const slaBreaches = createSlaBreachJob(() => sla.sweepBreaches(), settings.slaSweepIntervalMs ?? 15_000, logger);
  // Mailbox passwords are sealed with the same key as the webhook secrets (WEBHOOK_ENCRYPTION_KEY).
  // XOAUTH2 tokens for IMAP and SMTP logins, fetched through the same outbound rules as the webhooks.
  const mailTokens = createOAuthTokens(outbound ?? createOutbound());
  const mailboxes = createMailboxesService({
    store,
    secrets: webhookSecrets,
    reader: mailReader ?? createImapReader(),
    inbound: createInboundService(store, sla, logger),
    outbound: outbound ?? createOutbound(),
    tokens: mailTokens,
    logger,
  });
  // The same durable, claim-based loop as the SLA sweep: what is due lives in mailboxes.next_poll_at,
  // and a claim (FOR UPDATE SKIP LOCKED, a lease) makes each poll run on one instance.
  const mailPolls = createSlaBreachJob(
    () => mailboxes.pollDue(),
    settings.mailPollSweepMs ?? 5_000,
    logger,
    'mailbox poll',
  );
  // Replies go out the same way: queued in the comment's transaction, claimed and sent by one instance.
  const mailSends = createSlaBreachJob(
    () =>
      createOutboundSender({
        store,
        sender: mailSender ?? createSmtpSender(),
        secrets: webhookSecrets,
        logger,
        tokens: mailTokens,
      }).sendDue(),
    settings.mailSendSweepMs ?? 2_000,
    logger,
    'mail send',
  );

  const service = createServiceApp({
    service: 'desk',
    logger,
    effectOfIdempotencyClaim: events.effectOfClaim,
    openapi: {
      title: 'Helpdesk API (desk)',
      version: '1.0.0',
      description:
        'Tickets with comments and a status machine, clients, users (technicians), and the OAuth ' +
        '2.0 token endpoint that issues the JWTs every service accepts. ' +
        'Business-hours calendars and SLA policies, whose clocks every ticket opened under a policy shows in `sla`. ' +
        'Reading needs `read:tickets` (users: `read:users`), writing `write:tickets`, creating and deleting ' +
        'users, calendars and SLA policies `admin:tenant`, which satisfies every scope.',
      tokenUrl: `${settings.issuer}/auth/token`,
      scopes: SCOPES,
      webhooks: events.webhookDocs,
    },
    readinessChecks: {
      database: () => sql`SELECT 1`.execute(db),
    },
    // Reported, not gating: without the replica only the lists and the export fail, with a 503.
    optionalReadinessChecks:
      database.reads === db ? {} : { database_reads: () => sql`SELECT 1`.execute(database.reads) },
    rateLimit: { limit: settings.rateLimitPerMinute, redis, prefix },
    resourceLock,
    authenticate: auth.authenticate,
    requireScope: auth.requireScope,
    bodyLimit: settings.bodyLimit,
    trustProxy: settings.trustProxy,
    corsOrigins: settings.apiCorsOrigins,
    rootRoutes: (app) => {
      // Before the API router: a preflight must not meet the 405 of an unknown method.
      app.use(`${API_BASE_PATH}/auth/token`, tokenEndpointCors(settings.corsOrigins ?? []));
      // RFC 8414 §3: the metadata also lives where generic OAuth clients look for it.
      app.get(metadataPath, (_req, res) => {
        res.set('Cache-Control', 'public, max-age=300').json(metadata);
      });
    },
    routes: (api) => {
      registerTokenRoutes(api, { tokens, tokenLimiter });
      registerWellKnownRoutes(api, { signingKey, previousKeys, issuer: settings.issuer });
      registerWhoAmI(api);
      registerTicketRoutes(api, createTicketsService(store, sla, resourceLock));
      registerCommentRoutes(api, createCommentsService(store, sla));
      registerClientRoutes(api, createClientsService(createStore(database)));
      registerContactRoutes(api, createContactsService(store));
      registerMailboxRoutes(api, mailboxes);
      registerAttachmentRoutes(api, createAttachmentsService(store));
      registerUserRoutes(api, createUsersService(createStore(database)));
      registerTimeEntryRoutes(api, {
        timeEntries: createTimeEntriesService(createStore(database), timeExports, {
          timeZone: settings.timeZone ?? DEFAULT_TIME_ZONE,
        }),
        logger,
        idleTimeoutMs: settings.exports?.idleTimeoutMs ?? STREAMED_FILE_IDLE_TIMEOUT_MS,
      });
      registerApiClientRoutes(api, createApiClientsService(createApiClientsAdminRepository(db)));
      registerCalendarRoutes(api, createCalendarsService(store));
      registerSlaPolicyRoutes(api, createSlaPoliciesService(store));
      events.registerRoutes(api);
    },
  });
  return {
    ...service,
    dispatcher: events.dispatcher,
    eventsRetention: events.retention,
    slaBreaches,
    mailPolls,
    mailSends,
    close: async () => undefined,
  };
}
