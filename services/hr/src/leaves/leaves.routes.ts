import {
  API_BASE_PATH,
  IdParams,
  LINK_HEADER,
  LIST_PAGES_DOC,
  pageRequestOf,
  sendPage,
  unprocessableResponse,
  type ApiRouter,
} from '@msp/http';
import { tenantOf } from '@msp/auth';
import { Type } from '@sinclair/typebox';
import { InsufficientBalanceProblem } from '../leave-accounts/leave-account.schemas';
import { leaveJson } from './leave.mapper';
import { CreateLeaveBody, Leave, LeavePage, LeaveRuleProblem, ListLeavesQuery, UpdateLeaveBody } from './leave.schemas';
import type { LeavesService } from './leaves.service';

const TAGS = ['Leaves'];

export function registerLeaveRoutes(api: ApiRouter, deps: { leaves: LeavesService }) {
  const { leaves } = deps;

  api.route({
    method: 'get',
    path: '/leaves',
    operationId: 'listLeaves',
    summary: 'List leaves',
    description:
      'The leaves of your tenant, latest `start_date` first (then by `id`). `from` and `to` select the leaves that touch that range of days ' +
      '(ending on or after `from`, starting on or before `to`).' +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:hr',
    query: ListLeavesQuery,
    responses: { 200: { description: 'One page of leaves.', schema: LeavePage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const filter = { userId: query.user_id, status: query.status, type: query.type, from: query.from, to: query.to };
      const { items, total } = await leaves.list(tenantOf(req), filter, page);
      sendPage(req, res, items.map(leaveJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/leaves/:id',
    operationId: 'getLeave',
    summary: 'Show a leave',
    tags: TAGS,
    scope: 'read:hr',
    params: IdParams,
    responses: { 200: { description: 'The leave.', schema: Leave } },
    load: async (req, { params }) => leaveJson(await leaves.get(tenantOf(req), params.id)),
  });

  api.route({
    method: 'post',
    path: '/leaves',
    operationId: 'createLeave',
    summary: 'Request a leave',
    description:
      'Records a leave request; it starts `requested`. `working_days` counts the days from `start_date` to `end_date` (both included) that are working ' +
      "days of the employee's contract valid on each day and no public holiday of its `state` (before the first contract: Monday to Friday, not booked on " +
      'the account). A `vacation` must fit in the leave account of each year it touches (`remaining_days − requested_days`), else 422 ' +
      '`insufficient_leave_balance` naming the days left, unless the tenant allows negative balances (`PUT /leave/settings`); employees without a contract ' +
      'have no account to check. ' +
      '`user_id` must be the `user_id` of an employee of your tenant and `end_date` not before `start_date` (else 422 naming the field). ' +
      "A leave spans at most 3 years (parental leave, the longest, ends by the child's third birthday, §15 (2) BEEG): an `end_date` on or after the same day " +
      '3 years after `start_date` is a 422 naming `latest_end_date`, the last day it may end on. ' +
      'Overlapping a `requested` or `approved` leave of the same user is a 409 whose `existing_id` (and `existing_url`) names that leave; ' +
      "rejected and cancelled leaves do not block. A `sick` leave may overlap an `approved` vacation (§9 BUrlG): the vacation's working days it covers " +
      "return to the account and show in the vacation's `returned_days`. Of concurrent overlapping requests exactly one succeeds.",
    tags: TAGS,
    scope: 'write:hr',
    body: CreateLeaveBody,
    errors: [409],
    responses: {
      201: {
        description: 'Requested; `Location` names the new leave.',
        schema: Leave,
        headers: { Location: { description: 'URL of the new leave.', schema: { type: 'string' } } },
      },
      422: unprocessableResponse(
        '`user_id` is no employee of your tenant, or `end_date` is before `start_date` or more than 3 years ' +
          'after it (`latest_end_date`; `urn:msp:problem:unprocessable`); or a vacation beyond the days left ' +
          '(`urn:msp:problem:insufficient_leave_balance`, with `available_days`).',
        Type.Union([LeaveRuleProblem, InsufficientBalanceProblem], {
          examples: [
            {
              type: 'urn:msp:problem:insufficient_leave_balance',
              title: 'Insufficient leave balance',
              status: 422,
              detail:
                'The vacation needs 5 working days in 2026, but only 3 are left (remaining_days 4, of which 1 already requested).',
              request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
              errors: [{ field: 'end_date', message: 'needs 5 working days in 2026; 3 left' }],
              year: 2026,
              needed_days: 5,
              remaining_days: 4,
              requested_days: 1,
              available_days: 3,
            },
          ],
        }),
      ),
    },
    handler: async (req, res, { body }) => {
      const leave = await leaves.request(tenantOf(req), {
        userId: body.user_id,
        type: body.type,
        startDate: body.start_date,
        endDate: body.end_date,
        note: body.note,
      });
      res.status(201).location(`${API_BASE_PATH}/leaves/${leave.id}`).json(leaveJson(leave));
    },
  });

  api.route({
    method: 'patch',
    path: '/leaves/:id',
    operationId: 'updateLeave',
    summary: 'Approve, reject or cancel a leave',
    description:
      'Moves `status`: `requested` → `approved` | `rejected` | `cancelled`, `approved` → `cancelled`. `rejected` and `cancelled` are final ' +
      '(a leave is never revived, so it can never come back overlapping another). Any other move is a 422 ' +
      '(`urn:msp:problem:illegal-transition`) with `current_status` and `allowed_transitions`; asking for the current status changes nothing.',
    tags: TAGS,
    scope: 'write:hr',
    params: IdParams,
    body: UpdateLeaveBody,
    responses: {
      200: { description: 'The leave in its new state.', schema: Leave },
      422: unprocessableResponse('An illegal status move; the problem lists `allowed_transitions`.', LeaveRuleProblem),
    },
    handler: async (req, res, { params, body }) => {
      res.json(leaveJson(await leaves.move(tenantOf(req), params.id, body.status)));
    },
  });
}
