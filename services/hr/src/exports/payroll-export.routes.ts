import { PROBLEM_CONTENT_TYPE, sendStreamedFile, STREAMED_FILE_IDLE_DOC, type ApiRouter, type Logger } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { coalesce } from '@msp/csv';
import { CSV_COLUMNS } from './payroll-csv';
import { DATEV_FIELDS, DATEV_TABLE } from './payroll-datev';
import { EXPORT_BUSY_RETRY_AFTER_SECONDS } from './payroll-export.repository';
import { ExportBusyProblem, PayrollExportQuery } from './payroll-export.schemas';
import { EXPORT_RUNNING_RETRY_AFTER_SECONDS, type PayrollExportService } from './payroll-export.service';

const TAGS = ['Payroll'];

const DESCRIPTION = [
  'The payroll of one month, for every employee with anything in it: one row per employee and wage type with a quantity that is not zero.',
  '',
  '- **Hours**: the minutes of the entries of the timesheets dated in the period, per category (`normal`, ' +
    '`overtime`, `on_call`, `travel`, `training`, and `standby`: Rufbereitschaft, paid but not working time, under ' +
    'its own wage type), in decimal hours rounded to two decimals (7 h 20 min = 7.33).',
  '- **Days**: the working days (Monday–Friday) of every **approved** leave inside the period, per type; a leave ' +
    'that spans two months is clipped (29 October–3 November gives October its Thursday and Friday). Requested, ' +
    "rejected and cancelled leaves are not paid out. A vacation's days that an approved `sick` leave covers are " +
    'paid as `sick` only (§9 BUrlG: they return to the leave account).',
  '- Each category becomes the wage type (DATEV Lohnart) of `GET /payroll/settings`. Rows are ' +
    'ordered by personnel number (numerically), then wage type (numerically), then category; ' +
    'two categories mapped to the same Lohnart stay two rows.',
  '- Timesheets and leaves are matched to employees by `user_id`; those of a `user_id` that is no ' +
    'employee of your tenant are not exported (register the employee first).',
  '- The file is streamed as the database produces the rows (memory stays flat however large the month); a client that disconnects stops the query.',
  '',
  `**\`format=csv\`** (default): \`text/csv; charset=utf-8\`, RFC 4180 (comma, CRLF, double quotes where a field ` +
    `needs them), file name \`payroll-YYYY-MM.csv\`. Columns: ${CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')}:`,
  '`personnel_number` and `name` of the employee, `period` (`YYYY-MM`), `wage_type` (the DATEV Lohnart), ' +
    '`category` (timesheet category or leave type), `quantity` (dot, two decimals), `unit` (`hours` or `days`).',
  "A cell a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or CR) gets a leading `'` (OWASP CSV injection).",
  '',
  '**`format=datev`**: the DATEV LODAS ASCII import file, `text/plain; charset=windows-1252`, CRLF, file name `payroll-YYYY-MM.txt`:',
  '`[Allgemein]` with `Ziel=LODAS`, `Version_SST=1.0`, `BeraterNr` and `MandantenNr` (from the settings), ' +
    '`Datumsformat=JJJJ-MM-TT`, `Feldtrennzeichen=;`, `Zahlenkomma=,`, `Kommentarzeichen=*`;',
  `\`[Satzbeschreibung]\` with record type 10 = \`${DATEV_TABLE}\` and the fields ${DATEV_FIELDS.map((f) => `\`${f}\``).join(', ')};`,
  '`[Bewegungsdaten]` with one line per employee and wage type, its fields in the order `[Satzbeschreibung]` ' +
    'declares: `10;<abrechnung_zeitraum: first day of the month, YYYY-MM-DD>;<pnr: Personalnummer>;<la_eigene: ' +
    'Lohnart>;<bs_nr: Bearbeitungsschlüssel of the category, `bs_nr` in the payroll settings, default 1 for hours ' +
    'and 2 for days>;<bs_wert_butab: quantity, decimal comma>;`, e.g. `10;2026-10-01;7;1000;1;12,33;`.',
  "Every record line of `[Satzbeschreibung]` and `[Bewegungsdaten]` ends with `;`, as in DATEV's examples.",
  "A comment line `* <personnel number> <name>` before each employee's lines is for the reader; LODAS skips it.",
  'A 422 names everything DATEV could not take before any byte is sent: missing consultant ' +
    '(Beraternummer) or client number (Mandantennummer), and every personnel number longer ' +
    'than 5 digits (in `errors` and `personnel_numbers`).',
  '',
  '**Limits**: one export runs at a time per tenant (across all instances; a second one answers 429 until the ' +
    'first has ended), and the exports of all tenants share a pool of connections (`EXPORT_POOL_SIZE`, 10 by ' +
    'default; none free within `EXPORT_POOL_ACQUIRE_TIMEOUT_MS`: 503). Both carry `Retry-After`. ' +
    STREAMED_FILE_IDLE_DOC,
].join('\n');

const RETRY_AFTER = (seconds: number) => ({
  'Retry-After': {
    description: `Seconds to wait before trying again (${seconds}).`,
    schema: { type: 'integer', examples: [seconds] },
  },
});

const problemExample = (status: number, code: string, title: string, detail: string) => ({
  type: `urn:msp:problem:${code}`,
  title,
  status,
  detail,
  request_id: '0e45781e-5e6d-481c-a743-4ca9e0ce2fec',
});

export function registerPayrollExportRoutes(
  api: ApiRouter,
  deps: { exports: PayrollExportService; logger: Logger; idleTimeoutMs: number },
) {
  const { exports: payrollExports, logger, idleTimeoutMs } = deps;

  api.route({
    method: 'get',
    path: '/exports/payroll',
    operationId: 'exportPayroll',
    summary: 'Export a month of payroll (CSV or DATEV LODAS)',
    description: DESCRIPTION,
    tags: TAGS,
    scope: 'read:payroll',
    query: PayrollExportQuery,
    errors: [422],
    responses: {
      200: {
        description: 'The file, streamed: CSV for `format=csv`, the DATEV LODAS import file for `format=datev`.',
        contentType: ['text/csv', 'text/plain'],
        headers: {
          'Content-Disposition': {
            description: '`attachment; filename="payroll-YYYY-MM.csv"` (`.txt` for DATEV).',
            schema: { type: 'string' },
          },
        },
      },
      429: {
        description:
          'An export of your tenant is still running (on any instance): one at a time per tenant. Retry after ' +
          '`Retry-After` seconds. (The rate limit answers 429 too, as `rate-limited`.)',
        schema: ExportBusyProblem,
        contentType: PROBLEM_CONTENT_TYPE,
        headers: RETRY_AFTER(EXPORT_RUNNING_RETRY_AFTER_SECONDS),
        example: problemExample(
          429,
          'export-in-progress',
          'Too Many Requests',
          'A payroll export of your tenant is still running: one runs at a time. Retry after the time given in Retry-After, once it has finished.',
        ),
      },
      503: {
        description:
          'Every connection of the export pool stayed busy for `EXPORT_POOL_ACQUIRE_TIMEOUT_MS` ' +
          '(other tenants are exporting). Retry after `Retry-After` seconds.',
        schema: ExportBusyProblem,
        contentType: PROBLEM_CONTENT_TYPE,
        headers: RETRY_AFTER(EXPORT_BUSY_RETRY_AFTER_SECONDS),
        example: problemExample(
          503,
          'export-capacity-exhausted',
          'Service Unavailable',
          'Every connection of the payroll export is busy (10 exports at once) and none came free within 5000 ms. Retry after the time given in Retry-After.',
        ),
      },
    },
    handler: async (req, res, { query }) => {
      await sendStreamedFile(
        res,
        logger,
        'payroll export',
        { period: query.period },
        async (signal) => {
          const file = await payrollExports.open(tenantOf(req), query.period, query.format ?? 'csv', signal);
          return {
            contentType: file.contentType,
            filename: file.filename,
            stages: [file.rows, file.writer, coalesce()],
            done: file.done,
          };
        },
        // A reader that stops taking bytes must not hold the export's cursor, connection and lease.
        { idleTimeoutMs },
      );
    },
  });
}
