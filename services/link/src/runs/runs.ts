import type { ApiRouter, Logger, ResourceLock } from '@msp/http';
import type { Db } from '../db';
import type { DeskClient } from '../desk/desk-client';
import { moveKind } from '../moves/move.kind';
import { registerMoveRoutes } from '../moves/moves.routes';
import { createMoveChecksRepository } from '../moves/moves.repository';
import { offboardingKind } from '../offboardings/offboarding.kind';
import { registerOffboardingRoutes } from '../offboardings/offboardings.routes';
import { onboardingKind } from '../onboardings/onboarding.kind';
import { registerOnboardingRoutes } from '../onboardings/onboardings.routes';
import { createOnboardingCredentials } from '../onboardings/onboarding-credentials';
import type { Directories } from './directory';
import { createRunWorker } from './run-engine';
import { runLockOf } from './run-lock';
import type { RunKind, RunKindDeps, RunRecord } from './run-kind';
import { MOVE_QUEUE, OFFBOARDING_QUEUE, ONBOARDING_QUEUE, queueOf, type RunQueue } from './run-queue';
import { createRunTasksRepository } from './run-tasks.repository';
import { createRunsRepository, type RunsRepository } from './runs.repository';
import { createRunsService } from './runs.service';
import { createTenantsRepository } from '../tenants/tenants.repository';

export interface RunsDeps {
  db: Db;
  /** Where the runs' lists read (the read replica, DATABASE_READ_URL); `db` when not given. */
  reads?: Db;
  logger: Logger;
  desk: DeskClient;
  directories: Directories;
  queue: RunQueue;
  /** Tries of one step through an outage before it fails for good (default 5). */
  maxAttempts?: number;
  /** The clock that decides what is due (tests move it; default the real time). */
  now?: () => Date;
  /**
   * The API's resource lock (the same instance the app's router takes, @msp/db's
   * advisoryResourceLock): workers, cancel and retry hold it for the run they change.
   */
  resourceLock: ResourceLock;
  /** Opens what a directory sealed (a joiner's initial password); without it no password is kept. */
  secrets?: { open(sealed: string): string };
}

/** The job handler of each run queue: the job's data is `{ runId }`. */
export type RunHandlers = Record<
  typeof ONBOARDING_QUEUE | typeof OFFBOARDING_QUEUE | typeof MOVE_QUEUE,
  (data: { runId: string }) => Promise<void>
>;

/**
 * The kinds of run, each handed to the one engine: its service (for its routes), its job handler,
 * and the start-up sweep that makes sure every open run has its jobs (should an enqueue have been lost).
 */
export function createRuns(deps: RunsDeps) {
  const { db, logger, desk, directories, queue } = deps;
  const maxAttempts = deps.maxAttempts ?? 5;
  const now = deps.now ?? (() => new Date());
  const tenants = createTenantsRepository(db);
  const tasks = createRunTasksRepository(db);
  const credentials = createOnboardingCredentials(
    db,
    deps.secrets ?? {
      open: () => {
        throw new Error('no secret box');
      },
    },
  );

  function engine<R extends RunRecord, B, I extends object>(make: (deps: RunKindDeps) => RunKind<R, B, I>) {
    // The kind names its table; its executors save to it through the repository made from it.
    const made: { runs?: RunsRepository<R, I> } = {};
    const kind = make({
      directories,
      desk,
      tenants,
      save: (id, fields) => made.runs!.save(id, fields),
      credentials: deps.secrets ? credentials : undefined,
    });
    const runs = (made.runs = createRunsRepository<R, I>(db, kind.table, deps.reads ?? db));
    const lock = runLockOf(deps.resourceLock, kind.name);
    return {
      kind,
      service: createRunsService({ kind, runs, queue, logger, now, lock }),
      handle: createRunWorker({
        kind: kind as RunKind<R, never, never>,
        runs,
        tasks,
        directories,
        logger,
        maxAttempts,
        now,
        lock,
      }),
    };
  }

  const onboardings = engine(onboardingKind);
  const offboardings = engine(offboardingKind);
  const moves = engine((kindDeps: RunKindDeps) => moveKind(kindDeps, createMoveChecksRepository(db)));
  const engines = [onboardings, offboardings, moves];

  const handlers = Object.fromEntries(
    engines.map(({ kind, handle }) => [queueOf(kind.name), ({ runId }: { runId: string }) => handle(runId)]),
  ) as RunHandlers;

  return {
    handlers,
    /** Queue names and how many tries pg-boss should allow a job (each step counts its own). */
    queues: [ONBOARDING_QUEUE, OFFBOARDING_QUEUE, MOVE_QUEUE] as const,
    maxAttempts,
    /** The most steps a run of any kind has (all may fall due in one job). */
    stepsPerJob: Math.max(...engines.map(({ kind }) => kind.steps.length)),

    registerRoutes(api: ApiRouter) {
      registerOnboardingRoutes(api, { onboardings: onboardings.service, credentials });
      registerOffboardingRoutes(api, { offboardings: offboardings.service });
      registerMoveRoutes(api, { moves: moves.service });
    },

    /** Re-sends the jobs of every open run; the stable job ids make this a no-op for runs that have theirs. */
    async resume(): Promise<void> {
      for (const { service } of engines) await service.resume();
    },
  };
}

export type Runs = ReturnType<typeof createRuns>;
