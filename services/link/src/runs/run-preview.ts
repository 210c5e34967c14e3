import { Type, type TObject } from '@sinclair/typebox';
import { named, stringEnum } from '@msp/http';
import { isDeskError } from '../desk/desk-client';
import type { DeskClient } from '../desk/desk-client';
import type { Directory, DirectoryDescription } from './directory';
import { TaskFailure } from './run-tasks';

/**
 * Dry runs (`?dry_run=true`): each step says what it would do (`plan`) and what
 * would fail now (`problems`), reading the directory and desk but changing nothing.
 */

export const PROBLEM_CODES = [
  'directory_unreachable',
  'account_not_found',
  'account_exists',
  'group_missing',
  'tenant_missing',
  'desk_refusing',
  'credentials_refused',
  'password_policy',
  'ou_missing',
  'insufficient_access',
] as const;

/** A directory's failures that name their own problem (an LDAP bind refused, a missing OU). */
const NAMED_DIRECTORY_FAILURES = new Set<string>([
  'credentials_refused',
  'password_policy',
  'ou_missing',
  'insufficient_access',
  'account_exists',
]);
export type ProblemCode = (typeof PROBLEM_CODES)[number];

export interface StepProblem {
  code: ProblemCode;
  detail: string;
}

export interface StepPreview {
  /** What the step would do, in one sentence: `create user ada.lovelace@contoso.com in contoso.com's directory`. */
  plan: string;
  problems: StepProblem[];
}

export const problem = (code: ProblemCode, detail: string): StepProblem => ({ code, detail });

/**
 * Runs a read of a preview: its answer, or null with the problem it met (a TaskFailure is the
 * step's own refusal, as `code`; an error of desk or of the directory says it could not be asked).
 */
export async function probe<T>(problems: StepProblem[], code: ProblemCode, read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    const message = (error as Error).message;
    if (error instanceof TaskFailure) problems.push(problem(code, message));
    else if (isDeskError(error)) problems.push(problem('desk_refusing', `desk refuses or cannot be asked: ${message}`));
    else {
      const kind = (error as { kind?: unknown }).kind;
      if (typeof kind === 'string' && NAMED_DIRECTORY_FAILURES.has(kind))
        problems.push(problem(kind as ProblemCode, message));
      else problems.push(problem('directory_unreachable', `The directory cannot be asked: ${message}`));
    }
    return null;
  }
}

/** Problems of adding to or removing from these groups: each one the directory does not have. */
export async function missingGroups(problems: StepProblem[], directory: Directory, names: string[]): Promise<void> {
  for (const name of names) {
    const before = problems.length;
    const group = await probe(problems, 'group_missing', () => directory.findGroupByDisplayName(name));
    if (group === null && problems.length === before)
      problems.push(problem('group_missing', `The directory has no group named "${name}".`));
    // A directory that cannot be asked says so once, not once per group.
    if (problems.length > before && problems[problems.length - 1]!.code !== 'group_missing') return;
  }
}

/**
 * The plan of group changes in a directory that names its groups (LDAP: `add to CN=VPN,OU=Groups,…`),
 * each group missing a problem; a directory that cannot be asked is one problem, not one per group.
 */
export async function groupPlans(
  problems: StepProblem[],
  describe: DirectoryDescription,
  changes: [verb: string, bundle: string][],
): Promise<string> {
  const lines: string[] = [];
  let asked = true;
  for (const [verb, bundle] of changes) {
    const before = problems.length;
    const dn = asked ? await probe(problems, 'directory_unreachable', () => describe.groupName(bundle)) : null;
    if (problems.length > before) asked = false;
    else if (asked && dn === null)
      problems.push(problem('group_missing', `The directory has no group for the bundle "${bundle}".`));
    lines.push(dn ? `${verb} ${dn}` : `${verb} group ${bundle}`);
  }
  return lines.join(', ');
}

/** Problems of opening a desk ticket for the client: desk cannot be asked, or knows no such client. */
export async function deskClientProblems(
  problems: StepProblem[],
  desk: DeskClient,
  ownerTenantId: string,
  clientId: string,
): Promise<void> {
  const client = await probe(problems, 'desk_refusing', () => desk.getClient(ownerTenantId, clientId));
  if (client === null && !problems.some((p) => p.code === 'desk_refusing'))
    problems.push(
      problem('desk_refusing', `desk knows no client ${clientId} in your tenant: the ticket would be refused.`),
    );
}

const Problem = Type.Object(
  {
    task: Type.String({ description: 'The task that would meet it.' }),
    code: stringEnum(PROBLEM_CODES, { description: 'What kind of problem.' }),
    detail: Type.String({ description: 'In words a technician can act on.' }),
  },
  { additionalProperties: false },
);

/** The answer of a dry run: the run as it would be made (no id), each task with its `plan`, and `problems`. */
export function previewSchema(
  name: string,
  kind: string,
  run: TObject,
  task: TObject,
  example: { plans: string[]; problems: { task: string; code: ProblemCode; detail: string }[] },
) {
  const runExample = (run.examples as Record<string, unknown>[] | undefined)?.[0] ?? {};
  const tasks = ((runExample.tasks as Record<string, unknown>[] | undefined) ?? []).map((t, i) => ({
    ...t,
    status: 'pending',
    detail: null,
    attempts: 0,
    result: null,
    started_at: null,
    finished_at: null,
    plan: example.plans[i] ?? '',
  }));
  return named(
    name,
    Type.Object(
      {
        ...run.properties,
        id: Type.Null({ description: 'A dry run makes no run: no id.' }),
        tasks: Type.Array(
          Type.Object(
            { ...task.properties, plan: Type.String({ description: 'What the task would do.' }) },
            { additionalProperties: false },
          ),
        ),
        problems: Type.Array(Problem, { description: 'What would fail if the tasks ran now (empty: nothing known).' }),
      },
      {
        additionalProperties: false,
        description: `The ${kind} as it would be made (\`?dry_run=true\`): nothing was stored, no event recorded, nothing changed in the directory or desk.`,
        examples: [
          {
            ...runExample,
            id: null,
            status: 'scheduled',
            started_at: null,
            finished_at: null,
            cancelled_at: null,
            tasks,
            problems: example.problems,
          },
        ],
      },
    ),
  );
}
