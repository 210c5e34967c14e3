import type { AppError } from '@msp/http';
import type { DeskClient } from '../desk/desk-client';
import type { Directories } from './directory';
import type { TenantsRepository } from '../tenants/tenants.repository';
import type { StepPreview } from './run-preview';
import type { RunTaskKey, RunTaskRecord } from './run-tasks.repository';
import type { TaskOutcome } from './run-tasks';

/**
 * A kind of run (onboarding, offboarding, move, …) as the engine sees it: a name, a table, an
 * input to check, and an ordered list of steps, each with its due-time rule and its executor.
 * Everything else (status, attempts, retries, due times, jobs, events, cancel and retry) is the
 * engine's: a new kind is one of these and nothing more.
 */

export const RUN_STATUSES = [
  'scheduled',
  'in_progress',
  'completed',
  'completed_with_errors',
  'failed',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** Runs whose tasks are still to do. */
export const OPEN_STATUSES: readonly RunStatus[] = ['scheduled', 'in_progress'];
export type RunEndStatus = 'completed' | 'completed_with_errors' | 'failed' | 'cancelled';

/** The columns every run table has, whatever its kind. */
export interface RunRecord {
  id: string;
  ownerTenantId: string;
  status: RunStatus;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  cancelledAt: Date | null;
  tasks: RunTaskRecord[];
}

/** The managed tenants as runs look them up (by id, or by an e-mail's domain). */
export type RunTenants = Pick<TenantsRepository, 'findById' | 'findByDomain'>;

/** What a run's executors remember on it. */
export interface RunFindings {
  managedTenantId?: string;
  directoryUserId?: string;
}

/** What a kind's executors need: the outside world, and a way to remember on the run what they found or made. */
export interface RunKindDeps {
  directories: Directories;
  desk: DeskClient;
  tenants: RunTenants;
  /** Remembers on the run what an executor found (its managed tenant) or made (its directory account). */
  save(runId: string, fields: RunFindings): Promise<void>;
  /** Keeps a joiner's initial password (sealed) for the one read of POST /onboardings/:id/credentials. */
  credentials?: { store(runId: string, userName: string, initialPasswordSealed: string): Promise<void> };
}

export interface RunStep<R extends RunRecord, I> {
  name: string;
  /** When the step is due for a new run with this input; null: the step is not part of that run. */
  due(input: I, now: Date): Date | null;
  /** Does the step; throws TaskFailure for a refusal, anything retryable for an outage. */
  execute(run: R, task: RunTaskRecord): Promise<TaskOutcome>;
  /** A dry run of the step on the run as it would be made: what it would do, what would fail now; reads only. */
  preview(run: R): Promise<StepPreview>;
  /** When the step fails for good, every later step is skipped with this detail (the run cannot go on). */
  skipRestOnFailure?: string;
}

/** Where a kind's runs are stored: its own table (its input columns), its tasks in `run_tasks`. */
export interface RunTable<R extends RunRecord = RunRecord, I = never> {
  /** Its table, e.g. `onboardings`. */
  table: 'onboardings' | 'offboardings' | 'moves';
  /** The column of `run_tasks` naming the run. */
  taskKey: RunTaskKey;
  /** The column that holds `openKey` while the run is open (unique with the owner): one open run per key. */
  openColumn: 'open_email' | 'open_user_id' | 'open_key';
  /** The name of that unique index. */
  openIndex: string;
  /** The kind's own columns of a new run. */
  columnsOf(input: I): Record<string, unknown>;
  /** The run of a row of its table and its tasks: the kind's one mapper. */
  toRun(row: Record<string, unknown>, tasks: RunTaskRecord[]): R;
}

export interface RunKind<R extends RunRecord = RunRecord, B = unknown, I extends object = object> {
  /** `onboarding`: the queue `onboarding-run`, the events `onboarding.*`, the resource type. */
  name: 'onboarding' | 'offboarding' | 'move';
  table: RunTable<R, I>;
  steps: RunStep<R, I>[];
  /** The API JSON of a run (answers and events alike). */
  json(run: R): object;
  /** Checks a request's body against the business rules (4xx AppError) and gives the new run's columns. */
  prepare(ownerTenantId: string, body: B, now: Date): Promise<I>;
  /** The value of the open column for this input or run (one open run per value). */
  openKey(run: I | R): string;
  /** The 409 when another run of that key is open. */
  openConflict(run: I | R): AppError;
  cancel: {
    /** Null when the run (locked) may be cancelled now, else why not (409). */
    refusal(run: R): string | null;
    /** Undoes outside what the run made before it is marked cancelled (a staged account). */
    undo?(run: R): Promise<void>;
    /** The detail of every task the cancel skips. */
    detail(run: R): string;
  };
}
