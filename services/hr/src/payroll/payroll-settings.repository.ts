import type { Db } from '../db';
import { DEFAULT_BS_NUMBERS, DEFAULT_WAGE_TYPES, WAGE_TYPE_KEYS, type BsNumbers, type WageTypes } from './payroll-settings.schemas';

export interface PayrollSettingsRecord {
  consultantNumber: string | null;
  clientNumber: string | null;
  wageTypes: WageTypes;
  /** DATEV Bearbeitungsschlüssel per category. */
  bsNumbers: BsNumbers;
}

/** What a tenant that never saved its settings gets: no DATEV numbers, the default wage types and Bearbeitungsschlüssel. */
export const UNCONFIGURED: PayrollSettingsRecord = { consultantNumber: null, clientNumber: null, wageTypes: DEFAULT_WAGE_TYPES, bsNumbers: DEFAULT_BS_NUMBERS };

/** The stored JSON, read defensively: a key missing from an older row falls back to its default. */
function wageTypesOf(stored: unknown): WageTypes {
  const value = (stored ?? {}) as Partial<Record<string, unknown>>;
  return Object.fromEntries(WAGE_TYPE_KEYS.map((key) => [key, typeof value[key] === 'string' ? value[key] : DEFAULT_WAGE_TYPES[key]])) as WageTypes;
}

/** Likewise for the Bearbeitungsschlüssel (a row saved before they existed holds `{}`). */
function bsNumbersOf(stored: unknown): BsNumbers {
  const value = (stored ?? {}) as Partial<Record<string, unknown>>;
  return Object.fromEntries(WAGE_TYPE_KEYS.map((key) => [key, typeof value[key] === 'number' ? value[key] : DEFAULT_BS_NUMBERS[key]])) as BsNumbers;
}

type Row = { consultantNumber: string | null; clientNumber: string | null; wageTypes: unknown; bsNumbers: unknown };
const toRecord = (row: Row): PayrollSettingsRecord => ({
  consultantNumber: row.consultantNumber,
  clientNumber: row.clientNumber,
  wageTypes: wageTypesOf(row.wageTypes),
  bsNumbers: bsNumbersOf(row.bsNumbers),
});

/** One row per tenant (the tenant id is the key); a tenant without a row is unconfigured. */
export function createPayrollSettingsRepository(db: Db) {
  return {
    async find(tenantId: string): Promise<PayrollSettingsRecord> {
      const row = await db.payrollSettings.findUnique({ where: { tenantId } });
      return row ? toRecord(row) : UNCONFIGURED;
    },

    /** Replaces the tenant's settings as a whole (an upsert: the first PUT creates the row). */
    async replace(tenantId: string, settings: PayrollSettingsRecord): Promise<PayrollSettingsRecord> {
      const data = { consultantNumber: settings.consultantNumber, clientNumber: settings.clientNumber, wageTypes: settings.wageTypes, bsNumbers: settings.bsNumbers };
      return toRecord(await db.payrollSettings.upsert({ where: { tenantId }, create: { tenantId, ...data }, update: data }));
    },
  };
}

export type PayrollSettingsRepository = ReturnType<typeof createPayrollSettingsRepository>;
