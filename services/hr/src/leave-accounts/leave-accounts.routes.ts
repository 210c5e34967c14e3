import { API_BASE_PATH, IdParams, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { leaveAccountJson, leaveAdjustmentJson } from './leave-account.mapper';
import { CreateLeaveAdjustmentBody, LeaveAccount, LeaveAccountQuery, LeaveAdjustment } from './leave-account.schemas';
import type { LeaveAccountsService } from './leave-accounts.service';

const TAGS = ['Leaves'];

export function registerLeaveAccountRoutes(api: ApiRouter, deps: { accounts: LeaveAccountsService }) {
  const { accounts } = deps;

  api.route({
    method: 'get',
    path: '/employees/:id/leave-account',
    operationId: 'getLeaveAccount',
    summary: "Show an employee's leave account of a year",
    description:
      "The year's entitlement and how it is used, in working days (Bundesurlaubsgesetz). Entitlement: the contracts' `vacation_days_per_year` (at least the " +
      "four weeks of §3) spread by the days each holds; the whole year's once the waiting period of §4 (six months) is complete, 1/12 per full month of " +
      'employment in a year of entry whose waiting period ends only the next year (§5 (1) a) and in a year of exit on or before 30 June (§5 (1) c), ' +
      'fractions of at least half a day rounded up (§5 (2)). What is left at the end of a year is carried over and expires after `carry_over_expires_on` ' +
      "(the tenant's `carry_over_expiry`, default 31 March as in §7 (3)); carried-over days are used first. Vacation days covered by a sick leave return " +
      'to the account (§9). `taken_days` are approved vacation days up to today (UTC; all of a past year), `planned_days` approved ones after today, ' +
      '`requested_days` the ones not yet approved; `remaining_days = entitlement_days + ' +
      'carried_over_days − expired_days + adjustments_days − taken_days − planned_days`.',
    tags: TAGS,
    scope: 'read:hr',
    params: IdParams,
    query: LeaveAccountQuery,
    responses: { 200: { description: 'The account of the year.', schema: LeaveAccount } },
    handler: async (req, res, { params, query }) => {
      const { account, adjustments } = await accounts.account(
        tenantOf(req),
        params.id,
        query.year ?? new Date().getUTCFullYear(),
      );
      res.json(leaveAccountJson(account, adjustments));
    },
  });

  api.route({
    method: 'post',
    path: '/employees/:id/leave-adjustments',
    operationId: 'createLeaveAdjustment',
    summary: 'Adjust a leave account',
    description:
      "Adds (or, negative, takes away) working days to a year's account, in steps of 0.5: days a collective agreement grants beyond the contract, or a " +
      "correction. It counts in `adjustments_days` and is listed in the account's `adjustments`. Records a `leave_adjustment.created` event.",
    tags: TAGS,
    scope: 'write:hr',
    params: IdParams,
    body: CreateLeaveAdjustmentBody,
    responses: {
      201: {
        description: 'Recorded; `Location` names the account of the year.',
        schema: LeaveAdjustment,
        headers: {
          Location: { description: "URL of the leave account of the adjustment's year.", schema: { type: 'string' } },
        },
      },
    },
    handler: async (req, res, { params, body }) => {
      const adjustment = await accounts.adjust(tenantOf(req), params.id, {
        year: body.year,
        days: body.days,
        reason: body.reason,
      });
      res
        .status(201)
        .location(`${API_BASE_PATH}/employees/${params.id}/leave-account?year=${adjustment.year}`)
        .json(leaveAdjustmentJson(adjustment));
    },
  });
}
