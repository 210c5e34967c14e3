import { format } from 'fast-csv';
import type { Transform } from 'node:stream';
import type { PayrollRow } from './payroll-row';

/** The columns of the CSV export, in order (the header row). */
export const CSV_COLUMNS = ['personnel_number', 'name', 'period', 'wage_type', 'category', 'quantity', 'unit'] as const;

/**
 * OWASP CSV injection: a spreadsheet runs a cell starting with = + - @ (or a tab or CR in front of
 * one) as a formula. A leading single quote makes it text; the value stays readable.
 */
export function neutralised(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/**
 * Rows in, RFC 4180 text out (comma, CRLF after every record including the last, quotes where a
 * field holds a comma, a quote or a line break; quotes doubled). A Transform: it keeps the
 * back-pressure of whatever it is piped between. The header row is written even for an empty period.
 */
export function createPayrollCsvStream(period: string): Transform {
  return format<PayrollRow, string[]>({
    headers: [...CSV_COLUMNS],
    alwaysWriteHeaders: true,
    rowDelimiter: '\r\n',
    includeEndRowDelimiter: true,
    transform: (row: PayrollRow) => [row.personnel_number, row.name, period, row.wage_type, row.category, row.quantity, row.unit].map(neutralised),
  });
}
