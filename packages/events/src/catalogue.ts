import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { named, type OutgoingWebhookDoc } from '@msp/http';
import { eventHead, recordEvent, type EventToRecord } from './record';
import type { Sql } from './sql';

/** One kind of event a service emits. */
export interface EventType {
  /** e.g. `ticket.updated`. */
  type: string;
  /** What happened, for the reference pages. */
  summary: string;
  /** The resource's API schema: `data.object`. */
  object: TSchema;
  /** Whether `data.changes` is sent (updates). */
  changes?: boolean;
  /** Further members of `data` beside `object` (EventToRecord's `extra`), e.g. `{target}` of a breach. */
  extra?: TProperties;
}

export const TEST_EVENT = 'webhook.test';

export const ChangesSchema = named(
  'EventChanges',
  Type.Record(
    Type.String(),
    Type.Object({ from: Type.Unknown(), to: Type.Unknown() }, { additionalProperties: false }),
    {
      description: "The fields the change touched, each `{from, to}` in the API's names and formats.",
      examples: [{ status: { from: 'open', to: 'in_progress' } }],
    },
  ),
);

const SIGNATURE_HEADERS: OutgoingWebhookDoc['headers'] = {
  'webhook-id': {
    description: 'The message id: the same on every retry of one delivery, so a receiver can drop repeats.',
    schema: { type: 'string', format: 'uuid' },
  },
  'webhook-timestamp': {
    description: 'Seconds since the epoch when this attempt was signed; refuse ones far from now (replays).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'webhook-signature': {
    description:
      '`v1,` + base64 of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}` with the ' +
      'base64-decoded part of the secret after `whsec_` (Standard Webhooks).',
    schema: { type: 'string' },
  },
};

const pascal = (name: string) =>
  name
    .split(/[._]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');

function envelope(type: string, data: TSchema) {
  return named(
    `${pascal(type)}Event`,
    Type.Object(
      {
        type: Type.Literal(type),
        timestamp: Type.String({ format: 'date-time', description: 'When the change was committed.' }),
        data,
      },
      { additionalProperties: false },
    ),
  );
}

/**
 * The events a service emits: what webhooks may subscribe to, their payloads for OpenAPI, and
 * `record`, held to the catalogue's names (a typo is a compile error, not a silent event).
 */
export function eventCatalogue<const T extends readonly EventType[]>(types: T) {
  const names: string[] = types.map((event) => event.type);
  return {
    names,
    record: (tx: Sql, event: EventToRecord & { type: T[number]['type'] }) => recordEvent(tx, event),
    /** For a statement that inserts its own event: see eventHead. */
    head: (event: Pick<EventToRecord, 'resourceType' | 'actor'> & { type: T[number]['type'] }) => eventHead(event),
    has: (name: string) => names.includes(name),
    /** OpenAPI 3.1 `webhooks`: one entry per event type, and `webhook.test`. */
    webhookDocs(): OutgoingWebhookDoc[] {
      const docs = types.map((event) => ({
        name: event.type,
        summary: event.summary,
        schema: envelope(
          event.type,
          Type.Object(
            { object: event.object, ...(event.changes ? { changes: ChangesSchema } : {}), ...(event.extra ?? {}) },
            { additionalProperties: false },
          ),
        ),
        headers: SIGNATURE_HEADERS,
      }));
      docs.push({
        name: TEST_EVENT,
        summary: 'Sent by `POST /webhooks/{id}/test`, to check an endpoint and its signature verification.',
        schema: envelope(
          TEST_EVENT,
          Type.Object({ webhook_id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        ),
        headers: SIGNATURE_HEADERS,
      });
      return docs;
    },
  };
}

/** What the webhook routes need of a catalogue, whatever its names. */
export interface EventCatalogue {
  names: string[];
  has(name: string): boolean;
  webhookDocs(): OutgoingWebhookDoc[];
}
