import { Type, type Static } from '@sinclair/typebox';
import { named, stringEnum, strictObject } from '@msp/http';
import { RequestMonth } from '../day.schemas';

export const EXPORT_FORMATS = ['csv', 'datev'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const PayrollExportQuery = strictObject({
  period: RequestMonth({ description: 'The payroll month, `YYYY-MM` (e.g. `2026-10`).', examples: ['2026-10'] }),
  format: Type.Optional(
    stringEnum(EXPORT_FORMATS, {
      default: 'csv',
      description:
        '`csv` (default): RFC 4180 CSV in UTF-8. `datev`: the DATEV LODAS ASCII import file in Windows-1252.',
    }),
  ),
});
export type PayrollExportQuery = Static<typeof PayrollExportQuery>;

/** The problem of an export refused for now (429: the tenant's export is running; 503: the pool is full). */
export const ExportBusyProblem = named(
  'ExportBusyProblem',
  Type.Object(
    {
      type: Type.String({
        description: '`urn:msp:problem:export-in-progress` (429) or `urn:msp:problem:export-capacity-exhausted` (503).',
      }),
      title: Type.String(),
      status: Type.Union([Type.Literal(429), Type.Literal(503)]),
      detail: Type.String(),
      request_id: Type.String(),
    },
    {
      additionalProperties: true,
      description: 'RFC 9457 problem document: no export now; retry after `Retry-After` seconds.',
    },
  ),
);
