// The API JSON of a record, for the answers and the events alike. Beside the schema, not in it:
// a schema file imports no repository, and a repository builds no API JSON.
import type { SyncRunJson } from './sync.schemas';
import type { SyncRunRecord } from './syncs.repository';

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
    },
    error: run.error,
  };
}
