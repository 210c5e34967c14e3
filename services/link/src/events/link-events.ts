// The events link emits: what its webhooks may subscribe to, and what its audit log holds. Each is
// recorded by a service (or a run's worker) in the transaction of the change it describes. A job's
// events (a sync or a run ending) have the actor `system`: runs do not record who started them.
import { eventCatalogue, type EventType } from '@msp/events';
import { Move } from '../moves/move.schemas';
import { Offboarding } from '../offboardings/offboarding.schemas';
import { Onboarding } from '../onboardings/onboarding.schemas';
import { SyncRun } from '../syncs/sync.schemas';
import { Tenant } from '../tenants/tenant.schemas';

const STATUS_CHANGES = '`changes.status` is `{from, to}`';

const EVENTS = [
  { type: 'tenant.created', summary: 'A managed tenant was registered.', object: Tenant },
  {
    type: 'tenant.updated',
    summary: 'A managed tenant was renamed, suspended or made active again; `changes` has the fields that differ.',
    object: Tenant,
    changes: true,
  },
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
  {
    type: 'onboarding.completed',
    summary: `An onboarding finished and every task succeeded; ${STATUS_CHANGES}.`,
    object: Onboarding,
    changes: true,
  },
  {
    type: 'onboarding.completed_with_errors',
    summary: `An onboarding finished with some tasks failed (see \`object.tasks\`); ${STATUS_CHANGES}.`,
    object: Onboarding,
    changes: true,
  },
  {
    type: 'onboarding.failed',
    summary: `An onboarding failed: the account could not be created and the rest was skipped; ${STATUS_CHANGES}.`,
    object: Onboarding,
    changes: true,
  },
  {
    type: 'onboarding.cancelled',
    summary:
      'A staged onboarding was cancelled before its start date: its account was deleted from ' +
      `the directory, its remaining tasks skipped; ${STATUS_CHANGES}.`,
    object: Onboarding,
    changes: true,
  },
  {
    type: 'onboarding.retried',
    summary: `The failed tasks of a finished onboarding were re-queued (POST /onboardings/:id/retry); ${STATUS_CHANGES}.`,
    object: Onboarding,
    changes: true,
  },
  {
    type: 'offboarding.completed',
    summary: `An offboarding finished and every task succeeded; ${STATUS_CHANGES}.`,
    object: Offboarding,
    changes: true,
  },
  {
    type: 'offboarding.completed_with_errors',
    summary: `An offboarding finished with some tasks failed (see \`object.tasks\`); ${STATUS_CHANGES}.`,
    object: Offboarding,
    changes: true,
  },
  {
    type: 'offboarding.failed',
    summary: `An offboarding finished and no task succeeded; ${STATUS_CHANGES}.`,
    object: Offboarding,
    changes: true,
  },
  {
    type: 'offboarding.cancelled',
    summary: `A scheduled offboarding was cancelled before anything ran; its tasks are skipped; ${STATUS_CHANGES}.`,
    object: Offboarding,
    changes: true,
  },
  {
    type: 'offboarding.retried',
    summary: `The failed tasks of a finished offboarding were re-queued (POST /offboardings/:id/retry); ${STATUS_CHANGES}.`,
    object: Offboarding,
    changes: true,
  },
  {
    type: 'move.completed',
    summary: `A move finished and every task succeeded; ${STATUS_CHANGES}.`,
    object: Move,
    changes: true,
  },
  {
    type: 'move.completed_with_errors',
    summary: `A move finished with some tasks failed (a missing group: \`result.missing\` of \`change_bundles\`; see \`object.tasks\`); ${STATUS_CHANGES}.`,
    object: Move,
    changes: true,
  },
  {
    type: 'move.failed',
    summary: `A move finished and no task succeeded (e.g. the account was not found); ${STATUS_CHANGES}.`,
    object: Move,
    changes: true,
  },
  {
    type: 'move.cancelled',
    summary: `A scheduled move was cancelled before anything ran; its tasks are skipped; ${STATUS_CHANGES}.`,
    object: Move,
    changes: true,
  },
  {
    type: 'move.retried',
    summary: `The failed tasks of a finished move were re-queued (POST /moves/:id/retry); ${STATUS_CHANGES}.`,
    object: Move,
    changes: true,
  },
] as const satisfies readonly EventType[];

export const linkEvents = eventCatalogue(EVENTS);
