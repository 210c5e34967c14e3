import type { RecordChange } from '@msp/events';
import { linkEvents } from '../events/link-events';
import type { RunKind, RunRecord } from './run-kind';
import type { RunChange } from './runs.repository';

type RunEventType = Parameters<typeof linkEvents.record>[1]['type'];

/**
 * A run's change is its event, named `<kind>.<change>` (`onboarding.completed`, `offboarding.cancelled`,
 * `onboarding.retried`, …): the run as it is now, `changes.status` from what it was.
 */
export function runChangeRecorder<R extends RunRecord>(
  kind: Pick<RunKind<R>, 'name' | 'json'>,
): RecordChange<RunChange<R>> {
  return (tx, { type, before, after }) =>
    linkEvents.record(tx, {
      type: `${kind.name}.${type}` as RunEventType,
      tenantId: after.ownerTenantId,
      resourceType: kind.name,
      resourceId: after.id,
      object: kind.json(after),
      before: kind.json(before),
    });
}
