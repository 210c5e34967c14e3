// The API JSON of a record, for the answers and the events alike. Beside the schema, not in it:
// a schema file imports no repository, and a repository builds no API JSON.
import { taskJson } from '../runs/run-tasks';
import type { OffboardingJson } from './offboarding.schemas';
import type { OffboardingRecord } from './offboarding.tasks';

/** An offboarding as the API shows it, tasks included: the answers and the events' `object` alike. */
export function offboardingJson(run: OffboardingRecord): OffboardingJson {
  return {
    id: run.id,
    status: run.status,
    user_id: run.userId,
    successor_id: run.successorId,
    email: run.email,
    tenant_id: run.managedTenantId,
    last_day: run.lastDay,
    mailbox_retention_days: run.mailboxRetentionDays,
    directory_user_id: run.directoryUserId,
    tasks: run.tasks.map((task) => taskJson(task, { dueAt: true }) as OffboardingJson['tasks'][number]),
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
    cancelled_at: run.cancelledAt?.toISOString() ?? null,
  };
}
