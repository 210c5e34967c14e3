import {
  IdParams,
  PROBLEM_CONTENT_TYPE,
  pageRequestOf,
  sendPage,
  sendStreamedFile,
  LIST_PAGES_DOC,
  STREAMED_FILE_IDLE_DOC,
  type ApiRouter,
  type Logger,
} from '@msp/http';
import { tenantOf } from '@msp/auth';
import { coalesce } from '@msp/csv';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  NewTimeEntrySchema,
  TicketTimeEntryListQuery,
  TimeEntryChangesSchema,
  TimeEntryFiltersSchema,
  TimeEntryPageSchema,
  TimeEntryReportSchema,
  TimeEntrySchema,
  TimeEntryRuleProblem,
  TimeExportQuery,
  ExportBusyProblem,
} from './time-entry.schemas';
import { TIME_EXPORT_BUSY_RETRY_AFTER_SECONDS, TIME_EXPORT_POOL_SIZE } from './time-export.repository';
import { TIME_EXPORT_COLUMNS, type TimeEntriesService } from './time-entries.service';

const TAGS = ['Time entries'];

const ORDER = 'Ordered by `date` descending (the day worked, latest first), then `created_at` descending, then `id`.';
const USER_PROBLEM =
  '`user_id` names no active user of the tenant (`urn:msp:problem:unknown-reference`, `errors[0].field` is `user_id`).';

const EXPORT_DESCRIPTION = [
  'The billable time of one month for invoicing: one row per client, ticket, technician and price ' +
    '(currency and hourly rate) with the minutes of their **billable** entries dated in the month ' +
    'summed (non-billable entries are left out; a combination with none has no row). Entries priced ' +
    'apart (their own `hourly_rate`) make a row of their own.',
  'Rows are ordered by client name, then ticket number, then technician name, then currency and rate. ' +
    'Names and titles are the current ones; a deactivated technician keeps their rows.',
  '',
  `\`text/csv; charset=utf-8\`, RFC 4180 (comma, CRLF after every record, double quotes where a field ` +
    'needs them), a header row (also when the month has no billable time), file name ' +
    `\`time-YYYY-MM.csv\`. Columns: ${TIME_EXPORT_COLUMNS.map((c) => `\`${c}\``).join(', ')}:`,
  "`client_id` and `client_name` (the ticket's client), `ticket_number` and `ticket_title`, " +
    '`user_id` and `user_name` (the technician), `billable_minutes` (an integer), `hours` (the ' +
    'same in decimal hours, dot, two decimals: 1 h 20 min = `1.33`), ' +
    "`currency` (ISO 4217, the entries' currency), `hourly_rate` (the entries' rate in minor units, cents, per " +
    'hour; empty for entries without a rate) and `amount` (in minor units, an integer: ' +
    '`billable_minutes` × `hourly_rate` / 60 rounded half up to the minor unit once per row, as an invoice line ' +
    'is; empty without a rate). 80 minutes at 9500 (95.00 EUR an hour) is 12667 (126.67 EUR). ' +
    "A row's amount may differ by a minor unit from the sum of its entries' own `amount`s, each of which is rounded on its own.",
  'A cell a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, tab or CR) ' +
    "gets a leading `'` (OWASP CSV injection), exactly as in hr's payroll CSV.",
  'The file is streamed as the database produces the rows (memory stays flat however large the month); a client that disconnects stops the query.',
  `**Limits**: the exports of all tenants share a pool of ${TIME_EXPORT_POOL_SIZE} ` +
    'connections per instance; when none comes free within ' +
    `\`EXPORT_POOL_ACQUIRE_TIMEOUT_MS\` (5 s by default) the answer is 503 with \`Retry-After\`. ` +
    'An export still running when the service shuts down is cut short (an incomplete file: export ' +
    'again); one still waiting for its first row answers 503 with `Retry-After`. ' +
    STREAMED_FILE_IDLE_DOC,
].join('\n');

export function registerTimeEntryRoutes(
  api: ApiRouter,
  deps: { timeEntries: TimeEntriesService; logger: Logger; idleTimeoutMs: number },
) {
  const { timeEntries, logger, idleTimeoutMs } = deps;

  api.route({
    method: 'get',
    path: '/tickets/:id/time-entries',
    operationId: 'listTicketTimeEntries',
    summary: 'List the time entries of a ticket',
    description: ORDER + LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:tickets',
    params: IdParams,
    query: TicketTimeEntryListQuery,
    responses: { 200: page("A page of the ticket's time entries.", TimeEntryPageSchema) },
    handler: async (req, res, { params, query }) => {
      const paging = pageRequestOf(query);
      const { items, total } = await timeEntries.listForTicket(tenantOf(req), params.id, paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'post',
    path: '/tickets/:id/time-entries',
    operationId: 'createTicketTimeEntry',
    summary: 'Record time on a ticket',
    description:
      "`date` defaults to today in the tenant's calendar zone (Europe/Berlin unless desk's `DEFAULT_TIME_ZONE` says otherwise), `billable` to true. " +
      'Time may be recorded on a ticket in any status, a closed one too (time is often entered after the work is done). Records `time_entry.created`.',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    body: NewTimeEntrySchema,
    responses: {
      201: created('The created time entry.', TimeEntrySchema),
      422: unprocessableResponse(USER_PROBLEM, TimeEntryRuleProblem),
    },
    handler: async (req, res, { params, body }) => {
      sendCreated(res, '/time-entries', await timeEntries.create(tenantOf(req), params.id, body));
    },
  });

  api.route({
    method: 'get',
    path: '/time-entries',
    operationId: 'listTimeEntries',
    summary: 'List and total time entries',
    description:
      `Every time entry of the tenant, filtered (filters combine with AND; \`from\` and \`to\` include their days). ${ORDER} ` +
      '`totals` sums the minutes of **every** entry matching the filters, on all pages (`minutes`), and of the billable ones among them (`billable_minutes`).' +
      LIST_PAGES_DOC +
      ' `totals` are exact too: counters kept in the writing transaction for the whole list and ' +
      'each filter alone; several filters at once are summed over their entries.',
    tags: TAGS,
    scope: 'read:tickets',
    query: TimeEntryFiltersSchema,
    responses: { 200: page('A page of time entries, and the totals of the whole filter.', TimeEntryReportSchema) },
    handler: async (req, res, { query: { page: pageNumber, per_page, after, ...filters } }) => {
      const paging = pageRequestOf({ page: pageNumber, per_page, after });
      const { items, total, totals } = await timeEntries.list(tenantOf(req), filters, paging);
      sendPage(req, res, items, total, paging, { totals });
    },
  });

  api.route({
    method: 'get',
    path: '/time-entries/:id',
    operationId: 'getTimeEntry',
    summary: 'Read a time entry',
    tags: TAGS,
    scope: 'read:tickets',
    params: IdParams,
    responses: { 200: { description: 'The time entry.', schema: TimeEntrySchema } },
    load: (req, { params }) => timeEntries.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'patch',
    path: '/time-entries/:id',
    operationId: 'updateTimeEntry',
    summary: 'Change a time entry',
    description:
      'Changes the fields given; setting a field to its current value changes nothing and answers 200. A new `user_id` must be an active user; ' +
      'an entry keeps a user deactivated since. An entry stays on its ticket. Records `time_entry.updated` with the changes.',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    body: TimeEntryChangesSchema,
    responses: {
      200: { description: 'The time entry after the change.', schema: TimeEntrySchema },
      422: unprocessableResponse(USER_PROBLEM, TimeEntryRuleProblem),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await timeEntries.update(tenantOf(req), params.id, body));
    },
  });

  api.route({
    method: 'delete',
    path: '/time-entries/:id',
    operationId: 'deleteTimeEntry',
    summary: 'Delete a time entry',
    description:
      'Deletes the entry for good; a second DELETE is 404. Records `time_entry.deleted` with the entry as it was.',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async (req, res, { params }) => {
      await timeEntries.remove(tenantOf(req), params.id);
      res.status(204).end();
    },
  });

  api.route({
    method: 'get',
    path: '/exports/time',
    operationId: 'exportTime',
    summary: 'Export a month of billable time (CSV, for invoicing)',
    description: EXPORT_DESCRIPTION,
    tags: TAGS,
    scope: 'read:tickets',
    query: TimeExportQuery,
    responses: {
      200: {
        description: 'The CSV file, streamed.',
        contentType: ['text/csv'],
        headers: {
          'Content-Disposition': {
            description: '`attachment; filename="time-YYYY-MM.csv"`.',
            schema: { type: 'string' },
          },
        },
      },
      503: {
        description:
          "Every connection of the export's pool stayed busy for `EXPORT_POOL_ACQUIRE_TIMEOUT_MS` (other exports " +
          'are running), or the service is shutting down. Retry after `Retry-After` seconds.',
        schema: ExportBusyProblem,
        contentType: PROBLEM_CONTENT_TYPE,
        headers: {
          'Retry-After': {
            description: `Seconds to wait before trying again (${TIME_EXPORT_BUSY_RETRY_AFTER_SECONDS}).`,
            schema: { type: 'integer', examples: [TIME_EXPORT_BUSY_RETRY_AFTER_SECONDS] },
          },
        },
      },
    },
    handler: async (req, res, { query }) => {
      await sendStreamedFile(
        res,
        logger,
        'time export',
        { period: query.period },
        async (signal) => {
          // The last stage is made before the export opens its cursor: nothing fails after it.
          const blocks = coalesce();
          const file = await timeEntries.openExport(tenantOf(req), query.period, signal);
          return { contentType: file.contentType, filename: file.filename, stages: [file.rows, file.writer, blocks] };
        },
        { idleTimeoutMs },
      );
    },
  });
}
