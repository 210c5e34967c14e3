import {
  BUSINESS_TIME_HORIZON_DAYS,
  WEEKDAYS,
  addBusinessMinutes,
  isBusinessTimeRangeError,
  businessMinutesBetween,
  compareDates,
  holidays as publicHolidays,
  localDateOf,
  validateCalendar,
  type BusinessCalendar,
  type BusinessHours,
  type HolidayRegion,
  type HolidaySource,
} from '@msp/calendar';
import { conflict, notFound, unprocessable, validationFailed, type PageRequest } from '@msp/http';
import { unlessDuplicate, unlessReferenced } from '../db';
import { targetsBeyondCalendarProblem } from '../sla-policies/sla-policies.service';
import { targetsBeyondCalendar, TARGET_MAX_WEEKS } from '../sla/sla-clock';
import type { Repositories, Store } from '../store';
import type { Calendar, CalendarChanges, CalendarHoliday, NewCalendar } from './calendar.schemas';
import type { CalendarDefinition } from './calendars.repository';

const DAY_MS = 86_400_000;

/** A closed day that falls on a public holiday comes before it. */
const KIND_ORDER: Record<CalendarHoliday['kind'], number> = { closed_day: 0, public_holiday: 1 };

export const calendarNotFound = () => notFound('No calendar with this id exists in your tenant.');
const nameTaken = (name: string) => () =>
  conflict(`A calendar named "${name}" already exists in your tenant (names are compared case-insensitively).`, {
    code: 'duplicate-calendar',
  });
const inUse = () =>
  conflict('SLA policies count on this calendar; point them at another calendar (or none) before deleting it.', {
    code: 'calendar-in-use',
  });

type CalendarInput = Omit<NewCalendar, 'hours'> & { hours: Partial<BusinessHours> };

/** The calendar a request describes, complete (a weekday left out is closed), and checked by @msp/calendar: a 400 naming each bad field. */
function definition(input: CalendarInput): CalendarDefinition {
  const hours = Object.fromEntries(WEEKDAYS.map((day) => [day, input.hours[day] ?? []])) as BusinessHours;
  const holidays = input.holidays
    ? ({ country: input.holidays.country, region: input.holidays.region ?? null } as HolidaySource)
    : null;
  const calendar = {
    name: input.name,
    time_zone: input.time_zone,
    hours,
    holidays,
    closed_days: [...(input.closed_days ?? [])].sort(),
  };
  const errors = validateCalendar(calendar);
  if (errors.length) throw validationFailed(errors, 'The calendar is not valid.');
  return calendar;
}

const stored = (calendar: Calendar): CalendarInput => calendar;

/** The policies counting on the calendar keep targets it can reach within TARGET_MAX_WEEKS of its regular weeks (else 422 naming `hours` and each). */
async function assertPoliciesReachable(tx: Repositories, tenantId: string, id: string, calendar: CalendarDefinition) {
  const errors = (await tx.slaPolicies.usingCalendarForUpdate(tenantId, id)).flatMap((policy) =>
    targetsBeyondCalendar(calendar, policy.targets, 'the calendar').map((error) => ({
      field: 'hours',
      message: `SLA policy "${policy.name}" (${policy.id}): its ${error.field} — ${error.message}`,
    })),
  );
  if (errors.length) {
    throw targetsBeyondCalendarProblem(
      errors,
      'With these hours the calendar is open too few hours for the SLA policies counting on it: ' +
        `each target must be reachable within ${TARGET_MAX_WEEKS} weeks (5 years) of the ` +
        `calendar's business hours. Change the policies' targets first.`,
    );
  }
}

export function createCalendarsService(store: Store) {
  async function get(tenantId: string, id: string): Promise<Calendar> {
    const calendar = await store.calendars.findById(tenantId, id);
    if (!calendar) throw calendarNotFound();
    return calendar;
  }

  return {
    get,

    list(tenantId: string, page: PageRequest) {
      return store.calendars.list(tenantId, page);
    },

    create(tenantId: string, input: NewCalendar): Promise<Calendar> {
      const calendar = definition(input);
      const created = store.transaction(async (tx) => {
        const saved = await tx.calendars.create(tenantId, calendar);
        await tx.events.record({
          type: 'calendar.created',
          tenantId,
          resourceType: 'calendar',
          resourceId: saved.id,
          object: saved,
        });
        return saved;
      });
      return unlessDuplicate(created, nameTaken(input.name));
    },

    /** The changes over the stored calendar, checked whole. Tickets already running keep the copy they were opened with. */
    update(tenantId: string, id: string, changes: CalendarChanges): Promise<Calendar> {
      const updated = store.transaction(async (tx) => {
        const before = await tx.calendars.findForUpdate(tenantId, id);
        if (!before) throw calendarNotFound();
        const changed = definition({ ...stored(before), ...changes });
        if (changes.hours !== undefined) await assertPoliciesReachable(tx, tenantId, id, changed);
        const after = await tx.calendars.update(tenantId, id, changed);
        await tx.events.record({
          type: 'calendar.updated',
          tenantId,
          resourceType: 'calendar',
          resourceId: id,
          object: after,
          before,
        });
        return after;
      });
      return unlessDuplicate(updated, nameTaken(changes.name ?? ''));
    },

    /** 409 while a policy names it (the foreign key decides, should one name it in between). */
    delete(tenantId: string, id: string): Promise<void> {
      const deleted = store.transaction(async (tx) => {
        const calendar = await tx.calendars.findForUpdate(tenantId, id);
        if (!calendar) throw calendarNotFound();
        if (await tx.calendars.isUsedByPolicy(tenantId, id)) throw inUse();
        await tx.calendars.delete(tenantId, id);
        await tx.events.record({
          type: 'calendar.deleted',
          tenantId,
          resourceType: 'calendar',
          resourceId: id,
          object: calendar,
        });
      });
      return unlessReferenced(deleted, inUse);
    },

    /** The year's public holidays of the calendar's region and its closed days of that year, by date. */
    async holidays(tenantId: string, id: string, year: number | undefined): Promise<CalendarHoliday[]> {
      const calendar = await get(tenantId, id);
      const wanted = year ?? Number(localDateOf(calendar.time_zone, Date.now()).slice(0, 4));
      const days: CalendarHoliday[] = calendar.holidays
        ? publicHolidays((calendar.holidays.region ?? 'DE') as HolidayRegion, wanted).map((day) => ({
            date: day.date,
            name: day.name,
            kind: 'public_holiday' as const,
          }))
        : [];
      for (const date of calendar.closed_days) {
        if (date.startsWith(`${wanted}-`)) days.push({ date, name: 'Closed day', kind: 'closed_day' });
      }
      return days.sort((a, b) => compareDates(a.date, b.date) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind]);
    },

    /**
     * `minutes` after `from` (`due_at`), or the business minutes between `from` and `to`: exactly one of the two
     * (checked after the calendar is found: another tenant's is a 404 whatever the query).
     */
    async businessTime(tenantId: string, id: string, query: { from?: string; minutes?: number; to?: string }) {
      const calendar = (await get(tenantId, id)) as BusinessCalendar; // stored only after validateCalendar passed
      if ((query.minutes === undefined) === (query.to === undefined)) {
        const message = 'give exactly one of minutes (answers due_at) and to (answers business_minutes)';
        throw validationFailed(
          [{ field: query.minutes === undefined ? 'minutes' : 'to', message }],
          'One or more query parameters are not valid.',
        );
      }
      const from = query.from === undefined ? new Date() : new Date(query.from);
      if (query.minutes !== undefined) {
        try {
          return { due_at: addBusinessMinutes(calendar, from, query.minutes).toISOString() };
        } catch (error) {
          if (!isBusinessTimeRangeError(error)) throw error;
          const message = `cannot be counted from ${from.toISOString()} on this calendar within ${error.limit}: ${error.message}`;
          throw unprocessable(`${query.minutes} business minutes ${message}.`, {
            code: 'business-time-out-of-range',
            errors: [{ field: 'minutes', message }],
            extensions: { limit: error.limit },
          });
        }
      }
      const to = new Date(query.to!);
      if (Math.abs(to.getTime() - from.getTime()) > BUSINESS_TIME_HORIZON_DAYS * DAY_MS) {
        throw validationFailed(
          [
            {
              field: 'to',
              message: `must lie within ${BUSINESS_TIME_HORIZON_DAYS} days (100 years) of from (${from.toISOString()})`,
            },
          ],
          'One or more query parameters are not valid.',
        );
      }
      return { business_minutes: businessMinutesBetween(calendar, from, to) };
    },
  };
}

export type CalendarsService = ReturnType<typeof createCalendarsService>;
