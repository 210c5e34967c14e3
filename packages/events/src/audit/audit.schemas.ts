import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  Nullable,
  keysetQueryProperties,
  named,
  pageQueryProperties,
  pageSchema,
  strictObject,
  Uuid,
} from '@msp/http';
import { ChangesSchema } from '../catalogue';

export const AuditEventSchema = named(
  'AuditEvent',
  strictObject(
    {
      id: Uuid({ description: 'The event id (the same event a webhook delivery names).' }),
      occurred_at: DateTime({ description: 'When the change was committed.' }),
      action: Type.String({ description: 'The event type, e.g. `ticket.updated`.' }),
      resource_type: Type.String(),
      resource_id: Type.String(),
      actor: strictObject({
        client_id: Type.String({
          description: "The API client whose token made the change; `system` for the service's own jobs.",
        }),
        on_behalf_of: Nullable(
          Type.String({
            description:
              "The client a service client says it acted for (its `X-On-Behalf-Of`): that service client's " +
              'claim, not verified. Null otherwise; the header is ignored from any other caller.',
          }),
        ),
      }),
      changes: Nullable(ChangesSchema),
      request_id: Nullable(
        Type.String({ description: 'The `X-Request-Id` of the request that made the change; null for jobs.' }),
      ),
    },
    {
      examples: [
        {
          id: '1d2c3b4a-5e6f-4a0b-8c9d-0e1f2a3b4c5d',
          occurred_at: '2026-11-23T09:00:00.000Z',
          action: 'ticket.updated',
          resource_type: 'ticket',
          resource_id: '7a0e1c52-3f9b-4f7e-9c5a-2b8d6e4f1a30',
          actor: { client_id: 'ops-portal', on_behalf_of: null },
          changes: { status: { from: 'open', to: 'in_progress' } },
          request_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        },
      ],
    },
  ),
);
export type AuditEventJson = Static<typeof AuditEventSchema>;

export const AuditEventPageSchema = pageSchema('AuditEventPage', AuditEventSchema);

/** The audit log's query; `eventTypes`: the service's event types, the first of which is `type`'s example. */
export const auditQuery = (eventTypes: readonly string[] = ['ticket.updated']) =>
  Type.Object(
    {
      ...pageQueryProperties,
      ...keysetQueryProperties,
      type: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 2000,
          pattern: '^[a-z0-9_.]+(,[a-z0-9_.]+)*$',
          description:
            `Only events of these types (\`action\`), comma-separated without spaces, e.g. \`${eventTypes[0]}\` or \`${eventTypes.slice(0, 2).join(',')}\`: ` +
            "each one of this service's event types (its webhooks' names; another is a 400), each at most once.",
          examples: [eventTypes[0]],
        }),
      ),
      resource_type: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          description: 'Only changes of this kind of resource, e.g. `ticket`.',
        }),
      ),
      resource_id: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description:
            'Only changes of this resource. An id (UUID) matches in either letter case, as ids do everywhere.',
        }),
      ),
      actor: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description: 'Only changes made by this client id (as caller or on whose behalf).',
        }),
      ),
      from: Type.Optional(DateTime({ description: 'Changes at or after this instant.' })),
      to: Type.Optional(DateTime({ description: 'Changes before this instant.' })),
    },
    { additionalProperties: false },
  );
export const AuditQuery = auditQuery();

export type AuditQueryInput = Omit<Static<typeof AuditQuery>, 'page' | 'per_page' | 'after'>;
/** The filters as the repository takes them: `type` split into its event types. */
export type AuditFilter = Omit<AuditQueryInput, 'type'> & { types?: readonly string[] };
