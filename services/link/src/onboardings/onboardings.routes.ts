import { API_BASE_PATH, IdParams, LINK_HEADER, sendPage, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { onboardingJson } from './onboarding.mapper';
import { CreateOnboardingBody, ListOnboardingsQuery, Onboarding, OnboardingPage } from './onboarding.schemas';
import type { OnboardingsService } from './onboardings.service';

const SCOPE = 'admin:tenant';
const TAGS = ['Onboarding'];

export function registerOnboardingRoutes(api: ApiRouter, deps: { onboardings: OnboardingsService }) {
  const { onboardings } = deps;

  api.route({
    method: 'get',
    path: '/onboardings',
    operationId: 'listOnboardings',
    summary: 'List onboardings',
    description: 'Your onboardings, newest first (`created_at` descending, then `id`), each with its tasks.',
    tags: TAGS,
    scope: SCOPE,
    query: ListOnboardingsQuery,
    responses: { 200: { description: 'One page of onboardings.', schema: OnboardingPage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = { page: query.page, per_page: query.per_page };
      const { items, total } = await onboardings.list(tenantOf(req), { status: query.status }, page);
      sendPage(req, res, items.map(onboardingJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/onboardings/:id',
    operationId: 'getOnboarding',
    summary: 'Show an onboarding',
    description: 'The run and each task\'s status, detail and times.',
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
      'The directory is the managed tenant whose `domain` is the e-mail\'s domain, or the one `tenant_id` names; none, a suspended one, or one without an enabled connector is 422. ' +
      '`manager_id` must be an active desk user of your tenant (422), asked of desk with link\'s own service credential; when desk cannot be asked, 503 and nothing is created. ' +
      'An onboarding of the same e-mail already `scheduled` or `in_progress` is 409.',
    tags: TAGS,
    scope: SCOPE,
    body: CreateOnboardingBody,
    errors: [409, 422, 503],
    responses: {
      201: {
        description: 'Created and queued; `Location` names the run.',
        schema: Onboarding,
        headers: { Location: { description: 'URL of the new onboarding.', schema: { type: 'string' } } },
      },
    },
    handler: async (req, res, { body }) => {
      const run = await onboardings.create(tenantOf(req), body);
      res.status(201).location(`${API_BASE_PATH}/onboardings/${run.id}`).json(onboardingJson(run));
    },
  });
}
