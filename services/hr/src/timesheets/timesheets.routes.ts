import {
  API_BASE_PATH,
  IdParams,
  LINK_HEADER,
  LIST_PAGES_DOC,
  pageRequestOf,
  sendPage,
  type ApiRouter,
} from '@msp/http';
import { tenantOf } from '@msp/auth';
import { timesheetJson } from './timesheet.mapper';
import {
  CreateTimesheetBody,
  ListTimesheetsQuery,
  Timesheet,
  TimesheetPage,
  UpdateTimesheetBody,
} from './timesheet.schemas';
import type { TimesheetsService } from './timesheets.service';

const TAGS = ['Timesheets'];

const RULES =
  'Entries are checked against German working-time law (ArbZG): `end` after `start` (else 422 naming `entries[i].end`), ' +
  'no two entries overlapping (else 422 naming both), at most 600 minutes (10 h) of work a day (§3 ArbZG, else 422). ' +
  'Breaks (§4 ArbZG) are the gaps between working-time entries of at least 15 minutes: over 6 h of work with less than 30 min of them, ' +
  'or over 9 h with less than 45 min, the sheet is stored with a `break_too_short` warning that says how much is missing. ' +
  'More than 6 h of work in a row without a break of at least 15 minutes (§4 ArbZG; a block ' +
  'over midnight, 24:00 then 00:00, is one) gives `work_block_too_long`; ' +
  "less than 11 h between the end of one day's work and the start of the next (§5 ArbZG) gives `rest_period_too_short` on both days, each naming the other; " +
  'work on a Sunday gives `sunday_work` (§9 ArbZG; §10 allows exceptions, hence a warning). ' +
  "The neighbouring days' stored warnings are brought up to date in the same transaction (their " +
  'entries and `updated_at` stay; a `timesheet.updated` event records the change). ' +
  '`standby` entries (Rufbereitschaft) are paid but not working time: they count for none of these rules nor for `worked_minutes`. ' +
  'Times are `HH:MM`, 00:00–23:59; `24:00` is accepted as an `end` (midnight at the end of the day). ' +
  "They are local times of the `time_zone` of the employee's contract valid that day (`Europe/Berlin` without a contract), and every minute the rules " +
  'and the totals count is a real minute: 00:00–24:00 is 1,380 minutes on the day summer time begins (29 March 2026 in Berlin) and 1,500 on the day it ends ' +
  "(25 October 2026). A time the clocks skip that day (02:30 on 29 March 2026 in Berlin) does not exist: 422 naming the entry's `start` or `end`. " +
  'A time the clocks show twice (02:30 on 25 October 2026) is the first of the two.';

export function registerTimesheetRoutes(api: ApiRouter, deps: { timesheets: TimesheetsService }) {
  const { timesheets } = deps;

  api.route({
    method: 'get',
    path: '/timesheets',
    operationId: 'listTimesheets',
    summary: 'List timesheets',
    description:
      'The timesheets of your tenant, newest day first (then by `id`). `from` and `to` bound the days, both included.' +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:hr',
    query: ListTimesheetsQuery,
    responses: { 200: { description: 'One page of timesheets.', schema: TimesheetPage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await timesheets.list(
        tenantOf(req),
        { userId: query.user_id, from: query.from, to: query.to },
        page,
      );
      sendPage(req, res, items.map(timesheetJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/timesheets/:id',
    operationId: 'getTimesheet',
    summary: 'Show a timesheet',
    tags: TAGS,
    scope: 'read:hr',
    params: IdParams,
    responses: { 200: { description: 'The timesheet.', schema: Timesheet } },
    load: async (req, { params }) => timesheetJson(await timesheets.get(tenantOf(req), params.id)),
  });

  api.route({
    method: 'post',
    path: '/timesheets',
    operationId: 'createTimesheet',
    summary: 'Record a working day',
    description:
      `Records one user's day. \`user_id\` must be the \`user_id\` of an employee of your tenant (else 422 naming it). ${RULES} ` +
      'One timesheet per user and day: a second one is a 409 whose `existing_id` (and `existing_url`) names the sheet to change instead; ' +
      'of concurrent requests for the same day exactly one succeeds.',
    tags: TAGS,
    scope: 'write:hr',
    body: CreateTimesheetBody,
    errors: [409, 422],
    responses: {
      201: {
        description: 'Recorded; `Location` names the new timesheet.',
        schema: Timesheet,
        headers: { Location: { description: 'URL of the new timesheet.', schema: { type: 'string' } } },
      },
    },
    handler: async (req, res, { body }) => {
      const sheet = await timesheets.record(tenantOf(req), {
        userId: body.user_id,
        date: body.date,
        entries: body.entries,
      });
      res.status(201).location(`${API_BASE_PATH}/timesheets/${sheet.id}`).json(timesheetJson(sheet));
    },
  });

  api.route({
    method: 'patch',
    path: '/timesheets/:id',
    operationId: 'updateTimesheet',
    summary: "Replace a day's entries",
    description:
      `Replaces \`entries\` as a whole and recomputes the totals and warnings. ${RULES} ` +
      '`user_id` and `date` cannot change: they may be sent back unchanged, a different value is a 422 naming the field. ' +
      'Entries that come to the day the sheet already holds change nothing, not even `updated_at`.',
    tags: TAGS,
    scope: 'write:hr',
    params: IdParams,
    body: UpdateTimesheetBody,
    errors: [422],
    responses: { 200: { description: 'The changed timesheet.', schema: Timesheet } },
    handler: async (req, res, { params, body }) => {
      res.json(
        timesheetJson(
          await timesheets.replaceEntries(tenantOf(req), params.id, {
            entries: body.entries,
            userId: body.user_id,
            date: body.date,
          }),
        ),
      );
    },
  });

  api.route({
    method: 'delete',
    path: '/timesheets/:id',
    operationId: 'deleteTimesheet',
    summary: 'Delete a timesheet',
    description:
      'Deletes the day with its entries; the day can then be recorded anew. The warnings it caused on the neighbouring days (§4 blocks over midnight, ' +
      '§5 rest) are taken from them in the same transaction.',
    tags: TAGS,
    scope: 'write:hr',
    params: IdParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async (req, res, { params }) => {
      await timesheets.remove(tenantOf(req), params.id);
      res.status(204).end();
    },
  });
}
