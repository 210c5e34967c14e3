// @msp/csv: the files the services stream to a caller (hr's payroll CSV, desk's billable time),
// written once: RFC 4180 CSV with formula-looking cells neutralised, and the block coalescing
// between a row writer and the response.
export { createCsvStream, type CsvCell, type CsvStreamOptions } from './csv-stream';
export { neutralised } from './neutralise';
export { coalesce } from './coalesce';
