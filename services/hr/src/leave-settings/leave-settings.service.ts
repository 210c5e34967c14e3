import { hrEvents } from '../events/hr-events';
import { leaveSettingsJson } from './leave-settings.mapper';
import type { LeaveSettingsRecord, LeaveSettingsRepository } from './leave-settings.repository';

export function createLeaveSettingsService(settings: LeaveSettingsRepository) {
  return {
    /** The tenant's settings, or the defaults when it never saved any. */
    get(tenantId: string): Promise<LeaveSettingsRecord> {
      return settings.find(tenantId);
    },

    replace(tenantId: string, input: LeaveSettingsRecord): Promise<LeaveSettingsRecord> {
      return settings.replace(tenantId, input, (tx, { before, after }) =>
        hrEvents.record(tx, {
          type: 'leave_settings.updated',
          tenantId,
          resourceType: 'leave_settings',
          resourceId: tenantId,
          object: leaveSettingsJson(after),
          before: leaveSettingsJson(before),
        }),
      );
    },
  };
}

export type LeaveSettingsService = ReturnType<typeof createLeaveSettingsService>;
