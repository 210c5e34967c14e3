import type { Db } from '../db';
import {
  DEFAULT_BS_NUMBERS,
  DEFAULT_WAGE_TYPES,
  WAGE_TYPE_KEYS,
  type BsNumbers,
  type WageTypes,
} from './payroll-settings.schemas';

export interface PayrollSettingsRecord {
  consultantNumber: string | null;
  clientNumber: string | null;
  wageTypes: WageTypes;
  /** DATEV Bearbeitungsschlüssel per category. */
  bsNumbers: BsNumbers;
}

/** What a tenant that never saved its settings gets: no DATEV numbers, the default wage types and Bearbeitungsschlüssel. */
export const UNCONFIGURED: PayrollSettingsRecord = {
  consultantNumber: null,
  clientNumber: null,
  wageTypes: DEFAULT_WAGE_TYPES,
  bsNumbers: DEFAULT_BS_NUMBERS,
};

/** The stored JSON, read defensively: a key missing from an older row falls back to its default. */
function wageTypesOf(stored: unknown): WageTypes {
  const value = (stored ?? {}) as Partial<Record<string, unknown>>;
  return Object.fromEntries(
    WAGE_TYPE_KEYS.map((key) => [key, typeof value[key] === 'string' ? value[key] : DEFAULT_WAGE_TYPES[key]]),
  ) as WageTypes;
}

/** Likewise for the Bearbeitungsschlüssel (a row saved before they existed holds `{}`). */
function bsNumbersOf(stored: unknown): BsNumbers {
  const value = (stored ?? {}) as Partial<Record<string, unknown>>;
  return Object.fromEntries(
    WAGE_TYPE_KEYS.map((key) => [key, typeof value[key] === 'number' ? value[key] : DEFAULT_BS_NUMBERS[key]]),
  ) as BsNumbers;
}

type Row = { consultant_number: string | null; client_number: string | null; wage_types: unknown; bs_numbers: unknown };
const toSettings = (row: Row): PayrollSettingsRecord => ({
  consultantNumber: row.consultant_number,
  clientNumber: row.client_number,
  wageTypes: wageTypesOf(row.wage_types),
  bsNumbers: bsNumbersOf(row.bs_numbers),
});

/** One row per tenant (the tenant id is the key); a tenant without a row is unconfigured. */
export function createPayrollSettingsRepository(db: Db) {
  return {
    async find(tenantId: string): Promise<PayrollSettingsRecord> {
      const row = await db
        .selectFrom('payroll_settings')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? toSettings(row) : UNCONFIGURED;
    },

    /** Replaces the tenant's settings as a whole (an upsert: the first PUT creates the row). */
    async replace(tenantId: string, settings: PayrollSettingsRecord): Promise<PayrollSettingsRecord> {
      // JSON as its text, as hr writes every jsonb value (pg would send a JavaScript array as a PostgreSQL array).
      const values = {
        consultant_number: settings.consultantNumber,
        client_number: settings.clientNumber,
        wage_types: JSON.stringify(settings.wageTypes),
        bs_numbers: JSON.stringify(settings.bsNumbers),
      };
      const row = await db
        .insertInto('payroll_settings')
        .values({ tenant_id: tenantId, ...values })
        .onConflict((conflict) => conflict.column('tenant_id').doUpdateSet({ ...values, updated_at: new Date() }))
        .returningAll()
        .executeTakeFirstOrThrow();
      return toSettings(row);
    },
  };
}

export type PayrollSettingsRepository = ReturnType<typeof createPayrollSettingsRepository>;
