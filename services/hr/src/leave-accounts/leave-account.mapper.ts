import type { LeaveAccount } from './leave-account-rules';
import type { LeaveAccountJson, LeaveAdjustmentJson } from './leave-account.schemas';
import type { LeaveAdjustmentRecord } from './leave-accounts.repository';

export function leaveAdjustmentJson(adjustment: LeaveAdjustmentRecord): LeaveAdjustmentJson {
  return {
    id: adjustment.id,
    employee_id: adjustment.employeeId,
    year: adjustment.year,
    days: adjustment.days,
    reason: adjustment.reason,
    created_at: adjustment.createdAt,
  };
}

export function leaveAccountJson(
  account: LeaveAccount,
  adjustments: readonly LeaveAdjustmentRecord[],
): LeaveAccountJson {
  return {
    year: account.year,
    entitlement_days: account.entitlementDays,
    carried_over_days: account.carriedOverDays,
    carry_over_expires_on: account.carryOverExpiresOn,
    expired_days: account.expiredDays,
    adjustments_days: account.adjustmentsDays,
    taken_days: account.takenDays,
    planned_days: account.plannedDays,
    requested_days: account.requestedDays,
    remaining_days: account.remainingDays,
    adjustments: adjustments.map(leaveAdjustmentJson),
  };
}
