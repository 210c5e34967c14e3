import type { PayrollSettingsRecord, PayrollSettingsRepository } from './payroll-settings.repository';
import { DEFAULT_BS_NUMBERS, DEFAULT_WAGE_TYPES, type BsNumbers, type WageTypes } from './payroll-settings.schemas';

/** A replacement as sent: the categories added later (`standby`) and the Bearbeitungsschlüssel may be left out. */
export interface PayrollSettingsInput {
  consultantNumber: string | null;
  clientNumber: string | null;
  wageTypes: Omit<WageTypes, 'standby'> & Partial<Pick<WageTypes, 'standby'>>;
  bsNumbers?: Partial<BsNumbers>;
}

export function createPayrollSettingsService(settings: PayrollSettingsRepository) {
  return {
    /** The tenant's settings, or the defaults (no DATEV numbers) when it never saved any. */
    get(tenantId: string): Promise<PayrollSettingsRecord> {
      return settings.find(tenantId);
    },

    /** A full replace; what may be left out takes its default, so what is stored is always complete. */
    replace(tenantId: string, input: PayrollSettingsInput): Promise<PayrollSettingsRecord> {
      return settings.replace(tenantId, {
        consultantNumber: input.consultantNumber,
        clientNumber: input.clientNumber,
        wageTypes: { ...DEFAULT_WAGE_TYPES, ...input.wageTypes },
        bsNumbers: { ...DEFAULT_BS_NUMBERS, ...input.bsNumbers },
      });
    },
  };
}

export type PayrollSettingsService = ReturnType<typeof createPayrollSettingsService>;
