import { Type, type TSchema } from '@sinclair/typebox';
import { IdParams, strictObject, type ApiRouter } from '@msp/http';
import type { Request } from 'express';

/**
 * `POST /<kind>s/:id/retry`, the same for every kind of run: the engine's retry (runs.service.ts)
 * behind it, the kind's schema and JSON in front.
 */
export function registerRetryRoute<R>(
  api: ApiRouter,
  route: {
    kind: string;
    tag: string;
    openKey: string;
    schema: TSchema;
    retry(req: Request, id: string): Promise<R>;
    json(run: R): object;
  },
) {
  const { kind } = route;
  const Kind = kind[0]!.toUpperCase() + kind.slice(1);
  api.route({
    method: 'post',
    path: `/${kind}s/:id/retry`,
    operationId: `retry${Kind}`,
    summary: `Retry what failed in an ${kind}`,
    description:
      'Re-queues the tasks that failed (and those skipped because of them), keeping those that succeeded: they go back to `pending` with `attempts` from 0 ' +
      '(each retry has the full number of tries), `detail`, `result` and times cleared, due now (or at their own due time if that is still ahead). ' +
      `The run's status is recomputed from its tasks (\`in_progress\`, or \`scheduled\` when nothing of ` +
      `it has run) and the queue takes it up again; event \`${kind}.retried\`. ` +
      'Only a run that is `completed_with_errors` or `failed`: while it is `scheduled` or `in_progress`, ' +
      'when it was `cancelled`, or when it `completed`, 409 with `current_status`; ' +
      `a 409 also when another ${kind} of the same ${route.openKey} was opened meanwhile. ` +
      "A retry that arrives while a job of the run is at work waits for that job to end (the run's lock) and then decides on the run as it is then.",
    tags: [route.tag],
    scope: 'admin:tenant',
    params: IdParams,
    errors: [409],
    responses: {
      202: { description: 'Re-queued: the run as it is now; poll it for the outcome.', schema: route.schema },
    },
    handler: async (req, res, { params }) => {
      res.status(202).json(route.json(await route.retry(req, params.id)));
    },
  });
}

/** `?dry_run=true` on a kind's POST: the run as it would be made, nothing written. */
export const DryRunQuery = strictObject({
  dry_run: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'true: answer 200 with the run as it would be made (no `id`), every task with its `due_at` ' +
        'and a `plan` sentence, and `problems` listing what would fail now ' +
        '(directory unreachable, account not found or already there, group missing, desk refusing). The same checks as a real request (4xx alike); ' +
        'nothing is stored, no event recorded, no job queued, nothing changed in the directory or desk (they are only read).',
      examples: [true],
    }),
  ),
});

export interface RunPreview<R> {
  run: R;
  plans: string[];
  problems: object[];
}

/** The answer of a dry run: the kind's JSON without an id, each task with its plan, and the problems. */
export function previewJson<R>(json: (run: R) => { tasks: object[] }, preview: RunPreview<R>) {
  const body = json(preview.run);
  return {
    ...body,
    id: null,
    tasks: body.tasks.map((task, i) => ({ ...task, plan: preview.plans[i] })),
    problems: preview.problems,
  };
}
