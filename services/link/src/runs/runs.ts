import type { ApiRouter, Logger } from '@msp/http';
import type { Db } from '../db';
import type { DeskClient } from '../desk/desk-client';
import { createOffboardingsRepository } from '../offboardings/offboardings.repository';
import { registerOffboardingRoutes } from '../offboardings/offboardings.routes';
import { createOffboardingRunner } from '../offboardings/offboardings.runner';
import { createOffboardingsService, enqueueOffboarding } from '../offboardings/offboardings.service';
import { createOnboardingsRepository } from '../onboardings/onboardings.repository';
import { registerOnboardingRoutes } from '../onboardings/onboardings.routes';
import { createOnboardingRunner } from '../onboardings/onboardings.runner';
import { createOnboardingsService, onboardingJobId } from '../onboardings/onboardings.service';
import type { Directories } from './directory';
import { createRunTenantsRepository } from './managed-tenants.repository';
import { OFFBOARDING_QUEUE, ONBOARDING_QUEUE, type RunQueue } from './run-queue';
import { createRunTasksRepository } from './run-tasks.repository';

export interface RunsDeps {
  db: Db;
  logger: Logger;
  desk: DeskClient;
  directories: Directories;
  queue: RunQueue;
  /** Tries of one step through an outage before it fails for good (default 5). */
  maxAttempts?: number;
}

/** The job handler of each run queue: the job's data is `{ runId }`. */
export type RunHandlers = Record<typeof ONBOARDING_QUEUE | typeof OFFBOARDING_QUEUE, (data: { runId: string }) => Promise<void>>;

/**
 * Onboarding and offboarding, wired: their routes, the job handlers the queue calls, and the
 * start-up sweep that makes sure every open run has its job (should an enqueue have been lost).
 */
export function createRuns(deps: RunsDeps) {
  const { db, logger, desk, directories, queue } = deps;
  const maxAttempts = deps.maxAttempts ?? 5;
  const onboardings = createOnboardingsRepository(db);
  const offboardings = createOffboardingsRepository(db);
  const tenants = createRunTenantsRepository(db);
  const tasks = createRunTasksRepository(db);

  const runOnboarding = createOnboardingRunner({ onboardings, tasks, tenants, directories, desk, logger, maxAttempts });
  const runOffboarding = createOffboardingRunner({ offboardings, tasks, tenants, directories, desk, logger, maxAttempts });

  const handlers: RunHandlers = {
    [ONBOARDING_QUEUE]: ({ runId }) => runOnboarding(runId),
    [OFFBOARDING_QUEUE]: ({ runId }) => runOffboarding(runId),
  };

  return {
    handlers,
    /** Queue names and how many tries pg-boss should allow a job (each step counts its own). */
    queues: [ONBOARDING_QUEUE, OFFBOARDING_QUEUE] as const,
    maxAttempts,

    registerRoutes(api: ApiRouter) {
      registerOnboardingRoutes(api, { onboardings: createOnboardingsService({ onboardings, tenants, directories, desk, queue, logger }) });
      registerOffboardingRoutes(api, { offboardings: createOffboardingsService({ offboardings, tenants, desk, queue, logger }) });
    },

    /** Re-sends the job of every open run; the stable job ids make this a no-op for runs that have theirs. */
    async resume(): Promise<void> {
      for (const id of await onboardings.openIds()) await queue.send(ONBOARDING_QUEUE, { runId: id }, { id: onboardingJobId(id) });
      for (const run of await offboardings.openRuns()) await enqueueOffboarding(queue, run.id, run.dueTimes);
    },
  };
}

export type Runs = ReturnType<typeof createRuns>;
