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
import { offboardingJson } from './offboarding.mapper';
import {
  CreateOffboardingBody,
  OffboardingPreview,
  ListOffboardingsQuery,
  Offboarding,
  OffboardingPage,
} from './offboarding.schemas';
import { DryRunQuery, previewJson, registerRetryRoute } from '../runs/run-routes';
import type { RunsService } from '../runs/runs.service';
import type { OffboardingRecord } from './offboarding.tasks';

const SCOPE = 'admin:tenant';
const TAGS = ['Offboarding'];

const LOCATION = { Location: { description: 'URL of the offboarding.', schema: { type: 'string' } } };

export function registerOffboardingRoutes(
  api: ApiRouter,
  deps: { offboardings: RunsService<OffboardingRecord, CreateOffboardingBody> },
) {
  const { offboardings } = deps;

  api.route({
    method: 'get',
    path: '/offboardings',
    operationId: 'listOffboardings',
    summary: 'List offboardings',
    description:
      'Your offboardings, newest first (`created_at` descending, then `id`), each with its tasks and their due times.' +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: SCOPE,
    query: ListOffboardingsQuery,
    responses: { 200: { description: 'One page of offboardings.', schema: OffboardingPage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await offboardings.list(tenantOf(req), { status: query.status }, page);
      sendPage(req, res, items.map(offboardingJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/offboardings/:id',
    operationId: 'getOffboarding',
    summary: 'Show an offboarding',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The offboarding.', schema: Offboarding } },
    handler: async (req, res, { params }) => {
      res.json(offboardingJson(await offboardings.get(tenantOf(req), params.id)));
    },
  });

  api.route({
    method: 'post',
    path: '/offboardings',
    operationId: 'createOffboarding',
    summary: 'Schedule an offboarding',
    description:
      'Schedules the run; nothing happens before its tasks are due. When `last_day` has ended (midnight UTC after it; a past day means now): ' +
      '`reassign_tickets`, `disable_account`, `delegate_mailbox`; `mailbox_retention_days` (0–3650) later: `delete_account`. ' +
      "The directory account is the one whose userName is the leaver's desk e-mail, in the managed tenant of that e-mail's domain. " +
      '`user_id` and `successor_id` must be active desk users of your tenant and differ (422), asked of ' +
      "desk with link's own service credential; when desk cannot be asked, 503. " +
      'A second `scheduled` or `in_progress` offboarding of one user is 409.',
    tags: TAGS,
    scope: SCOPE,
    body: CreateOffboardingBody,
    query: DryRunQuery,
    errors: [409, 422, 503],
    responses: {
      201: { description: 'Scheduled; `Location` names the run.', schema: Offboarding, headers: LOCATION },
      200: {
        description:
          "`?dry_run=true`: the offboarding as it would be made, with each task's `plan` and the `problems` it would meet now; nothing was written.",
        schema: OffboardingPreview,
      },
    },
    handler: async (req, res, { body, query }) => {
      if (query.dry_run) {
        res.status(200).json(previewJson(offboardingJson, await offboardings.preview(tenantOf(req), body)));
        return;
      }
      const run = await offboardings.create(tenantOf(req), body);
      res.status(201).location(`${API_BASE_PATH}/offboardings/${run.id}`).json(offboardingJson(run));
    },
  });

  api.route({
    method: 'post',
    path: '/offboardings/:id/cancel',
    operationId: 'cancelOffboarding',
    summary: 'Cancel an offboarding',
    description:
      'Only while it is `scheduled` and nothing has run yet; afterwards (or when already cancelled or ' +
      'finished) 409 with `current_status`. Its tasks become `skipped`. A cancel that arrives while a ' +
      "job of the run is at work waits for that job to end (the run's lock, which the workers hold " +
      'too) and then decides on the run as it is then.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    errors: [409],
    responses: { 200: { description: 'Cancelled: nothing will run.', schema: Offboarding } },
    handler: async (req, res, { params }) => {
      res.json(offboardingJson(await offboardings.cancel(tenantOf(req), params.id)));
    },
  });

  registerRetryRoute(api, {
    kind: 'offboarding',
    tag: TAGS[0]!,
    openKey: 'user',
    schema: Offboarding,
    retry: (req, id) => offboardings.retry(tenantOf(req), id),
    json: offboardingJson,
  });
}
