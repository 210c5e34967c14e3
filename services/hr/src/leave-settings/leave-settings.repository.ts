import { rawSqlOverKysely } from '@msp/db';
import type { RecordChange } from '@msp/events';
import type { Db } from '../db';

export interface LeaveSettingsRecord {
  /** `MM-DD`. */
  carryOverExpiry: string;
  allowNegativeBalance: boolean;
}

/** A tenant that never saved its settings: §7 (3) BUrlG's 31 March, no negative balances. */
export const DEFAULT_LEAVE_SETTINGS: LeaveSettingsRecord = { carryOverExpiry: '03-31', allowNegativeBalance: false };

const toSettings = (row: { carry_over_expiry: string; allow_negative_balance: boolean }): LeaveSettingsRecord => ({
  carryOverExpiry: row.carry_over_expiry,
  allowNegativeBalance: row.allow_negative_balance,
});

/** One row per tenant (the tenant id is the key); a tenant without a row has the defaults. */
export function createLeaveSettingsRepository(db: Db) {
  return {
    async find(tenantId: string): Promise<LeaveSettingsRecord> {
      const row = await db
        .selectFrom('leave_settings')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? toSettings(row) : DEFAULT_LEAVE_SETTINGS;
    },

    /** Replaces the settings as a whole and `record`s the change with what they were before. */
    replace(
      tenantId: string,
      settings: LeaveSettingsRecord,
      record: RecordChange<{ before: LeaveSettingsRecord; after: LeaveSettingsRecord }>,
    ): Promise<LeaveSettingsRecord> {
      return db.transaction().execute(async (trx) => {
        // The row's lock (or the insert's) orders concurrent replaces, so `before` is what each one replaced.
        const old = await trx
          .selectFrom('leave_settings')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .forUpdate()
          .executeTakeFirst();
        const values = {
          carry_over_expiry: settings.carryOverExpiry,
          allow_negative_balance: settings.allowNegativeBalance,
        };
        const row = await trx
          .insertInto('leave_settings')
          .values({ tenant_id: tenantId, ...values })
          .onConflict((conflict) => conflict.column('tenant_id').doUpdateSet({ ...values, updated_at: new Date() }))
          .returningAll()
          .executeTakeFirstOrThrow();
        const after = toSettings(row);
        await record(rawSqlOverKysely(trx), { before: old ? toSettings(old) : DEFAULT_LEAVE_SETTINGS, after });
        return after;
      });
    },
  };
}

export type LeaveSettingsRepository = ReturnType<typeof createLeaveSettingsRepository>;
