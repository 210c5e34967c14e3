import type { Db } from '../db';
import { DEFAULT_WAGE_TYPES, WAGE_TYPE_KEYS, type WageTypes } from './payroll-settings.schemas';

export interface PayrollSettingsRecord {
  consultantNumber: string | null;
  clientNumber: string | null;
  wageTypes: WageTypes;
}

/** What a tenant that never saved its settings gets: no DATEV numbers, the default wage types. */
export const UNCONFIGURED: PayrollSettingsRecord = { consultantNumber: null, clientNumber: null, wageTypes: DEFAULT_WAGE_TYPES };

/** The stored JSON, read defensively: a key missing from an older row falls back to its default. */
function wageTypesOf(stored: unknown): WageTypes {
  const value = (stored ?? {}) as Partial<Record<string, unknown>>;
  return Object.fromEntries(WAGE_TYPE_KEYS.map((key) => [key, typeof value[key] === 'string' ? value[key] : DEFAULT_WAGE_TYPES[key]])) as WageTypes;
}

/** One row per tenant (the tenant id is the key); a tenant without a row is unconfigured. */
export function createPayrollSettingsRepository(db: Db) {
  return {
    async find(tenantId: string): Promise<PayrollSettingsRecord> {
      const row = await db.payrollSettings.findUnique({ where: { tenantId } });
      if (!row) return UNCONFIGURED;
      return { consultantNumber: row.consultantNumber, clientNumber: row.clientNumber, wageTypes: wageTypesOf(row.wageTypes) };
    },

    /** Replaces the tenant's settings as a whole (an upsert: the first PUT creates the row). */
    async replace(tenantId: string, settings: PayrollSettingsRecord): Promise<PayrollSettingsRecord> {
      const data = { consultantNumber: settings.consultantNumber, clientNumber: settings.clientNumber, wageTypes: settings.wageTypes };
      const row = await db.payrollSettings.upsert({ where: { tenantId }, create: { tenantId, ...data }, update: data });
      return { consultantNumber: row.consultantNumber, clientNumber: row.clientNumber, wageTypes: wageTypesOf(row.wageTypes) };
    },
  };
}

export type PayrollSettingsRepository = ReturnType<typeof createPayrollSettingsRepository>;
