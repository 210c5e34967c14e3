import { resourceLockKey, type ResourceLock } from '@msp/http';

/**
 * The lock of one run, for everything that changes it: the run-engine worker around a job's steps,
 * and cancel and retry around their read, their outside effects (a staged account deleted) and
 * their write. It is the API router's resource lock (@msp/db's advisoryResourceLock, shared by every
 * link instance) under the key a PATCH, PUT or DELETE of `/<kind>s/:id` takes, so no worker step,
 * cancel, retry or write to the run interleaves with another on any instance: the second reads the
 * run only once the first has finished with it.
 */
export type RunLock = <T>(ownerTenantId: string, runId: string, task: () => Promise<T>) => Promise<T>;

export function runLockOf(lock: ResourceLock, kind: string): RunLock {
  return (ownerTenantId, runId, task) => lock(resourceLockKey(ownerTenantId, `/${kind}s/:id`, { id: runId }), task);
}
