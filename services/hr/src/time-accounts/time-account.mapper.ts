import type { TimeAccountJson } from './time-account.schemas';
import type { TimeAccount } from './time-accounts.service';

export function timeAccountJson(account: TimeAccount): TimeAccountJson {
  return {
    period: account.period,
    target_minutes: account.targetMinutes,
    worked_minutes: account.workedMinutes,
    credited_minutes: account.creditedMinutes,
    balance_minutes: account.balanceMinutes,
    opening_balance_minutes: account.openingBalanceMinutes,
    closing_balance_minutes: account.closingBalanceMinutes,
  };
}
