import { ADMIN_SCOPE, tenantOf } from '@msp/auth';
import { IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import type { RequestHandler } from 'express';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  BusinessTimeQuery,
  BusinessTimeSchema,
  CalendarChangesSchema,
  CalendarListQuery,
  CalendarPageSchema,
  CalendarSchema,
  HolidayPageSchema,
  HolidaysQuery,
  NewCalendarSchema,
} from './calendar.schemas';
import type { CalendarsService } from './calendars.service';

const TAGS = ['Calendars'];
const CHECKED =
  'The calendar is checked whole: an unknown `time_zone`, a `holidays.region` that is no German state, ' +
  'a country other than `DE`, an interval whose `end` is not after its `start`, ' +
  'overlapping intervals or a week without any hours are each a 400 naming the field in `errors`.';

/**
 * A `+` in a query string decodes to a space, so `from=2026-11-20T16:30:00+01:00` typed into a URL
 * would arrive as `…16:30:00 01:00` and fail as no date-time. In `from` and `to` a `+` can only be
 * an offset's sign: it is kept as one.
 */
const offsetSignsKept: RequestHandler = (req, _res, next) => {
  const [path, query] = req.url.split('?', 2) as [string, string | undefined];
  if (query?.includes('+')) {
    const kept = (_: string, start: string, name: string, value: string) =>
      `${start}${name}=${value.replace(/\+/g, '%2B')}`;
    req.url = `${path}?${query.replace(/(^|&)(from|to)=([^&]*)/g, kept)}`;
  }
  next();
};

export function registerCalendarRoutes(api: ApiRouter, calendars: CalendarsService) {
  api.route({
    method: 'get',
    path: '/calendars',
    operationId: 'listCalendars',
    summary: 'List business-hours calendars',
    description: 'Newest first (`created_at` descending, then `id`).' + LIST_PAGES_DOC,
    tags: TAGS,
    scope: ADMIN_SCOPE,
    query: CalendarListQuery,
    responses: { 200: page('A page of calendars.', CalendarPageSchema) },
    handler: async (req, res, { query }) => {
      const paging = pageRequestOf(query);
      const { items, total } = await calendars.list(tenantOf(req), paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'post',
    path: '/calendars',
    operationId: 'createCalendar',
    summary: 'Create a business-hours calendar',
    description:
      `Business hours in an IANA time zone, a German state's public holidays and closed days: the ` +
      `time SLA clocks count. ${CHECKED} A name the tenant already uses is a 409.`,
    tags: TAGS,
    scope: ADMIN_SCOPE,
    body: NewCalendarSchema,
    errors: [409],
    responses: { 201: created('The created calendar.', CalendarSchema) },
    handler: async (req, res, { body }) => {
      sendCreated(res, '/calendars', await calendars.create(tenantOf(req), body));
    },
  });

  api.route({
    method: 'get',
    path: '/calendars/:id',
    operationId: 'getCalendar',
    summary: 'Read a calendar',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The calendar.', schema: CalendarSchema } },
    load: (req, { params }) => calendars.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'patch',
    path: '/calendars/:id',
    operationId: 'updateCalendar',
    summary: 'Change a calendar',
    description:
      `${CHECKED} Tickets already running keep the calendar as it was when they were opened; new tickets count on the changed one. ` +
      'New `hours` must leave every SLA policy counting on the calendar able to reach each of its ' +
      "targets within 260 weeks (5 years) of the calendar's regular weeks " +
      '(its weekly business minutes × 260), else 422 `urn:msp:problem:targets-beyond-calendar` naming each policy and target under `hours`.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    body: CalendarChangesSchema,
    errors: [409],
    responses: {
      200: { description: 'The calendar after the change.', schema: CalendarSchema },
      422: unprocessableResponse(
        'The new hours leave an SLA policy counting on the calendar with a target it cannot reach ' +
          'within 260 of its weeks (`urn:msp:problem:targets-beyond-calendar`).',
      ),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await calendars.update(tenantOf(req), params.id, body));
    },
  });

  api.route({
    method: 'delete',
    path: '/calendars/:id',
    operationId: 'deleteCalendar',
    summary: 'Delete a calendar',
    description:
      'A calendar an SLA policy counts on is a 409 (`urn:msp:problem:calendar-in-use`): change those policies first. Tickets opened under it keep their copy.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    errors: [409],
    responses: { 204: { description: 'Deleted.' } },
    handler: async (req, res, { params }) => {
      await calendars.delete(tenantOf(req), params.id);
      res.status(204).end();
    },
  });

  api.route({
    method: 'get',
    path: '/calendars/:id/holidays',
    operationId: 'listCalendarHolidays',
    summary: 'The days a calendar is closed in a year',
    description:
      "The public holidays of the calendar's `holidays` (those of the whole state; e.g. 6 January and 1 November in `DE-BY`, 8 March in `DE-BE`), " +
      'and its `closed_days` of that year, by date. `pagination.total` is exact. Deep pages are bounded by nature: the list is one year of one calendar ' +
      "(at most 366 closed days and the state's dozen holidays, computed from the calendar, " +
      "whatever the tenant's size), so `page` is as fast on the last page " +
      'as on the first; it has no `after` (a day has no id).',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    query: HolidaysQuery,
    responses: { 200: page("A page of the year's closed days.", HolidayPageSchema) },
    handler: async (req, res, { params, query: { year, ...paging } }) => {
      const days = await calendars.holidays(tenantOf(req), params.id, year);
      const start = (paging.page - 1) * paging.per_page;
      sendPage(req, res, days.slice(start, start + paging.per_page), days.length, paging);
    },
  });

  api.route({
    method: 'get',
    path: '/calendars/:id/business-time',
    operationId: 'getCalendarBusinessTime',
    summary: 'Count business time on a calendar',
    description:
      '`?from=&minutes=N` answers `{due_at}`: the instant N business minutes after `from` (a `from` ' +
      'outside business hours starts at the next opening; running out at closing ' +
      'time is due at closing time). `?from=&to=` answers `{business_minutes}` between the two. ' +
      'Wall-clock hours: across a daylight-saving change the skipped hour is not ' +
      'counted and the repeated one counts twice. Both or neither of `minutes` and `to` is a 400. A ' +
      "`+` in `from` or `to` is an offset's sign (sent as is or as `%2B`). " +
      '**Bounds**: `to` lies within 36,525 days (100 years) of `from`, else 400. A `due_at` is looked for ' +
      'within 100 years of `from` and must be at the latest 9999-12-31T23:59:59.999Z: ' +
      'a calendar with fewer business minutes than `minutes` in that time (open a minute a week and ' +
      'asked for a year of minutes), or a due time past the year 9999, is a 422 ' +
      '`urn:msp:problem:business-time-out-of-range` naming the bound in `limit` and `minutes` in ' +
      '`errors`. The work grows with the years a span covers, not with its days.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    query: BusinessTimeQuery,
    before: [offsetSignsKept],
    responses: {
      200: { description: '`due_at` for `minutes`, `business_minutes` for `to`.', schema: BusinessTimeSchema },
      422: unprocessableResponse(
        '`minutes` cannot be counted from `from` on this calendar within 100 years, or the due time would lie ' +
          'after 9999-12-31 (`urn:msp:problem:business-time-out-of-range`, `limit` names the bound).',
      ),
    },
    handler: async (req, res, { params, query }) => {
      res.json(await calendars.businessTime(tenantOf(req), params.id, query));
    },
  });
}
