import { conflict, notFound, unprocessable, type PageRequest } from '@msp/http';
import { OutboundBlockedError, type Outbound } from '@msp/outbound';
import type { SecretBox } from '@msp/secrets';
import { TEST_EVENT, type EventCatalogue } from '../catalogue';
import { newSigningSecret } from '../signing';
import {
  RECOVER_MAX_DAYS,
  type DeliveryStatus,
  type NewWebhook,
  type WebhookChanges,
  type WebhookRecovery,
} from './webhook.schemas';
import type { WebhooksRepository } from './webhooks.repository';

const missing = () => notFound('No webhook with this id exists in your tenant.');
const missingDelivery = () => notFound('No delivery with this id exists for this webhook.');

export interface WebhooksServiceDeps {
  webhooks: WebhooksRepository;
  catalogue: EventCatalogue;
  /** The address policy of calls to the outside world (no internal addresses in production). */
  outbound: Outbound;
  /** Seals the signing secrets before they are stored (WEBHOOK_ENCRYPTION_KEY). */
  secrets: SecretBox;
  /** Wakes the dispatcher: a delivery is due now. */
  wake: () => void;
}

export function createWebhooksService({ webhooks, catalogue, outbound, secrets, wake }: WebhooksServiceDeps) {
  /** The names must be the service's (or `*` alone); the URL must be one the service may call. */
  async function assertSubscribable(input: { url?: string; events?: string[] }) {
    const errors: { field: string; message: string }[] = [];
    if (input.events) {
      const unknown = input.events.filter((name) => name !== '*' && !catalogue.has(name));
      if (unknown.length)
        errors.push({
          field: 'events',
          message: `names no event of this service: ${unknown.join(', ')} (known: ${catalogue.names.join(', ')}, or *)`,
        });
      else if (input.events.includes('*') && input.events.length > 1)
        errors.push({ field: 'events', message: 'must be ["*"] alone when it holds *' });
    }
    if (input.url) {
      try {
        await outbound.check(input.url);
      } catch (error) {
        if (!(error instanceof OutboundBlockedError)) throw error;
        errors.push({ field: 'url', message: `cannot be called: ${error.message}` });
      }
    }
    if (errors.length)
      throw unprocessable(errors.map((e) => `${e.field} ${e.message}`).join('; ') + '.', {
        code: 'webhook-not-subscribable',
        errors,
      });
  }

  async function get(tenantId: string, id: string) {
    const webhook = await webhooks.find(tenantId, id);
    if (!webhook) throw missing();
    return webhook;
  }

  return {
    get,

    list(tenantId: string, page: PageRequest) {
      return webhooks.list(tenantId, page);
    },

    /** The secret is answered once, here; it is stored sealed, never shown again nor logged. */
    async create(tenantId: string, input: NewWebhook) {
      await assertSubscribable(input);
      const secret = newSigningSecret();
      const webhook = await webhooks.create(tenantId, {
        url: input.url,
        events: input.events,
        description: input.description ?? null,
        secret: secrets.seal(secret),
      });
      return { ...webhook, secret };
    },

    async update(tenantId: string, id: string, changes: WebhookChanges) {
      await get(tenantId, id);
      await assertSubscribable(changes);
      const updated = await webhooks.update(tenantId, id, changes);
      if (!updated) throw missing();
      if (updated.enabled) wake();
      return updated;
    },

    async remove(tenantId: string, id: string) {
      if (!(await webhooks.remove(tenantId, id))) throw missing();
    },

    /** Queues a `webhook.test` message to the endpoint, signed like any other. */
    async sendTest(tenantId: string, id: string) {
      const webhook = await get(tenantId, id);
      if (!webhook.enabled)
        throw conflict('The webhook is disabled; enable it (PATCH enabled: true) before testing it.', {
          code: 'webhook-disabled',
        });
      const body = JSON.stringify({ type: TEST_EVENT, timestamp: new Date().toISOString(), data: { webhook_id: id } });
      const delivery = await webhooks.enqueueTest(tenantId, id, TEST_EVENT, body);
      wake();
      return delivery;
    },

    async listDeliveries(tenantId: string, id: string, status: DeliveryStatus | undefined, page: PageRequest) {
      await get(tenantId, id);
      return webhooks.listDeliveries(tenantId, id, status, page);
    },

    async getDelivery(tenantId: string, id: string, deliveryId: string) {
      await get(tenantId, id);
      const delivery = await webhooks.findDelivery(tenantId, id, deliveryId);
      if (!delivery) throw missingDelivery();
      return delivery;
    },

    /**
     * Heals a gap after an outage: every event of the webhook's types since `since` (at most
     * RECOVER_MAX_DAYS back) is queued again. A disabled webhook's deliveries wait until it is enabled.
     */
    async recover(tenantId: string, id: string, input: WebhookRecovery) {
      const webhook = await get(tenantId, id);
      const since = new Date(input.since);
      const now = Date.now();
      const problem = (message: string) =>
        unprocessable(`since ${message}.`, { code: 'recover-window', errors: [{ field: 'since', message }] });
      if (since.getTime() > now) throw problem('is in the future');
      if (since.getTime() < now - RECOVER_MAX_DAYS * 24 * 3_600_000)
        throw problem(
          `is more than ${RECOVER_MAX_DAYS} days ago; events can be recovered for ${RECOVER_MAX_DAYS} days`,
        );
      const requeued = await webhooks.recover(tenantId, id, since);
      if (requeued > 0) wake();
      const from = Math.max(since.getTime(), Date.parse(webhook.created_at));
      return { webhook_id: id, since: new Date(from).toISOString(), requeued };
    },

    /** Sends the same message (same `webhook-id`, same body) again, now; it counts as a further attempt. */
    async retryDelivery(tenantId: string, id: string, deliveryId: string) {
      const webhook = await get(tenantId, id);
      if (!webhook.enabled)
        throw conflict('The webhook is disabled; enable it (PATCH enabled: true) before retrying its deliveries.', {
          code: 'webhook-disabled',
        });
      // The update refuses a delivery whose attempt is running; only then is it worth telling why.
      const retried = await webhooks.retryDelivery(tenantId, id, deliveryId);
      if (!retried) {
        if (!(await webhooks.findDelivery(tenantId, id, deliveryId))) throw missingDelivery();
        throw conflict('An attempt of this delivery is running right now; look again in a moment.', {
          code: 'delivery-in-flight',
        });
      }
      wake();
      return retried;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
