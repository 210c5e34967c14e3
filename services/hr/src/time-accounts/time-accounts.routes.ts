import { IdParams, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { timeAccountJson } from './time-account.mapper';
import { TimeAccount, TimeAccountQuery } from './time-account.schemas';
import type { TimeAccountsService } from './time-accounts.service';

export function registerTimeAccountRoutes(api: ApiRouter, deps: { accounts: TimeAccountsService }) {
  const { accounts } = deps;

  api.route({
    method: 'get',
    path: '/employees/:id/time-account',
    operationId: 'getTimeAccount',
    summary: "Show a month of an employee's overtime account",
    description:
      'The overtime account (Arbeitszeitkonto) of one month, in minutes. The target is the ' +
      "contract's `weekly_minutes` spread evenly over its `working_days`, on the " +
      "month's working days that are no public holiday of the contract's `state` (8 March is " +
      'one in DE-BE, not in DE-BY) and lie inside the employment. Worked ' +
      "minutes are the timesheets' working time (standby, Rufbereitschaft, is no working time " +
      'under the ArbZG). Approved leave credits the target of its days. ' +
      'The balance carries from month to month since the employment started: ' +
      '`closing_balance_minutes` of one month is `opening_balance_minutes` of the next. ' +
      'A contract with `opening_balance_minutes` starts the account afresh on its `valid_from` with that balance (overtime brought in, e.g. from before hr ' +
      'kept the sheets); the days before it no longer count for the months from then on. The target and the balance are counted, not walked day by day: ' +
      'any month of 1900–2199 answers alike.',
    tags: ['Timesheets'],
    scope: 'read:hr',
    params: IdParams,
    query: TimeAccountQuery,
    responses: { 200: { description: 'The month of the account.', schema: TimeAccount } },
    handler: async (req, res, { params, query }) => {
      res.json(
        timeAccountJson(
          await accounts.month(tenantOf(req), params.id, query.period ?? new Date().toISOString().slice(0, 7)),
        ),
      );
    },
  });
}
