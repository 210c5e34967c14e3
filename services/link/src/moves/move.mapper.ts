// The API JSON of a record, for the answers and the events alike. Beside the schema, not in it:
// a schema file imports no repository, and a repository builds no API JSON.
import { taskJson } from '../runs/run-tasks';
import type { MoveJson } from './move.schemas';
import type { MoveRecord } from './move.tasks';

/** A move as the API shows it, tasks included: the answers and the events' `object` alike. */
export function moveJson(run: MoveRecord): MoveJson {
  return {
    id: run.id,
    status: run.status,
    user_id: run.userId,
    email: run.email,
    tenant_id: run.managedTenantId,
    effective_date: run.effectiveDate,
    department: run.department,
    manager_id: run.managerId,
    job_title: run.jobTitle,
    bundles: { add: run.bundlesAdd, remove: run.bundlesRemove },
    physical: run.physical ?? null,
    directory_user_id: run.directoryUserId,
    tasks: run.tasks.map((task) => taskJson(task, { dueAt: true }) as MoveJson['tasks'][number]),
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
    cancelled_at: run.cancelledAt?.toISOString() ?? null,
  };
}
