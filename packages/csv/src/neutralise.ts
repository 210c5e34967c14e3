/** The characters a spreadsheet reads, at the start of a cell, as the start of a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * OWASP CSV injection: a spreadsheet runs a cell starting with = + - @ (or a tab or CR in front of
 * one) as a formula. A leading single quote makes it text; the value stays readable.
 */
export function neutralised(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}
