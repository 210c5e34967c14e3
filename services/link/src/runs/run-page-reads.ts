import type { Pool } from 'pg';
import { poolRows, typeParsers } from '@msp/db';
import type { RunRecord, RunTable } from './run-kind';
import type { RunTaskRecord } from './run-tasks.repository';

/*
 * A list page's runs with their tasks in plain SQL, the same records Prisma's findMany with the
 * tasks relation answers (run-list-pages.test.ts holds every item of each kind's list to GET /:id,
 * which still reads through Prisma). Prisma interpreted its plan for the relation and joined the
 * tasks in JavaScript: ~3 ms of CPU for a page of 25 runs of 3 tasks, against ~0.8 ms for these
 * two statements (both index scans, 0.2–0.3 ms at 100,000 runs and 900,000 tasks; bench/README.md,
 * "link's run lists").
 */

const DATE_OID = 1082;

// A date is a UTC midnight, as Prisma answers a @db.Date (pg's own parser would use the process's
// time zone); everything else as pg parses it: timestamptz a Date, json an object, text[] an array.
const RECORD_PARSERS = typeParsers({ [DATE_OID]: (text: string) => new Date(`${text}T00:00:00.000Z`) });

/** A Prisma field's column: the schema maps every camelCase field to its snake_case column. */
const columnOf = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const selectList = (fields: string[]) => fields.map((field) => (columnOf(field) === field ? field : `${columnOf(field)} AS "${field}"`)).join(', ');

export function runPageReader<R extends RunRecord>(pool: Pool, spec: RunTable, runFields: string[], taskFields: string[]) {
  const rows = poolRows(pool, RECORD_PARSERS);
  const runKey = columnOf(spec.taskKey);
  const runsText = `SELECT ${selectList(runFields)} FROM ${spec.table} WHERE id = ANY($1::uuid[])`;
  const tasksText = `SELECT ${runKey} AS "runId", ${selectList(taskFields)} FROM run_tasks WHERE ${runKey} = ANY($1::uuid[]) ORDER BY ${runKey}, position`;

  /** The runs of `ids` in that order, each with its tasks in execution order; ids of no run are left out. */
  return async function runsOf(ids: string[]): Promise<R[]> {
    const [runs, tasks] = await Promise.all([
      rows<R>({ text: runsText, values: [ids] }),
      rows<RunTaskRecord & { runId: string }>({ text: tasksText, values: [ids] }),
    ]);
    const tasksOfRun = new Map<string, RunTaskRecord[]>();
    for (const { runId, ...task } of tasks) {
      const list = tasksOfRun.get(runId);
      if (list) list.push(task);
      else tasksOfRun.set(runId, [task]);
    }
    const byId = new Map(runs.map((run) => [run.id, run]));
    return ids.flatMap((id) => {
      const run = byId.get(id);
      return run ? [{ ...run, tasks: tasksOfRun.get(id) ?? [] }] : [];
    });
  };
}
