// The API JSON of a record, for the answers and the events alike. Beside the schema, not in it:
// a schema file imports no repository, and a repository builds no API JSON.
import type { DirectoryGroupJson, DirectoryUserJson, SyncRunJson } from './sync.schemas';
import type { MirrorGroupRow, StoredMirrorUser, SyncRunRecord } from './syncs.repository';

/** A sync run as the API shows it: the answers and the events' `object` alike. */
export function syncRunJson(run: SyncRunRecord): SyncRunJson {
  return {
    id: run.id,
    status: run.status,
    trigger: run.trigger,
    attempts: run.attempts,
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
    stats: {
      users_seen: run.usersSeen,
      users_added: run.usersAdded,
      users_updated: run.usersUpdated,
      users_removed: run.usersRemoved,
      groups_seen: run.groupsSeen,
      mode: run.mode,
      mode_reason: run.modeReason,
      delta_since: run.deltaSince?.toISOString() ?? null,
    },
    error: run.error,
  };
}

/** A user of the mirror. */
export function directoryUserJson(user: StoredMirrorUser): DirectoryUserJson {
  return {
    id: user.scimId,
    external_id: user.externalId,
    user_name: user.userName,
    display_name: user.displayName,
    email: user.email,
    active: user.active,
    groups: user.groups,
    department: user.department,
    manager: user.manager,
    deleted: user.deletedAt !== null,
    deleted_at: user.deletedAt?.toISOString() ?? null,
  };
}

/** A group of the mirror. */
export function directoryGroupJson(group: MirrorGroupRow): DirectoryGroupJson {
  return {
    id: group.scimId,
    display_name: group.displayName,
    member_count: group.memberCount,
    synced_at: group.syncedAt.toISOString(),
  };
}
