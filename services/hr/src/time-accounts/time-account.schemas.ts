import { Type, type Static } from '@sinclair/typebox';
import { named, strictObject } from '@msp/http';
import { RequestMonth } from '../day.schemas';

export const TimeAccountQuery = strictObject({
  period: Type.Optional(
    RequestMonth({
      description: 'The month, `YYYY-MM` (e.g. `2027-03`); the current one (UTC) when left out.',
      examples: ['2027-03'],
    }),
  ),
});
export type TimeAccountQuery = Static<typeof TimeAccountQuery>;

const minutes = (description: string) => Type.Integer({ description });

export const TimeAccount = named(
  'TimeAccount',
  Type.Object(
    {
      period: Type.String({ description: 'The month, `YYYY-MM`.' }),
      target_minutes: minutes(
        'What the contracts ask for in the month: on each working day of the contract valid that ' +
          'day (its `working_days`) that is no public holiday of its `state` ' +
          'and lies inside the employment (`employment.start_date`–`end_date`), `weekly_minutes` ÷ ' +
          'the number of `working_days`, rounded to whole minutes per day. ' +
          'Days without a contract have no target.',
      ),
      worked_minutes: minutes(
        "The `worked_minutes` of the month's timesheets (working time under the ArbZG: standby is not counted).",
      ),
      credited_minutes: minutes(
        "The target of the month's days of approved leave (any type): a leave day counts as worked " +
          'for the account, so it neither adds overtime nor a debt. A day under ' +
          'two leaves (a sick leave over a vacation, §9 BUrlG) is credited once; a leave day without a target credits nothing.',
      ),
      balance_minutes: minutes(
        "`worked_minutes + credited_minutes − target_minutes`: the month's overtime (negative: hours owed).",
      ),
      opening_balance_minutes: minutes(
        "The balance carried into the month. When a contract that starts by the month's last day carries `opening_balance_minutes`, the account runs from " +
          "the latest such contract's `valid_from` (or the employment's start, if later): its opening balance plus every day's balance from then to the " +
          "month's start (in the month of `valid_from`: that balance, and only the days from `valid_from` count in the month). Otherwise the sum of every " +
          "month's balance since the employment started (`employment.start_date`, else the first contract's `valid_from`).",
      ),
      closing_balance_minutes: minutes(
        "`opening_balance_minutes + balance_minutes`: the next month's opening balance.",
      ),
    },
    {
      additionalProperties: false,
      description: "A month of an employee's overtime account (Arbeitszeitkonto), in minutes.",
      examples: [
        {
          period: '2027-03',
          target_minutes: 10080,
          worked_minutes: 9600,
          credited_minutes: 960,
          balance_minutes: 480,
          opening_balance_minutes: -120,
          closing_balance_minutes: 360,
        },
      ],
    },
  ),
);
export type TimeAccountJson = Static<typeof TimeAccount>;
