import type { Readable, Transform } from 'node:stream';
import { AppError, unprocessable, type FieldError, type Leases } from '@msp/http';
import type { PayrollSettingsRepository } from '../payroll/payroll-settings.repository';
import { createPayrollCsvStream } from './payroll-csv';
import { createPayrollDatevStream, DATEV_MAX_PERSONNEL_NUMBER_LENGTH } from './payroll-datev';
import type { PayrollExportRepository } from './payroll-export.repository';
import type { ExportFormat } from './payroll-export.schemas';
import { periodOf } from './payroll-row';

export interface PayrollFile {
  contentType: string;
  filename: string;
  /** The rows as the database produces them. */
  rows: Readable;
  /** Turns them into the file's bytes. */
  writer: Transform;
  /** Call when the file is sent or abandoned: the tenant may export again. */
  done(): Promise<void>;
}

/** What a tenant with an export still running is told to wait before trying again. */
export const EXPORT_RUNNING_RETRY_AFTER_SECONDS = 5;

export function createPayrollExportService(deps: {
  settings: PayrollSettingsRepository;
  exports: PayrollExportRepository;
  leases: Leases;
}) {
  const { settings, exports: exportRows, leases } = deps;

  /**
   * Everything DATEV cannot import is found before the first byte: the numbers of the [Allgemein]
   * section, and every personnel number longer than LODAS's five digits, all at once, so the clerk
   * fixes them in one go.
   */
  async function checkDatev(
    tenantId: string,
    label: string,
    found: Awaited<ReturnType<PayrollSettingsRepository['find']>>,
  ) {
    const errors: FieldError[] = [];
    if (!found.consultantNumber)
      errors.push({
        field: 'datev.consultant_number',
        message: 'is not set: PUT /payroll/settings with the Beraternummer',
      });
    if (!found.clientNumber)
      errors.push({
        field: 'datev.client_number',
        message: 'is not set: PUT /payroll/settings with the Mandantennummer',
      });
    const tooLong = await exportRows.personnelNumbersLongerThan(
      tenantId,
      periodOf(label),
      found.wageTypes,
      DATEV_MAX_PERSONNEL_NUMBER_LENGTH,
    );
    for (const number of tooLong) {
      errors.push({
        field: 'personnel_number',
        message: `${number} has more than ${DATEV_MAX_PERSONNEL_NUMBER_LENGTH} digits, which DATEV LODAS cannot take: change it with PATCH /employees/{id}`,
      });
    }
    if (errors.length) {
      const parts = [];
      if (!found.consultantNumber || !found.clientNumber)
        parts.push('set the DATEV consultant and client numbers in the payroll settings');
      if (tooLong.length)
        parts.push(
          `give these employees personnel numbers of at most ${DATEV_MAX_PERSONNEL_NUMBER_LENGTH} digits: ${tooLong.join(', ')}`,
        );
      throw unprocessable(`The DATEV file cannot be made yet: ${parts.join('; and ')}.`, {
        errors,
        extensions: tooLong.length ? { personnel_numbers: tooLong } : undefined,
      });
    }
  }

  async function build(
    tenantId: string,
    label: string,
    format: ExportFormat,
    signal?: AbortSignal,
  ): Promise<Omit<PayrollFile, 'done'>> {
    const found = await settings.find(tenantId);
    const period = periodOf(label);
    if (format === 'datev') {
      await checkDatev(tenantId, label, found);
      // The writer before the rows: nothing may fail between opening the rows' cursor and handing it on.
      const { consultantNumber, clientNumber, bsNumbers } = found;
      const writer = createPayrollDatevStream({
        consultantNumber: consultantNumber!,
        clientNumber: clientNumber!,
        period,
        bsNumbers,
      });
      const rows = await exportRows.rows(tenantId, period, found.wageTypes, signal);
      return { contentType: 'text/plain; charset=windows-1252', filename: `payroll-${label}.txt`, writer, rows };
    }
    const writer = createPayrollCsvStream(label);
    const rows = await exportRows.rows(tenantId, period, found.wageTypes, signal);
    return { contentType: 'text/csv; charset=utf-8', filename: `payroll-${label}.csv`, writer, rows };
  }

  return {
    /**
     * One export at a time per tenant, across every instance: the export's connections are few, and
     * no tenant may hold more than one of them. `signal`: the caller went away; a query still on its
     * way to the first row is cancelled.
     */
    async open(tenantId: string, label: string, format: ExportFormat, signal?: AbortSignal): Promise<PayrollFile> {
      const lease = await leases.acquire(tenantId);
      if (!lease) {
        throw new AppError(
          429,
          'A payroll export of your tenant is still running: one runs at a time. Retry after the time given in Retry-After, once it has finished.',
          {
            code: 'export-in-progress',
            headers: { 'Retry-After': String(EXPORT_RUNNING_RETRY_AFTER_SECONDS) },
          },
        );
      }
      try {
        return { ...(await build(tenantId, label, format, signal)), done: () => lease.release() };
      } catch (error) {
        await lease.release();
        throw error;
      }
    },
  };
}

export type PayrollExportService = ReturnType<typeof createPayrollExportService>;
