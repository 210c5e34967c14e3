import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  Nullable,
  keysetQueryProperties,
  named,
  pageQueryProperties,
  pageSchema,
  stringEnum,
  strictObject,
  Uuid,
} from '@msp/http';

const URL_MAX = 2_000;
const DESCRIPTION_MAX = 500;
/** Enough for every event of a service by name; `["*"]` subscribes to all. */
const EVENTS_MAX = 50;

const Url = Type.String({
  format: 'uri',
  maxLength: URL_MAX,
  pattern: '^https?://',
  description: 'Where deliveries are POSTed: an http(s) URL.',
});
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100, pattern: '^(\\*|[a-z_]+(\\.[a-z_]+)+)$' }), {
  minItems: 1,
  maxItems: EVENTS_MAX,
  uniqueItems: true,
  description: 'Event types to receive (see this document\'s `webhooks`), or `["*"]` for every one.',
});

const EXAMPLE = {
  id: '0b9ab2c4-58a1-4ae4-9a36-6b4f0e6c2d11',
  url: 'https://hooks.example.com/msp',
  events: ['ticket.created', 'ticket.updated'],
  description: 'Chat notifications',
  enabled: true,
  disabled_reason: null,
  created_at: '2026-11-23T09:00:00.000Z',
  updated_at: '2026-11-23T09:00:00.000Z',
};

export const WebhookSchema = named(
  'Webhook',
  strictObject(
    {
      id: Uuid(),
      url: Type.String({ description: 'Where deliveries are POSTed.' }),
      events: Type.Array(Type.String(), { description: 'The event types it receives; `*` is every one.' }),
      description: Nullable(Type.String()),
      enabled: Type.Boolean({ description: 'Deliveries are sent only while enabled.' }),
      disabled_reason: Nullable(
        Type.String({ description: 'Why the service disabled it (every delivery failed for 3 days); null otherwise.' }),
      ),
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    { examples: [EXAMPLE] },
  ),
);
export type WebhookJson = Static<typeof WebhookSchema>;

export const CreatedWebhookSchema = named(
  'CreatedWebhook',
  strictObject(
    {
      ...WebhookSchema.properties,
      secret: Type.String({ description: 'The signing secret (`whsec_…`). Shown only in this answer: store it now.' }),
    },
    { examples: [{ ...EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }] },
  ),
);

export const NewWebhookSchema = named(
  'NewWebhook',
  strictObject(
    { url: Url, events: Events, description: Type.Optional(Type.String({ maxLength: DESCRIPTION_MAX })) },
    {
      examples: [
        { url: 'https://hooks.example.com/msp', events: ['ticket.created'], description: 'Chat notifications' },
      ],
    },
  ),
);
export type NewWebhook = Static<typeof NewWebhookSchema>;

export const WebhookChangesSchema = named(
  'WebhookChanges',
  strictObject(
    {
      url: Type.Optional(Url),
      events: Type.Optional(Events),
      description: Type.Optional(Nullable(Type.String({ maxLength: DESCRIPTION_MAX }))),
      enabled: Type.Optional(
        Type.Boolean({ description: 'Enabling clears `disabled_reason`; deliveries left pending resume.' }),
      ),
    },
    { minProperties: 1, examples: [{ enabled: true }] },
  ),
);
export type WebhookChanges = Static<typeof WebhookChangesSchema>;

export const WebhookPageSchema = pageSchema('WebhookPage', WebhookSchema);
export const WebhookListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const AttemptSchema = named(
  'DeliveryAttempt',
  strictObject({
    attempt: Type.Integer({ minimum: 1 }),
    at: DateTime(),
    response_status: Nullable(
      Type.Integer({ description: "The endpoint's HTTP status; null when it did not answer." }),
    ),
    duration_ms: Type.Integer({ minimum: 0 }),
    error: Nullable(
      Type.String({
        description: 'Why the attempt failed (a non-2xx, a timeout, a refused address); null on success.',
      }),
    ),
  }),
);

export const DeliverySchema = named(
  'WebhookDelivery',
  strictObject(
    {
      id: Uuid({ description: 'The message id, sent as `webhook-id` on every attempt.' }),
      webhook_id: Uuid(),
      event: Type.String({ description: 'The event type.' }),
      event_id: Nullable(Uuid({ description: 'The event in the audit log; null for `webhook.test`.' })),
      status: stringEnum(DELIVERY_STATUSES, {
        description: '`pending` until an attempt succeeds (`succeeded`) or none is left (`failed`).',
      }),
      attempt: Type.Integer({ minimum: 0, description: 'Attempts made so far.' }),
      response_status: Nullable(Type.Integer({ description: "The last attempt's HTTP status." })),
      duration_ms: Nullable(Type.Integer({ description: "The last attempt's duration." })),
      error: Nullable(Type.String({ description: "The last attempt's error." })),
      next_attempt_at: Nullable(DateTime({ description: 'When it is tried next; null once it succeeded or failed.' })),
      attempts: Type.Array(AttemptSchema, { description: 'Every attempt, oldest first.' }),
      created_at: DateTime(),
    },
    {
      examples: [
        {
          id: '5f0c1f43-9f33-4d8f-a7a1-0c3f6c0c8e51',
          webhook_id: EXAMPLE.id,
          event: 'ticket.created',
          event_id: '1d2c3b4a-5e6f-4a0b-8c9d-0e1f2a3b4c5d',
          status: 'succeeded',
          attempt: 2,
          response_status: 200,
          duration_ms: 41,
          error: null,
          next_attempt_at: null,
          attempts: [
            { attempt: 1, at: '2026-11-23T09:00:01.000Z', response_status: 503, duration_ms: 12, error: 'HTTP 503' },
            { attempt: 2, at: '2026-11-23T09:00:06.000Z', response_status: 200, duration_ms: 41, error: null },
          ],
          created_at: '2026-11-23T09:00:00.900Z',
        },
      ],
    },
  ),
);
export type DeliveryJson = Static<typeof DeliverySchema>;

export const DeliveryPageSchema = pageSchema('WebhookDeliveryPage', DeliverySchema);
export const DeliveryListQuery = Type.Object(
  {
    ...pageQueryProperties,
    ...keysetQueryProperties,
    status: Type.Optional(stringEnum(DELIVERY_STATUSES, { description: 'Only deliveries in this state.' })),
  },
  { additionalProperties: false },
);
export const DeliveryParams = Type.Object({
  id: Uuid({ description: 'The webhook id.' }),
  delivery_id: Uuid({ description: 'The delivery id.' }),
});

/** How far back `recover` reaches: the events a receiver may have missed during an outage. */
export const RECOVER_MAX_DAYS = 14;

export const WebhookRecoverySchema = named(
  'WebhookRecovery',
  strictObject(
    {
      since: DateTime({
        description:
          `RFC 3339 date-time: every event of the webhook's types that happened at or after it is ` +
          `queued again; at most ${RECOVER_MAX_DAYS} days back, not in the future.`,
      }),
    },
    { examples: [{ since: '2026-11-20T08:00:00Z' }] },
  ),
);
export type WebhookRecovery = Static<typeof WebhookRecoverySchema>;

export const WebhookRecoveredSchema = named(
  'WebhookRecovered',
  strictObject(
    {
      webhook_id: Uuid(),
      since: DateTime({
        description:
          'From when events were queued again (as asked, or when the webhook was subscribed if that is later).',
      }),
      requeued: Type.Integer({
        minimum: 0,
        description:
          'How many events were queued again, each as its own delivery (an earlier delivery of the event keeps its id, so `webhook-id` repeats).',
      }),
    },
    { examples: [{ webhook_id: EXAMPLE.id, since: '2026-11-20T08:00:00.000Z', requeued: 42 }] },
  ),
);
export type WebhookRecoveredJson = Static<typeof WebhookRecoveredSchema>;
