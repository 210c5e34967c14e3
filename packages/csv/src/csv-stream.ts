import { format } from 'fast-csv';
import type { Transform } from 'node:stream';
import { neutralised } from './neutralise';

/** A cell as a row gives it: numbers are written as JavaScript prints them, null as an empty cell. */
export type CsvCell = string | number | null;

export interface CsvStreamOptions<Row extends object> {
  /** The header row: the columns' names, in order. */
  columns: readonly string[];
  /** One row's cells, in the order of `columns`. */
  cells: (row: Row) => readonly CsvCell[];
}

/**
 * Rows in (object mode), RFC 4180 text out: comma, CRLF after every record including the last,
 * double quotes where a field holds a comma, a quote or a line break (quotes doubled). The header
 * row is written even when no row comes. Every cell is neutralised against formula injection. A
 * Transform: it keeps the back-pressure of whatever it is piped between, so a file of any size
 * streams through in constant memory.
 */
export function createCsvStream<Row extends object>({ columns, cells }: CsvStreamOptions<Row>): Transform {
  return format<Row, string[]>({
    headers: [...columns],
    alwaysWriteHeaders: true,
    rowDelimiter: '\r\n',
    includeEndRowDelimiter: true,
    transform: (row: Row) => cells(row).map((cell) => neutralised(cell === null ? '' : String(cell))),
  });
}
