import {
  API_BASE_PATH,
  IdParams,
  LINK_HEADER,
  pageRequestOf,
  sendPage,
  type ApiRouter,
  LIST_PAGES_DOC,
  unprocessableResponse,
} from '@msp/http';
import { tenantOf } from '@msp/auth';
import { onboardingJson } from './onboarding.mapper';
import {
  CreateOnboardingBody,
  ListOnboardingsQuery,
  OnboardingPreview,
  Onboarding,
  OnboardingPage,
} from './onboarding.schemas';
import { DryRunQuery, previewJson, registerRetryRoute } from '../runs/run-routes';
import type { RunsService } from '../runs/runs.service';
import type { OnboardingRecord } from './onboarding.tasks';
import type { OnboardingCredentials } from './onboarding-credentials';
import { OnboardingCredentialsJson } from './onboarding.schemas';

const SCOPE = 'admin:tenant';
const TAGS = ['Onboarding'];

export function registerOnboardingRoutes(
  api: ApiRouter,
  deps: {
    onboardings: RunsService<OnboardingRecord, CreateOnboardingBody>;
    credentials: Pick<OnboardingCredentials, 'retrieve'>;
  },
) {
  const { onboardings, credentials } = deps;

  api.route({
    method: 'get',
    path: '/onboardings',
    operationId: 'listOnboardings',
    summary: 'List onboardings',
    description:
      'Your onboardings, newest first (`created_at` descending, then `id`), each with its tasks.' + LIST_PAGES_DOC,
    tags: TAGS,
    scope: SCOPE,
    query: ListOnboardingsQuery,
    responses: { 200: { description: 'One page of onboardings.', schema: OnboardingPage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await onboardings.list(tenantOf(req), { status: query.status }, page);
      sendPage(req, res, items.map(onboardingJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/onboardings/:id',
    operationId: 'getOnboarding',
    summary: 'Show an onboarding',
    description: "The run and each task's status, detail and times.",
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The onboarding.', schema: Onboarding } },
    handler: async (req, res, { params }) => {
      res.json(onboardingJson(await onboardings.get(tenantOf(req), params.id)));
    },
  });

  api.route({
    method: 'post',
    path: '/onboardings',
    operationId: 'createOnboarding',
    summary: 'Start an onboarding',
    description:
      'Creates the run and starts it at once on the job queue (the account must exist before the start date): ' +
      '`create_account`, then `assign_bundles`, then `equipment_ticket`. ' +
      'When `start_date` is still ahead (UTC), the account is created inactive (`active: false`, licences and ' +
      'groups ready) and `activate_account` makes it active at the start of `start_date` (00:00 UTC): ' +
      'until then the run is `in_progress` and can be cancelled (`POST /onboardings/:id/cancel`). ' +
      "The directory is the managed tenant whose `domain` is the e-mail's domain, or the one `tenant_id` " +
      'names; none, a suspended one, or one without an enabled connector is 422. ' +
      "`manager_id` must be an active desk user of your tenant (422), asked of desk with link's own " +
      'service credential; when desk cannot be asked, 503 and nothing is created. ' +
      'An onboarding of the same e-mail already `scheduled` or `in_progress` is 409.',
    tags: TAGS,
    scope: SCOPE,
    body: CreateOnboardingBody,
    query: DryRunQuery,
    errors: [409, 422, 503],
    responses: {
      201: {
        description: 'Created and queued; `Location` names the run.',
        schema: Onboarding,
        headers: { Location: { description: 'URL of the new onboarding.', schema: { type: 'string' } } },
      },
      200: {
        description:
          "`?dry_run=true`: the onboarding as it would be made, with each task's `plan` and the `problems` it would meet now; nothing was written.",
        schema: OnboardingPreview,
      },
    },
    handler: async (req, res, { body, query }) => {
      if (query.dry_run) {
        res.status(200).json(previewJson(onboardingJson, await onboardings.preview(tenantOf(req), body)));
        return;
      }
      const run = await onboardings.create(tenantOf(req), body);
      res.status(201).location(`${API_BASE_PATH}/onboardings/${run.id}`).json(onboardingJson(run));
    },
  });

  api.route({
    method: 'post',
    path: '/onboardings/:id/cancel',
    operationId: 'cancelOnboarding',
    summary: 'Cancel a staged onboarding',
    description:
      'Only a staged onboarding (its `start_date` was still ahead, so it has an `activate_account` task not yet ' +
      'run): its equipment ticket in desk (`equipment_ticket`) gets an internal comment ' +
      'saying the onboarding was cancelled and is resolved (left as it is when a technician already resolved or ' +
      'closed it; a change by someone else in between is read again, never overwritten), ' +
      'the staged account is deleted from the directory (SCIM DELETE), ' +
      'the tasks still to do become `skipped`, the run `cancelled` (event `onboarding.cancelled`) and the e-mail may be onboarded again. ' +
      'An onboarding that is not staged, already activated, finished or cancelled, or whose first tasks are still running, is 409 with `current_status`. ' +
      'When desk cannot resolve the ticket (`desk-unavailable`), or the directory cannot delete the account ' +
      '(`directory-unavailable`), 503 and nothing is cancelled; a cancel tried again comments once. A cancel ' +
      "that arrives while a job of the run is at work waits for that job to end (the run's lock, which the " +
      'workers hold too) and then decides on the run as it is then.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    errors: [409, 503],
    responses: {
      200: {
        description:
          'Cancelled: the equipment ticket is resolved, the staged account is gone and nothing more will run.',
        schema: Onboarding,
      },
    },
    handler: async (req, res, { params }) => {
      res.json(onboardingJson(await onboardings.cancel(tenantOf(req), params.id)));
    },
  });

  api.route({
    method: 'post',
    path: '/onboardings/:id/credentials',
    operationId: 'retrieveOnboardingCredentials',
    summary: "Read a joiner's initial password, once",
    description:
      "For directories where link sets the first password (`ldap` connectors): the account's user name " +
      '(`sAMAccountName` / `uid`) and its random initial password, which must be changed at first logon. ' +
      'It is kept sealed until this call and erased by it: a second call is 410 `credentials_already_retrieved`. ' +
      'Before `create_account` has made the account (or for a directory that sets the password itself) 409.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    errors: [409],
    responses: {
      200: { description: 'The credentials; they are not kept any longer.', schema: OnboardingCredentialsJson },
      410: unprocessableResponse('`credentials_already_retrieved`: the password was read once and is no longer kept.'),
    },
    handler: async (req, res, { params }) => {
      const found = await credentials.retrieve(tenantOf(req), params.id);
      res.set('Cache-Control', 'no-store').json({ user_name: found.userName, initial_password: found.initialPassword });
    },
  });

  registerRetryRoute(api, {
    kind: 'onboarding',
    tag: TAGS[0]!,
    openKey: 'e-mail',
    schema: Onboarding,
    retry: (req, id) => onboardings.retry(tenantOf(req), id),
    json: onboardingJson,
  });
}
