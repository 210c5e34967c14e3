import type { LeaveSettingsJson } from './leave-settings.schemas';
import type { LeaveSettingsRecord } from './leave-settings.repository';

export function leaveSettingsJson(settings: LeaveSettingsRecord): LeaveSettingsJson {
  return { carry_over_expiry: settings.carryOverExpiry, allow_negative_balance: settings.allowNegativeBalance };
}
