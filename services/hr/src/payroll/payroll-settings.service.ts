import type { PayrollSettingsRecord, PayrollSettingsRepository } from './payroll-settings.repository';

export function createPayrollSettingsService(settings: PayrollSettingsRepository) {
  return {
    /** The tenant's settings, or the defaults (no DATEV numbers) when it never saved any. */
    get(tenantId: string): Promise<PayrollSettingsRecord> {
      return settings.find(tenantId);
    },

    replace(tenantId: string, input: PayrollSettingsRecord): Promise<PayrollSettingsRecord> {
      return settings.replace(tenantId, input);
    },
  };
}

export type PayrollSettingsService = ReturnType<typeof createPayrollSettingsService>;
