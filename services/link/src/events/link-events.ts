// The events link emits: what its webhooks may subscribe to, and what its audit log holds. Each is
// recorded in the transaction of the change it describes (the repositories do it). A job's events
// (a sync or a run ending) have the actor `system`: runs do not record who started them.
import { eventCatalogue, type EventType, type Sql } from '@msp/events';
import { Offboarding } from '../offboardings/offboarding.schemas';
import { Onboarding } from '../onboardings/onboarding.schemas';
import { SyncRun } from '../syncs/sync.schemas';
import { Tenant } from '../tenants/tenant.schemas';

const STATUS_CHANGES = '`changes.status` is `{from, to}`';

const EVENTS = [
  { type: 'tenant.created', summary: 'A managed tenant was registered.', object: Tenant },
  { type: 'tenant.updated', summary: 'A managed tenant was renamed, suspended or made active again; `changes` has the fields that differ.', object: Tenant, changes: true },
  {
    type: 'connector.sync.succeeded',
    summary: `A sync run of the connector (\`resource_id\`) succeeded; \`object\` is the run, with its stats; ${STATUS_CHANGES}.`,
    object: SyncRun,
    changes: true,
  },
  {
    type: 'connector.sync.failed',
    summary: `A sync run of the connector (\`resource_id\`) failed for good (its retries used up, or a refusal); \`object.error\` says why; ${STATUS_CHANGES}.`,
    object: SyncRun,
    changes: true,
  },
  { type: 'onboarding.completed', summary: `An onboarding finished and every task succeeded; ${STATUS_CHANGES}.`, object: Onboarding, changes: true },
  { type: 'onboarding.completed_with_errors', summary: `An onboarding finished with some tasks failed (see \`object.tasks\`); ${STATUS_CHANGES}.`, object: Onboarding, changes: true },
  { type: 'onboarding.failed', summary: `An onboarding failed: the account could not be created and the rest was skipped; ${STATUS_CHANGES}.`, object: Onboarding, changes: true },
  { type: 'offboarding.completed', summary: `An offboarding finished and every task succeeded; ${STATUS_CHANGES}.`, object: Offboarding, changes: true },
  { type: 'offboarding.completed_with_errors', summary: `An offboarding finished with some tasks failed (see \`object.tasks\`); ${STATUS_CHANGES}.`, object: Offboarding, changes: true },
  { type: 'offboarding.failed', summary: `An offboarding finished and no task succeeded; ${STATUS_CHANGES}.`, object: Offboarding, changes: true },
  { type: 'offboarding.cancelled', summary: `A scheduled offboarding was cancelled before anything ran; its tasks are skipped; ${STATUS_CHANGES}.`, object: Offboarding, changes: true },
] as const satisfies readonly EventType[];

export const linkEvents = eventCatalogue(EVENTS);

/** recordEvent, held to the names of the catalogue (a typo is a compile error, not a silent event). */
export const recordLinkEvent = linkEvents.record;

/** The tables whose rows link's events describe. */
type EventfulTable = 'managed_tenants' | 'sync_runs' | 'onboardings' | 'offboardings';

/**
 * Locks the row for the rest of the transaction; false when there is none. A change reads the
 * row's "before" after this, so `changes` is exact, and the events of one resource commit, and
 * take their `seq`, in the order of its changes.
 */
export async function lockRow(tx: Sql, table: EventfulTable, id: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM ${table} WHERE id = $1::uuid FOR UPDATE`, id);
  return rows.length > 0;
}
