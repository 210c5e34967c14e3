import {
  API_BASE_PATH,
  IdParams,
  LINK_HEADER,
  pageRequestOf,
  sendPage,
  type ApiRouter,
  LIST_PAGES_DOC,
} from '@msp/http';
import { tenantOf } from '@msp/auth';
import { moveJson } from './move.mapper';
import { CreateMoveBody, MovePreview, ListMovesQuery, Move, MovePage } from './move.schemas';
import { DryRunQuery, previewJson, registerRetryRoute } from '../runs/run-routes';
import type { RunsService } from '../runs/runs.service';
import type { MoveRecord } from './move.tasks';

const SCOPE = 'admin:tenant';
const TAGS = ['Moves'];

const LOCATION = { Location: { description: 'URL of the move.', schema: { type: 'string' } } };

export function registerMoveRoutes(api: ApiRouter, deps: { moves: RunsService<MoveRecord, CreateMoveBody> }) {
  const { moves } = deps;

  api.route({
    method: 'get',
    path: '/moves',
    operationId: 'listMoves',
    summary: 'List moves',
    description:
      'Your moves, newest first (`created_at` descending, then `id`), each with its tasks and their due times.' +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: SCOPE,
    query: ListMovesQuery,
    responses: { 200: { description: 'One page of moves.', schema: MovePage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await moves.list(tenantOf(req), { status: query.status }, page);
      sendPage(req, res, items.map(moveJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/moves/:id',
    operationId: 'getMove',
    summary: 'Show a move',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The move.', schema: Move } },
    handler: async (req, res, { params }) => {
      res.json(moveJson(await moves.get(tenantOf(req), params.id)));
    },
  });

  api.route({
    method: 'post',
    path: '/moves',
    operationId: 'createMove',
    summary: 'Schedule a move',
    description:
      'Schedules the run: `scheduled` until the start of `effective_date` (UTC), at once when that is today or past. Tasks, in order: `update_account` ' +
      "(SCIM PATCH of `title` and the enterprise extension's `department` and `manager`: the " +
      "directory id of the account whose userName is the manager's desk e-mail), " +
      '`change_bundles` (PATCH on `/Groups`, each bundle the group of that displayName; a missing group is ' +
      'reported in `result.missing` and the task is `failed` while the others are changed, ' +
      'so the move ends `completed_with_errors`), `equipment_ticket` (only with `physical`: a desk ticket, category hardware). ' +
      "The account is found as offboarding finds it: the user's desk e-mail, the managed tenant of its domain, the account of that userName. " +
      '`user_id` and `manager_id` must be active desk users of your tenant (422; when desk cannot be ' +
      "asked, 503); an `effective_date` after the user's scheduled last day " +
      '(an offboarding still scheduled or in progress) is 422; a group both in `bundles.add` and `bundles.remove` is 422; ' +
      'a second `scheduled` or `in_progress` move of one user for the same date is 409.',
    tags: TAGS,
    scope: SCOPE,
    body: CreateMoveBody,
    query: DryRunQuery,
    errors: [409, 422, 503],
    responses: {
      201: { description: 'Scheduled; `Location` names the run.', schema: Move, headers: LOCATION },
      200: {
        description:
          "`?dry_run=true`: the move as it would be made, with each task's `plan` and the `problems` it would meet now; nothing was written.",
        schema: MovePreview,
      },
    },
    handler: async (req, res, { body, query }) => {
      if (query.dry_run) {
        res.status(200).json(previewJson(moveJson, await moves.preview(tenantOf(req), body)));
        return;
      }
      const run = await moves.create(tenantOf(req), body);
      res.status(201).location(`${API_BASE_PATH}/moves/${run.id}`).json(moveJson(run));
    },
  });

  api.route({
    method: 'post',
    path: '/moves/:id/cancel',
    operationId: 'cancelMove',
    summary: 'Cancel a move',
    description:
      'Only while it is `scheduled` and nothing has run yet; afterwards (or when already cancelled or ' +
      'finished) 409 with `current_status`. Its tasks become `skipped`; event `move.cancelled`. A cancel ' +
      "that arrives while a job of the run is at work waits for that job to end (the run's lock, which the " +
      'workers hold too) and then decides on the run as it is then.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    errors: [409],
    responses: { 200: { description: 'Cancelled: nothing will run.', schema: Move } },
    handler: async (req, res, { params }) => {
      res.json(moveJson(await moves.cancel(tenantOf(req), params.id)));
    },
  });

  registerRetryRoute(api, {
    kind: 'move',
    tag: TAGS[0]!,
    openKey: 'user and date',
    schema: Move,
    retry: (req, id) => moves.retry(tenantOf(req), id),
    json: moveJson,
  });
}
