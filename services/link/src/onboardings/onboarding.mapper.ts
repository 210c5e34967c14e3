// The API JSON of a record, for the answers and the events alike. Beside the schema, not in it:
// a schema file imports no repository, and a repository builds no API JSON.
import { taskJson } from '../runs/run-tasks';
import type { OnboardingJson } from './onboarding.schemas';
import type { OnboardingRecord } from './onboarding.tasks';

/** An onboarding as the API shows it, tasks included: the answers and the events' `object` alike. */
export function onboardingJson(run: OnboardingRecord): OnboardingJson {
  const ticket = run.tasks.find((task) => task.name === 'equipment_ticket' && task.status === 'succeeded')?.result as
    { ticket_id: string; ticket_number: number } | undefined;
  return {
    id: run.id,
    tenant_id: run.managedTenantId,
    status: run.status,
    first_name: run.firstName,
    last_name: run.lastName,
    email: run.email,
    department: run.department,
    job_title: run.jobTitle,
    manager_id: run.managerId,
    start_date: run.startDate,
    bundles: run.bundles,
    physical: { laptop: run.laptop, badge: run.badge, phone_extension: run.phoneExtension },
    directory_user_id: run.directoryUserId,
    equipment_ticket: ticket ? { id: ticket.ticket_id, number: ticket.ticket_number } : null,
    tasks: run.tasks.map((task) => taskJson(task, { dueAt: true }) as OnboardingJson['tasks'][number]),
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
    cancelled_at: run.cancelledAt?.toISOString() ?? null,
  };
}
