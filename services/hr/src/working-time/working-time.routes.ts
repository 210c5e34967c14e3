import { Readable } from 'node:stream';
import { createCsvStream, coalesce } from '@msp/csv';
import { IdParams, sendStreamedFile, type ApiRouter, type Logger } from '@msp/http';
import { tenantOf } from '@msp/auth';
import type { RecordDay } from './working-time-rules';
import { WORKING_TIME_CSV_COLUMNS, workingTimeCsvCells, workingTimeJson } from './working-time.mapper';
import { WorkingTimeAnswer, WorkingTimeQuery } from './working-time.schemas';
import type { WorkingTimeService } from './working-time.service';

const DESCRIPTION = [
  'The record of working time an inspector asks for (§16 (2), §17 ArbZG), from `from` (default 1 January of ' +
    "`to`'s year) to `to` (default today, UTC), at most one year (`to` before `from`, or a year or more after it: " +
    '400).',
  '',
  '- `days`: every day with a timesheet: worked minutes (working time), breaks (§4), standby ' +
    "(Rufbereitschaft, not working time) and the day's warnings (§4, §5, §9–§10).",
  '- `weeks`: the totals per ISO week.',
  '- `average` (§3 ArbZG): 10 h a day are allowed only when the average over 24 weeks stays within 8 h per ' +
    'Werktag. Worked minutes of the 24 weeks (168 days) ending at `to` ÷ the Werktage in them, Monday to Saturday ' +
    '(public holidays on them included): always 144. Over 480 min: warning `average_over_8_hours`.',
  '- `sundays` (§11 (1) ArbZG): at least 15 Sundays a year must stay free of work. The Sundays of the calendar ' +
    'year of `to` with working time; fewer than 15 free: warning `too_few_free_sundays`.',
  '',
  '**`format=csv`**: the days only, streamed as `text/csv; charset=utf-8` (RFC 4180: comma, ' +
    'CRLF, header row, file name `working-time-<from>-<to>.csv`), columns ' +
    `${WORKING_TIME_CSV_COLUMNS.map((c) => `\`${c}\``).join(', ')} (warnings as their codes, separated ` +
    `by spaces). A cell a spreadsheet would run as a formula gets a leading \`'\`.`,
].join('\n');

export function registerWorkingTimeRoutes(api: ApiRouter, deps: { workingTime: WorkingTimeService; logger: Logger }) {
  const { workingTime, logger } = deps;

  api.route({
    method: 'get',
    path: '/employees/:id/working-time',
    operationId: 'getWorkingTime',
    summary: "Show an employee's working-time record (ArbZG)",
    description: DESCRIPTION,
    tags: ['Timesheets'],
    scope: 'read:hr',
    params: IdParams,
    query: WorkingTimeQuery,
    responses: {
      200: {
        description:
          'The record (`application/json`), or for `format=csv` its days as a CSV file (`text/csv; charset=utf-8`, `Content-Disposition: attachment`).',
        schema: WorkingTimeAnswer,
        contentType: ['application/json', 'text/csv'],
        headers: {
          'Content-Disposition': {
            description: 'For `format=csv` only: `attachment; filename="working-time-<from>-<to>.csv"`.',
            schema: { type: 'string' },
          },
        },
      },
    },
    handler: async (req, res, { params, query }) => {
      const record = await workingTime.record(tenantOf(req), params.id, { from: query.from, to: query.to });
      if (query.format !== 'csv') {
        res.json(workingTimeJson(record));
        return;
      }
      await sendStreamedFile(res, logger, 'working-time record', { employee_id: params.id }, async () => ({
        contentType: 'text/csv; charset=utf-8',
        filename: `working-time-${record.from}-${record.to}.csv`,
        stages: [
          Readable.from(record.days),
          createCsvStream<RecordDay>({ columns: WORKING_TIME_CSV_COLUMNS, cells: workingTimeCsvCells }),
          coalesce(),
        ],
      }));
    },
  });
}
