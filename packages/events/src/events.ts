import type { ApiRouter, Logger } from '@msp/http';
import type { Outbound } from '@msp/outbound';
import type { SecretBox } from '@msp/secrets';
import { createAuditRepository } from './audit/audit.repository';
import { registerAuditRoutes } from './audit/audit.routes';
import type { EventCatalogue } from './catalogue';
import { createDeliveriesRepository } from './delivery/deliveries.repository';
import { createDispatcher, type DispatcherOptions } from './delivery/dispatcher';
import { confirmDurable, eventEffectOfClaim, type ClaimEffect } from './record';
import { createEventsRetention, type EventsRetentionOptions } from './retention';
import type { TransactionalSql } from './sql';
import { createWebhooksRepository } from './webhooks/webhooks.repository';
import { registerWebhookRoutes } from './webhooks/webhooks.routes';
import { createWebhooksService } from './webhooks/webhooks.service';

export interface ServiceEventsOptions {
  /** The service's Prisma client. */
  db: TransactionalSql;
  logger: Logger;
  catalogue: EventCatalogue;
  outbound: Outbound;
  /** Seals and opens the webhooks' signing secrets: webhookSecretsFromConfig(config). */
  secrets: SecretBox;
  dispatcher?: Pick<DispatcherOptions, 'concurrency' | 'pollMs' | 'retryDelaysMs' | 'disableAfterMs'>;
  /** EVENTS_RETENTION_DAYS and EVENTS_RETENTION_INTERVAL_MS; without it, no sweep runs (interval 0). */
  retention?: Pick<EventsRetentionOptions, 'days' | 'intervalMs' | 'batchSize' | 'pauseMs'>;
  /**
   * The creates that record no event, by the resource type of their route: the resource created
   * under an Idempotency-Key claim, which its row keeps (effectOfClaim).
   */
  createdWithoutEvents?: Record<string, (claim: string) => Promise<ClaimEffect | undefined>>;
}

export interface ServiceDispatcherOptions extends Pick<
  DispatcherOptions,
  'concurrency' | 'pollMs' | 'retryDelaysMs' | 'disableAfterMs'
> {
  db: TransactionalSql;
  logger: Logger;
  outbound: Outbound;
  secrets: SecretBox;
}

/** The dispatcher of a service's database: what a process starts (and what tests start as "another process"). */
export function createServiceDispatcher({ db, ...options }: ServiceDispatcherOptions) {
  return createDispatcher({ deliveries: createDeliveriesRepository(db), ...options });
}

/** The OpenAPI tags of the routes below. */
export const EVENT_TAGS = [
  {
    name: 'Webhooks',
    description: "Endpoints subscribed to this service's events (Standard Webhooks), and their deliveries.",
  },
  { name: 'Audit', description: 'Every change, who made it and when: the event stream read back.' },
];

/**
 * What a service needs to publish its events: the webhook and audit routes, the OpenAPI entries
 * of its event payloads, and the dispatcher and the retention sweep to start with the service and
 * stop with it.
 */
export function createServiceEvents(options: ServiceEventsOptions) {
  const dispatcher = createServiceDispatcher({
    db: options.db,
    outbound: options.outbound,
    secrets: options.secrets,
    logger: options.logger,
    ...options.dispatcher,
  });
  const webhooks = createWebhooksService({
    webhooks: createWebhooksRepository(options.db),
    catalogue: options.catalogue,
    outbound: options.outbound,
    secrets: options.secrets,
    wake: dispatcher.wake,
  });
  const audit = createAuditRepository(options.db);
  const retention = createEventsRetention({
    db: options.db,
    logger: options.logger,
    days: 400,
    intervalMs: 0,
    ...options.retention,
  });
  return {
    dispatcher,
    retention,
    tags: EVENT_TAGS,
    webhookDocs: options.catalogue.webhookDocs(),
    /**
     * For @msp/http's Idempotency-Key: what a request whose instance died had committed, from its
     * events or, for a create that records none, from its resource's row; answered only once that
     * change would survive a failover.
     */
    async effectOfClaim(claim: string, resourceType: string): Promise<ClaimEffect | undefined> {
      const effect =
        (await eventEffectOfClaim(options.db, claim, resourceType)) ??
        (await options.createdWithoutEvents?.[resourceType]?.(claim));
      if (effect) await confirmDurable(options.db, claim);
      return effect;
    },
    registerRoutes(api: ApiRouter) {
      registerWebhookRoutes(api, webhooks);
      registerAuditRoutes(api, audit, options.catalogue.names);
    },
  };
}

export type ServiceEvents = ReturnType<typeof createServiceEvents>;
