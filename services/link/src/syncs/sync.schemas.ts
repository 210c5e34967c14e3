import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  keysetQueryProperties,
  named,
  Nullable,
  pageQueryProperties,
  pageSchema,
  strictObject,
  stringEnum,
  Uuid,
} from '@msp/http';

export const SYNC_RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export const HEALTH_STATUSES = ['disabled', 'unknown', 'healthy', 'degraded', 'failing'] as const;

const runExample = {
  id: '5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
  status: 'succeeded',
  trigger: 'manual',
  attempts: 1,
  started_at: '2026-11-23T09:00:01.000Z',
  finished_at: '2026-11-23T09:00:04.000Z',
  stats: {
    users_seen: 2,
    users_added: 0,
    users_updated: 2,
    users_removed: 0,
    groups_seen: 0,
    mode: 'delta',
    mode_reason:
      "changes since 2026-11-23T07:59:00.000Z (the last successful sync's start by the directory's clock, less 60 s)",
    delta_since: '2026-11-23T07:59:00.000Z',
  },
  error: null,
};

export const SyncRun = named(
  'SyncRun',
  Type.Object(
    {
      id: Uuid(),
      status: stringEnum(SYNC_RUN_STATUSES, {
        description: '`queued` → `running` → `succeeded` or `failed` (a retried attempt goes back to `queued`).',
      }),
      trigger: stringEnum(['manual', 'schedule'] as const, {
        description: '`manual` (POST …/sync) or `schedule` (every SYNC_INTERVAL_MINUTES).',
      }),
      attempts: Type.Integer({
        minimum: 0,
        description: 'Executions begun; at most 3 (network errors, timeouts, 429 and 5xx are retried).',
      }),
      started_at: Nullable(DateTime({ description: 'When the first attempt began.' })),
      finished_at: Nullable(DateTime()),
      stats: Type.Object(
        {
          users_seen: Type.Integer({
            minimum: 0,
            description: 'Users the directory listed (in a delta: those changed since `delta_since`).',
          }),
          users_added: Type.Integer({
            minimum: 0,
            description: 'New in the mirror (or back after being marked deleted).',
          }),
          users_updated: Type.Integer({ minimum: 0, description: 'Changed since the last sync.' }),
          users_removed: Type.Integer({
            minimum: 0,
            description: 'No longer in the directory: marked deleted in the mirror (only a full sync notices this).',
          }),
          groups_seen: Type.Integer({
            minimum: 0,
            description: 'Groups the directory listed (in a delta: those changed).',
          }),
          mode: Nullable(
            stringEnum(['full', 'delta'] as const, {
              description:
                '`delta`: only Users and Groups changed since the last successful sync began ' +
                '(`filter=meta.lastModified gt "<delta_since>"`), when the directory\'s ServiceProviderConfig ' +
                'says it filters. ' +
                '`full`: everything, at least every FULL_SYNC_INTERVAL_HOURS (default 24), to notice deletions. `null` until an attempt succeeds.',
            }),
          ),
          mode_reason: Nullable(
            Type.String({
              description:
                'Why this mode: for a full sync the first sync, FULL_SYNC_INTERVAL_HOURS passed, a ' +
                'directory that does not advertise filter support, or one that refused the filter ' +
                '(400 `invalidFilter`); for a delta its bound.',
            }),
          ),
          delta_since: Nullable(
            DateTime({
              description:
                "The delta's bound: the last successful sync's start by the directory's clock (its HTTP " +
                '`Date`), less a 60 s safety margin against clock skew. `null` for a full sync.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      error: Nullable(
        Type.String({
          description:
            'What failed, in words a technician can act on; `null` on success. While queued for a retry: the failed attempt.',
        }),
      ),
    },
    {
      additionalProperties: false,
      description: "One synchronisation of a connector's directory.",
      examples: [runExample],
    },
  ),
);
export type SyncRunJson = Static<typeof SyncRun>;

export const SyncRunPage = pageSchema('SyncRunPage', SyncRun);

export const SyncRunParams = Type.Object({
  id: Uuid({ description: 'The connector id.' }),
  run_id: Uuid({ description: 'The sync run id.' }),
});

/** The sync runs' page: by number, or by keyset after a run's id. */
export const PageQuery = strictObject({ ...pageQueryProperties, ...keysetQueryProperties });

/**
 * The mirror's pages: by number, or by keyset after a user's or group's `id`, which is the
 * directory's SCIM id (any string the directory chose, not always a UUID).
 */
export const MirrorPageQuery = strictObject({
  ...pageQueryProperties,
  after: Type.Optional(
    Type.String({ minLength: 1, maxLength: 1024, description: keysetQueryProperties.after.description }),
  ),
});

export const ConnectorHealth = named(
  'ConnectorHealth',
  Type.Object(
    {
      status: stringEnum(HEALTH_STATUSES, {
        description:
          '`disabled` (connector disabled), `unknown` (no finished run yet), `healthy` (last finished run ' +
          'succeeded), `degraded` (1–2 failures in a row), `failing` (3 or more).',
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
      reason: Type.Optional(
        Type.String({
          description:
            '`ldap` connectors, which are checked live (a bind and a read of `base_dn`) at every request: why ' +
            'the check failed (`status: failing`), in words a technician can act on (wrong password, unreachable ' +
            'server, a certificate that does not verify). Absent when the check passed.',
        }),
      ),
    },
    {
      additionalProperties: false,
      examples: [
        {
          status: 'failing',
          last_run: null,
          last_success_at: null,
          consecutive_failures: 0,
          checked_at: '2026-11-23T10:05:00.000Z',
          reason:
            'ldaps://dc1.corp.example refused the bind as config.bind_dn (invalid credentials): check the bind ' +
            'DN and set the right config.bind_password; the account may also be disabled or locked',
        },
        {
          status: 'degraded',
          last_run: {
            id: '5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
            status: 'failed',
            finished_at: '2026-11-23T10:00:04.000Z',
          },
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
      id: Type.String({ description: "The directory's SCIM id of the user." }),
      external_id: Nullable(Type.String({ description: 'The SCIM externalId, when the directory has one.' })),
      user_name: Type.String(),
      display_name: Nullable(Type.String()),
      email: Nullable(Type.String({ description: 'The primary e-mail (else the first one).' })),
      active: Type.Boolean(),
      groups: Type.Array(Type.String(), { description: 'displayNames of the groups the user is a member of.' }),
      department: Nullable(
        Type.String({
          description: "SCIM: the enterprise extension's department; AD: `department`; OpenLDAP: `departmentNumber`.",
        }),
      ),
      manager: Nullable(
        Type.String({
          description:
            "The `id` of the user's manager in this directory (SCIM: the enterprise extension's manager.value; LDAP: the entry `manager` names).",
        }),
      ),
      deleted: Type.Boolean({ description: 'A full sync no longer found the user in the directory.' }),
      deleted_at: Nullable(
        DateTime({ description: 'When a full sync first missed the user; `null` while it is in the directory.' }),
      ),
    },
    {
      additionalProperties: false,
      description: 'A directory user as the syncs saw it.',
      examples: [
        {
          id: '2819c223-7f76-453a-919d-413861904646',
          external_id: null,
          user_name: 'ada@contoso.example',
          display_name: 'Ada Lovelace',
          email: 'ada@contoso.example',
          active: true,
          groups: ['Engineering'],
          department: 'Engineering',
          manager: '6f1c2b0e-93a8-4c57-a0d2-2b5f7e1d9c40',
          deleted: false,
          deleted_at: null,
        },
      ],
    },
  ),
);
export type DirectoryUserJson = Static<typeof DirectoryUser>;
export const DirectoryUserPage = pageSchema('DirectoryUserPage', DirectoryUser);

export const DirectoryGroup = named(
  'DirectoryGroup',
  Type.Object(
    {
      id: Type.String({ description: "The directory's SCIM id of the group." }),
      display_name: Type.String(),
      member_count: Type.Integer({
        minimum: 0,
        description: 'Members the directory lists for the group (users, or nested groups).',
      }),
      synced_at: DateTime({ description: 'When a sync last wrote the group (it changed, or it was new).' }),
    },
    {
      additionalProperties: false,
      description: 'A directory group as the syncs saw it; a full sync drops the groups no longer in the directory.',
      examples: [
        {
          id: 'e9e30dba-f08f-4109-8486-d5c6a331660a',
          display_name: 'Engineering',
          member_count: 42,
          synced_at: '2026-11-23T09:00:04.000Z',
        },
      ],
    },
  ),
);
export type DirectoryGroupJson = Static<typeof DirectoryGroup>;
export const DirectoryGroupPage = pageSchema('DirectoryGroupPage', DirectoryGroup);
