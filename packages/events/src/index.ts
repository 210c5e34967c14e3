export type { Sql, TransactionalSql, RecordChange } from './sql';
export {
  recordEvent,
  changesBetween,
  onEventRecorded,
  announceEventRecorded,
  eventHead,
  EVENT_HEAD_COLUMNS,
  eventHeadValues,
  createdUnderClaim,
  type ClaimEffect,
  SYSTEM_ACTOR,
  type Changes,
  type EventHead,
  type EventToRecord,
} from './record';
export { eventCatalogue, TEST_EVENT, ChangesSchema, type EventCatalogue, type EventType } from './catalogue';
export {
  createServiceEvents,
  createServiceDispatcher,
  EVENT_TAGS,
  type ServiceEvents,
  type ServiceEventsOptions,
  type ServiceDispatcherOptions,
} from './events';
export { createDispatcher, type Dispatcher, type DispatcherOptions } from './delivery/dispatcher';
export { createDeliveriesRepository } from './delivery/deliveries.repository';
export { DEFAULT_RETRY_DELAYS_MS, DEFAULT_DISABLE_AFTER_MS } from './retry-schedule';
export { newSigningSecret, signatureHeaders } from './signing';
export { openWebhookSecret, webhookSecretsFromConfig, WEBHOOK_KEY_VARIABLE } from './webhook-secrets';
export {
  createEventsRetention,
  eventsRetentionConfigProperties,
  type EventsRetention,
  type EventsRetentionOptions,
  type SweepResult,
} from './retention';
export { auditRangeCountSql, AUDIT_LIST } from './audit/audit.repository';
export { WEBHOOKS_LIST, DELIVERIES_LIST } from './webhooks/webhooks.repository';
