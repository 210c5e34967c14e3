// The events link emits: what its webhooks may subscribe to, and what its audit log holds. Each is
// recorded by a service (or a run's worker) in the transaction of the change it describes. A job's
// events (a sync or a run ending) have the actor `system`: runs do not record who started them.
import { eventCatalogue, type EventType } from '@msp/events';
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
