import type { RecordChange } from '@msp/events';
import type { Db } from '../db';

export interface LeaveSettingsRecord {
  /** `MM-DD`. */
  carryOverExpiry: string;
  allowNegativeBalance: boolean;
}

/** A tenant that never saved its settings: §7 (3) BUrlG's 31 March, no negative balances. */
export const DEFAULT_LEAVE_SETTINGS: LeaveSettingsRecord = { carryOverExpiry: '03-31', allowNegativeBalance: false };

/** One row per tenant (the tenant id is the key); a tenant without a row has the defaults. */
export function createLeaveSettingsRepository(db: Db) {
  return {
    async find(tenantId: string): Promise<LeaveSettingsRecord> {
      const row = await db.leaveSettings.findUnique({ where: { tenantId } });
      return row ? { carryOverExpiry: row.carryOverExpiry, allowNegativeBalance: row.allowNegativeBalance } : DEFAULT_LEAVE_SETTINGS;
    },

    /** Replaces the settings as a whole and `record`s the change with what they were before. */
    replace(tenantId: string, settings: LeaveSettingsRecord, record: RecordChange<{ before: LeaveSettingsRecord; after: LeaveSettingsRecord }>): Promise<LeaveSettingsRecord> {
      return db.$transaction(async (tx) => {
        // The row's lock (or the insert's) orders concurrent replaces, so `before` is what each one replaced.
        const old = await tx.leaveSettings.findUnique({ where: { tenantId } });
        const data = { carryOverExpiry: settings.carryOverExpiry, allowNegativeBalance: settings.allowNegativeBalance };
        const row = await tx.leaveSettings.upsert({ where: { tenantId }, create: { tenantId, ...data }, update: data });
        const after = { carryOverExpiry: row.carryOverExpiry, allowNegativeBalance: row.allowNegativeBalance };
        await record(tx, { before: old ? { carryOverExpiry: old.carryOverExpiry, allowNegativeBalance: old.allowNegativeBalance } : DEFAULT_LEAVE_SETTINGS, after });
        return after;
      });
    },
  };
}

export type LeaveSettingsRepository = ReturnType<typeof createLeaveSettingsRepository>;
