import {
  API_BASE_PATH,
  IdParams,
  LINK_HEADER,
  pageRequestOf,
  sendPage,
  unprocessableResponse,
  type ApiRouter,
} from '@msp/http';
import type { Request } from 'express';
import {
  CreatedWebhookSchema,
  DeliveryListQuery,
  DeliveryPageSchema,
  DeliveryParams,
  DeliverySchema,
  NewWebhookSchema,
  WebhookChangesSchema,
  WebhookListQuery,
  WebhookPageSchema,
  WebhookRecoveredSchema,
  WebhookRecoverySchema,
  WebhookSchema,
} from './webhook.schemas';
import type { WebhooksService } from './webhooks.service';

const TAGS = ['Webhooks'];
const SCOPE = 'admin:tenant';
const LOCATION = { Location: { description: 'URL of the new webhook.', schema: { type: 'string' } } };

/** Webhooks live behind requireScope('admin:tenant'), so the principal is there. */
const tenant = (req: Request) => req.principal!.tenantId;

export function registerWebhookRoutes(api: ApiRouter, webhooks: WebhooksService) {
  api.route({
    method: 'post',
    path: '/webhooks',
    operationId: 'createWebhook',
    summary: 'Subscribe an endpoint',
    description:
      'Subscribes `url` to the event types named in `events` (or `["*"]`: all). Each change of the tenant that matches is POSTed to it as ' +
      '`{type, timestamp, data}`, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer holds ' +
      'the signing `secret` (`whsec_…`) once; it is never shown again. Deliveries are at least once, in order per resource, retried with the ' +
      'same `webhook-id` (first retry within 10 s, then backing off over about a day); an endpoint failing for 3 days is disabled. ' +
      'In production the URL may not point to internal addresses unless OUTBOUND_ALLOWLIST allows them (422).',
    tags: TAGS,
    scope: SCOPE,
    body: NewWebhookSchema,
    // The answer holds the secret: it must not be kept for replay.
    idempotent: false,
    responses: {
      201: {
        description: 'Subscribed; the only answer that shows `secret`.',
        schema: CreatedWebhookSchema,
        headers: LOCATION,
      },
      422: unprocessableResponse('An unknown event type, `*` with other names, or a URL the service may not call.'),
    },
    handler: async (req, res, { body }) => {
      const webhook = await webhooks.create(tenant(req), body);
      res.status(201).location(`${API_BASE_PATH}/webhooks/${webhook.id}`).json(webhook);
    },
  });

  api.route({
    method: 'get',
    path: '/webhooks',
    operationId: 'listWebhooks',
    summary: 'List webhooks',
    description:
      'Newest first. Secrets are never shown. `pagination.total` is exact (a counter kept with every change); deep pages: follow the `Link` ' +
      "header's `next` (`after`, keyset).",
    tags: TAGS,
    scope: SCOPE,
    query: WebhookListQuery,
    responses: { 200: { description: 'A page of webhooks.', schema: WebhookPageSchema, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await webhooks.list(tenant(req), page);
      sendPage(req, res, items, total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/webhooks/:id',
    operationId: 'getWebhook',
    summary: 'Read a webhook',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The webhook (without its secret).', schema: WebhookSchema } },
    load: (req, { params }) => webhooks.get(tenant(req), params.id),
  });

  api.route({
    method: 'patch',
    path: '/webhooks/:id',
    operationId: 'updateWebhook',
    summary: 'Change a webhook',
    description:
      'Changes `url`, `events`, `description` or `enabled`. Enabling clears `disabled_reason`; its pending deliveries resume.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    body: WebhookChangesSchema,
    responses: {
      200: { description: 'The webhook after the change.', schema: WebhookSchema },
      422: unprocessableResponse('An unknown event type, or a URL the service may not call.'),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await webhooks.update(tenant(req), params.id, body));
    },
  });

  api.route({
    method: 'delete',
    path: '/webhooks/:id',
    operationId: 'deleteWebhook',
    summary: 'Unsubscribe an endpoint',
    description: 'The webhook and its deliveries are gone; nothing more is sent to it.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async (req, res, { params }) => {
      await webhooks.remove(tenant(req), params.id);
      res.status(204).end();
    },
  });

  api.route({
    method: 'post',
    path: '/webhooks/:id/test',
    operationId: 'testWebhook',
    summary: 'Send a test event',
    description:
      'Queues a `webhook.test` message (`data.webhook_id`), signed like every other; follow it in the deliveries.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    errors: [409],
    responses: { 202: { description: 'Queued; the delivery as it stands.', schema: DeliverySchema } },
    handler: async (req, res, { params }) => {
      res.status(202).json(await webhooks.sendTest(tenant(req), params.id));
    },
  });

  api.route({
    method: 'post',
    path: '/webhooks/:id/recover',
    operationId: 'recoverWebhook',
    summary: 'Queue missed events again',
    description:
      "After an outage of the receiver (or while the webhook was disabled), queues again every event of the webhook's types that happened at " +
      'or after `since`, at most 14 days back: a delivery the event already had is due now again with the same `webhook-id` (receivers that ' +
      'drop repeats drop it), an event that had none gets a new delivery. Events before the webhook was subscribed are not sent. The ' +
      "order per resource is kept. A disabled webhook's deliveries wait until it is enabled. Answers how many events were queued.",
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    body: WebhookRecoverySchema,
    responses: {
      202: { description: 'Queued; how many events.', schema: WebhookRecoveredSchema },
      422: unprocessableResponse('`since` is in the future or more than 14 days ago.'),
    },
    handler: async (req, res, { params, body }) => {
      res.status(202).json(await webhooks.recover(tenant(req), params.id, body));
    },
  });

  api.route({
    method: 'get',
    path: '/webhooks/:id/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'List deliveries',
    description:
      'Newest first: each message with its attempts (response status, duration, error) and when it is tried next. `pagination.total` is exact ' +
      "(counters per webhook and status, kept with every change), as fast with a `status` as without; deep pages: follow the `Link` header's " +
      '`next` (`after`, keyset). Deliveries of events past the retention (`EVENTS_RETENTION_DAYS`) are removed with them once finished.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    query: DeliveryListQuery,
    responses: { 200: { description: 'A page of deliveries.', schema: DeliveryPageSchema, headers: LINK_HEADER } },
    handler: async (req, res, { params, query: { status, ...query } }) => {
      const page = pageRequestOf(query);
      const { items, total } = await webhooks.listDeliveries(tenant(req), params.id, status, page);
      sendPage(req, res, items, total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/webhooks/:id/deliveries/:delivery_id',
    operationId: 'getWebhookDelivery',
    summary: 'Read a delivery',
    tags: TAGS,
    scope: SCOPE,
    params: DeliveryParams,
    responses: { 200: { description: 'The delivery and its attempts.', schema: DeliverySchema } },
    handler: async (req, res, { params }) => {
      res.json(await webhooks.getDelivery(tenant(req), params.id, params.delivery_id));
    },
  });

  api.route({
    method: 'post',
    path: '/webhooks/:id/deliveries/:delivery_id/retry',
    operationId: 'retryWebhookDelivery',
    summary: 'Retry a delivery',
    description:
      'Sends the same message (same `webhook-id` and body, a fresh signature) again now, whatever its state. 409 while an attempt is running.',
    tags: TAGS,
    scope: SCOPE,
    params: DeliveryParams,
    errors: [409],
    responses: { 202: { description: 'Queued; the delivery as it stands.', schema: DeliverySchema } },
    handler: async (req, res, { params }) => {
      res.status(202).json(await webhooks.retryDelivery(tenant(req), params.id, params.delivery_id));
    },
  });
}
