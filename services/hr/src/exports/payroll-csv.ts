import type { Transform } from 'node:stream';
import { createCsvStream } from '@msp/csv';
import type { PayrollRow } from './payroll-row';

/** The columns of the CSV export, in order (the header row). */
export const CSV_COLUMNS = ['personnel_number', 'name', 'period', 'wage_type', 'category', 'quantity', 'unit'] as const;

/**
 * Rows in, RFC 4180 text out, formula-looking cells neutralised (@msp/csv). The header row is
 * written even for an empty period.
 */
export function createPayrollCsvStream(period: string): Transform {
  return createCsvStream<PayrollRow>({
    columns: CSV_COLUMNS,
    cells: (row) => [row.personnel_number, row.name, period, row.wage_type, row.category, row.quantity, row.unit],
  });
}
