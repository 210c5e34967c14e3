import { Type, type Static } from '@sinclair/typebox';
import { DateTime, named, Nullable, pageQueryProperties, pageSchema, strictObject, stringEnum, Uuid } from '@msp/http';

export const SYNC_RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export const HEALTH_STATUSES = ['disabled', 'unknown', 'healthy', 'degraded', 'failing'] as const;

const runExample = {
  id: '5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
  status: 'succeeded',
  trigger: 'manual',
  attempts: 1,
  started_at: '2026-11-23T09:00:01.000Z',
  finished_at: '2026-11-23T09:00:04.000Z',
  stats: { users_seen: 120, users_added: 3, users_updated: 2, users_removed: 1, groups_seen: 14 },
  error: null,
};

export const SyncRun = named(
  'SyncRun',
  Type.Object(
    {
      id: Uuid(),
      status: stringEnum(SYNC_RUN_STATUSES, { description: '`queued` → `running` → `succeeded` or `failed` (a retried attempt goes back to `queued`).' }),
      trigger: stringEnum(['manual', 'schedule'] as const, { description: '`manual` (POST …/sync) or `schedule` (every SYNC_INTERVAL_MINUTES).' }),
      attempts: Type.Integer({ minimum: 0, description: 'Executions begun; at most 3 (network errors, timeouts, 429 and 5xx are retried).' }),
      started_at: Nullable(DateTime({ description: 'When the first attempt began.' })),
      finished_at: Nullable(DateTime()),
      stats: Type.Object(
        {
          users_seen: Type.Integer({ minimum: 0, description: 'Users the directory listed.' }),
          users_added: Type.Integer({ minimum: 0, description: 'New in the mirror.' }),
          users_updated: Type.Integer({ minimum: 0, description: 'Changed since the last sync.' }),
          users_removed: Type.Integer({ minimum: 0, description: 'No longer in the directory.' }),
          groups_seen: Type.Integer({ minimum: 0, description: 'Groups the directory listed.' }),
        },
        { additionalProperties: false },
      ),
      error: Nullable(Type.String({ description: 'What failed, in words a technician can act on; `null` on success. While queued for a retry: the failed attempt.' })),
    },
    { additionalProperties: false, description: 'One synchronisation of a connector\'s directory.', examples: [runExample] },
  ),
);
export type SyncRunJson = Static<typeof SyncRun>;

export const SyncRunPage = pageSchema('SyncRunPage', SyncRun);

export const SyncRunParams = Type.Object({
  id: Uuid({ description: 'The connector id.' }),
  run_id: Uuid({ description: 'The sync run id.' }),
});

export const PageQuery = strictObject({ ...pageQueryProperties });

export const ConnectorHealth = named(
  'ConnectorHealth',
  Type.Object(
    {
      status: stringEnum(HEALTH_STATUSES, {
        description: '`disabled` (connector disabled), `unknown` (no finished run yet), `healthy` (last finished run succeeded), `degraded` (1–2 failures in a row), `failing` (3 or more).',
      }),
      last_run: Nullable(
        Type.Object(
          { id: Uuid(), status: stringEnum(SYNC_RUN_STATUSES), finished_at: Nullable(DateTime()) },
          { additionalProperties: false, description: 'The latest finished run.' },
        ),
      ),
      last_success_at: Nullable(DateTime()),
      consecutive_failures: Type.Integer({ minimum: 0, description: 'Failed finished runs since the last success.' }),
      checked_at: DateTime({ description: 'When this answer was computed.' }),
    },
    {
      additionalProperties: false,
      examples: [
        {
          status: 'degraded',
          last_run: { id: '5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f', status: 'failed', finished_at: '2026-11-23T10:00:04.000Z' },
          last_success_at: '2026-11-23T09:00:04.000Z',
          consecutive_failures: 1,
          checked_at: '2026-11-23T10:05:00.000Z',
        },
      ],
    },
  ),
);
export type ConnectorHealthJson = Static<typeof ConnectorHealth>;

export const DirectoryUser = named(
  'DirectoryUser',
  Type.Object(
    {
      id: Type.String({ description: 'The directory\'s SCIM id of the user.' }),
      external_id: Nullable(Type.String({ description: 'The SCIM externalId, when the directory has one.' })),
      user_name: Type.String(),
      display_name: Nullable(Type.String()),
      email: Nullable(Type.String({ description: 'The primary e-mail (else the first one).' })),
      active: Type.Boolean(),
      groups: Type.Array(Type.String(), { description: 'displayNames of the groups the user is a member of.' }),
    },
    {
      additionalProperties: false,
      description: 'A directory user as the last successful sync saw it.',
      examples: [{ id: '2819c223-7f76-453a-919d-413861904646', external_id: null, user_name: 'ada@contoso.example', display_name: 'Ada Lovelace', email: 'ada@contoso.example', active: true, groups: ['Engineering'] }],
    },
  ),
);
export const DirectoryUserPage = pageSchema('DirectoryUserPage', DirectoryUser);
