import { ADMIN_SCOPE, tenantOf } from '@msp/auth';
import { IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { BusinessRuleProblem, created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  NewSlaPolicySchema,
  SlaPolicyChangesSchema,
  SlaPolicyListQuery,
  SlaPolicyPageSchema,
  SlaPolicySchema,
} from './sla-policy.schemas';
import type { SlaPoliciesService } from './sla-policies.service';

const REACH_RULE =
  "Each target must be reachable within 260 weeks (5 years) of the calendar's regular weeks: at most 260 × its business minutes a week " +
  '(a calendar open 08:00–17:00 on weekdays, 2,700 minutes a week, takes any target up to the maximum; one open ' +
  'a minute a week at most 260), else 422 `urn:msp:problem:targets-beyond-calendar` naming each target; ' +
  'without a calendar (24×7) every target fits.';

const TAGS = ['SLA policies'];
const DEFAULT_RULE = 'A tenant has at most one default: `is_default: true` unsets the previous default (never a 409).';

export function registerSlaPolicyRoutes(api: ApiRouter, policies: SlaPoliciesService) {
  api.route({
    method: 'get',
    path: '/sla-policies',
    operationId: 'listSlaPolicies',
    summary: 'List SLA policies',
    description: 'Newest first (`created_at` descending, then `id`).' + LIST_PAGES_DOC,
    tags: TAGS,
    scope: ADMIN_SCOPE,
    query: SlaPolicyListQuery,
    responses: { 200: page('A page of SLA policies.', SlaPolicyPageSchema) },
    handler: async (req, res, { query }) => {
      const paging = pageRequestOf(query);
      const { items, total } = await policies.list(tenantOf(req), paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'post',
    path: '/sla-policies',
    operationId: 'createSlaPolicy',
    summary: 'Create an SLA policy',
    description: `${DEFAULT_RULE} ${REACH_RULE} An unknown \`calendar_id\` is a 422; a name the tenant already uses a 409.`,
    tags: TAGS,
    scope: ADMIN_SCOPE,
    body: NewSlaPolicySchema,
    errors: [409],
    responses: {
      201: created('The created SLA policy.', SlaPolicySchema),
      422: unprocessableResponse(
        '`calendar_id` names no calendar of the tenant (`urn:msp:problem:unknown-reference`), ' +
          'or a target is beyond what the calendar reaches in 260 of its weeks ' +
          '(`urn:msp:problem:targets-beyond-calendar`, naming each target).',
        BusinessRuleProblem,
      ),
    },
    handler: async (req, res, { body }) => {
      sendCreated(res, '/sla-policies', await policies.create(tenantOf(req), body));
    },
  });

  api.route({
    method: 'get',
    path: '/sla-policies/:id',
    operationId: 'getSlaPolicy',
    summary: 'Read an SLA policy',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The SLA policy.', schema: SlaPolicySchema } },
    load: (req, { params }) => policies.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'patch',
    path: '/sla-policies/:id',
    operationId: 'updateSlaPolicy',
    summary: 'Change an SLA policy',
    description: `${DEFAULT_RULE} ${REACH_RULE} Tickets opened before the change keep the targets and calendar they were opened with.`,
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    body: SlaPolicyChangesSchema,
    errors: [409],
    responses: {
      200: { description: 'The SLA policy after the change.', schema: SlaPolicySchema },
      422: unprocessableResponse(
        '`calendar_id` names no calendar of the tenant (`urn:msp:problem:unknown-reference`), ' +
          'or a target is beyond what the calendar reaches in 260 of its weeks ' +
          '(`urn:msp:problem:targets-beyond-calendar`, naming each target).',
        BusinessRuleProblem,
      ),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await policies.update(tenantOf(req), params.id, body));
    },
  });

  api.route({
    method: 'delete',
    path: '/sla-policies/:id',
    operationId: 'deleteSlaPolicy',
    summary: 'Delete an SLA policy',
    description:
      'A policy a client names (`sla_policy_id`) is a 409 (`urn:msp:problem:sla-policy-in-use`): point those clients elsewhere first. ' +
      'Deleting the default leaves the tenant without one. Tickets opened under the policy keep their clocks.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    errors: [409],
    responses: { 204: { description: 'Deleted.' } },
    handler: async (req, res, { params }) => {
      await policies.delete(tenantOf(req), params.id);
      res.status(204).end();
    },
  });
}
