import { Type, type Static } from '@sinclair/typebox';
import { stringEnum, strictObject } from '@msp/http';

export const EXPORT_FORMATS = ['csv', 'datev'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const PayrollExportQuery = strictObject({
  period: Type.String({ format: 'year-month', description: 'The payroll month, `YYYY-MM` (e.g. `2026-10`).', examples: ['2026-10'] }),
  format: Type.Optional(
    stringEnum(EXPORT_FORMATS, {
      default: 'csv',
      description: '`csv` (default): RFC 4180 CSV in UTF-8. `datev`: the DATEV LODAS ASCII import file in Windows-1252.',
    }),
  ),
});
export type PayrollExportQuery = Static<typeof PayrollExportQuery>;
