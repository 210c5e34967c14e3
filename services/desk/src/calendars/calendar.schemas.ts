import { Type, type Static } from '@sinclair/typebox';
import {
  DateOnly,
  DateTime,
  EndTimeOfDay,
  Nullable,
  StartTimeOfDay,
  Uuid,
  named,
  keysetQueryProperties,
  pageQueryProperties,
  pageSchema,
  strictObject,
} from '@msp/http';
import { NAME_MAX, Text } from '../shared/http.schemas';

const WEEK_EXAMPLE = {
  mon: [{ start: '08:00', end: '17:00' }],
  tue: [{ start: '08:00', end: '17:00' }],
  wed: [{ start: '08:00', end: '17:00' }],
  thu: [{ start: '08:00', end: '17:00' }],
  fri: [{ start: '08:00', end: '17:00' }],
  sat: [],
  sun: [],
};

const Interval = strictObject(
  {
    start: StartTimeOfDay({ description: 'Opening, local time of `time_zone` (00:00–23:59).' }),
    end: EndTimeOfDay({ description: 'Closing, after `start`; `24:00` is midnight at the end of the day.' }),
  },
  { examples: [{ start: '08:00', end: '12:30' }] },
);
const Day = (name: string) =>
  Type.Array(Interval, { maxItems: 24, description: `Open intervals on ${name}, not overlapping; [] closed.` });
const hoursDescription =
  'Opening hours per weekday as wall-clock times of `time_zone`. Hours over midnight are two intervals (`22:00–24:00`, next day `00:00–06:00`). ' +
  'On the day summer time begins the skipped hour is no business time; when it ends the repeated hour counts twice.';

/** In a request a day left out is closed; the answer always lists all seven. */
const HoursInput = strictObject(
  {
    mon: Type.Optional(Day('Mondays')),
    tue: Type.Optional(Day('Tuesdays')),
    wed: Type.Optional(Day('Wednesdays')),
    thu: Type.Optional(Day('Thursdays')),
    fri: Type.Optional(Day('Fridays')),
    sat: Type.Optional(Day('Saturdays')),
    sun: Type.Optional(Day('Sundays')),
  },
  {
    description: `${hoursDescription} A weekday left out is closed; at least one interval in the week.`,
    examples: [WEEK_EXAMPLE],
  },
);
const Hours = Type.Object(
  {
    mon: Day('Mondays'),
    tue: Day('Tuesdays'),
    wed: Day('Wednesdays'),
    thu: Day('Thursdays'),
    fri: Day('Fridays'),
    sat: Day('Saturdays'),
    sun: Day('Sundays'),
  },
  { additionalProperties: false, description: hoursDescription, examples: [WEEK_EXAMPLE] },
);

const Holidays = Nullable(
  strictObject(
    {
      country: Type.String({
        description: 'ISO 3166-1 country; only `DE` so far (another is a 400).',
        examples: ['DE'],
      }),
      region: Type.Optional(
        Nullable(
          Type.String({
            description:
              'A German state (ISO 3166-2, e.g. `DE-BY`, `DE-BE`): the public holidays of the whole state. ' +
              'Absent or null: the nationwide ones only. An unknown state is a 400.',
            examples: ['DE-BY'],
          }),
        ),
      ),
    },
    {
      description: 'Whose public holidays close the calendar; null for none.',
      examples: [{ country: 'DE', region: 'DE-BY' }],
    },
  ),
);
const ClosedDays = Type.Array(DateOnly(), {
  maxItems: 1000,
  uniqueItems: true,
  description:
    'Further days without business hours (`YYYY-MM-DD`), e.g. 24 December, or 15 August in a Bavarian commune that keeps it.',
  examples: [['2026-12-24', '2026-12-31']],
});
const Name = Text({
  minLength: 1,
  maxLength: NAME_MAX,
  description: 'Unique within the tenant, compared case-insensitively.',
});
const TimeZone = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'IANA time zone, e.g. `Europe/Berlin`; an unknown zone is a 400.',
  examples: ['Europe/Berlin'],
});

const EXAMPLE = {
  id: '3f1c2b7a-9d4e-4c8b-a1f2-6e5d4c3b2a10',
  name: 'Munich office hours',
  time_zone: 'Europe/Berlin',
  hours: WEEK_EXAMPLE,
  holidays: { country: 'DE', region: 'DE-BY' },
  closed_days: ['2026-12-24', '2026-12-31'],
  created_at: '2026-11-02T10:00:00.000Z',
  updated_at: '2026-11-02T10:00:00.000Z',
};

export const CalendarSchema = named(
  'Calendar',
  Type.Object(
    {
      id: Uuid(),
      name: Type.String(),
      time_zone: TimeZone,
      hours: Hours,
      holidays: Holidays,
      closed_days: ClosedDays,
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    { additionalProperties: false, description: 'Business hours: when SLA clocks run.', examples: [EXAMPLE] },
  ),
);
export type Calendar = Static<typeof CalendarSchema>;

export const NewCalendarSchema = named(
  'NewCalendar',
  strictObject(
    {
      name: Name,
      time_zone: TimeZone,
      hours: HoursInput,
      holidays: Type.Optional(Holidays),
      closed_days: Type.Optional(ClosedDays),
    },
    {
      description: '`holidays` defaults to null (none), `closed_days` to [].',
      examples: [
        {
          name: EXAMPLE.name,
          time_zone: EXAMPLE.time_zone,
          hours: WEEK_EXAMPLE,
          holidays: EXAMPLE.holidays,
          closed_days: EXAMPLE.closed_days,
        },
      ],
    },
  ),
);
export type NewCalendar = Static<typeof NewCalendarSchema>;

export const CalendarChangesSchema = named(
  'CalendarChanges',
  strictObject(
    {
      name: Type.Optional(Name),
      time_zone: Type.Optional(TimeZone),
      hours: Type.Optional(HoursInput),
      holidays: Type.Optional(Holidays),
      closed_days: Type.Optional(ClosedDays),
    },
    {
      minProperties: 1,
      description:
        'The fields to change; at least one. `hours` and `closed_days` are replaced whole. Tickets already running keep the calendar they were opened with.',
      examples: [{ closed_days: ['2026-12-24', '2026-12-31'] }],
    },
  ),
);
export type CalendarChanges = Static<typeof CalendarChangesSchema>;

export const CalendarListQuery = Type.Object(
  { ...pageQueryProperties, ...keysetQueryProperties },
  { additionalProperties: false },
);
export const CalendarPageSchema = pageSchema('CalendarPage', CalendarSchema);

export const HolidaysQuery = Type.Object(
  {
    ...pageQueryProperties,
    year: Type.Optional(
      Type.Integer({
        minimum: 1970,
        maximum: 2100,
        description: "The year (default: the current one in the calendar's zone).",
        examples: [2026],
      }),
    ),
  },
  { additionalProperties: false },
);
export const HolidaySchema = named(
  'CalendarHoliday',
  Type.Object(
    {
      date: DateOnly(),
      name: Type.String({ description: "The holiday's German name; `Closed day` for an entry of `closed_days`." }),
      kind: Type.Union([Type.Literal('public_holiday'), Type.Literal('closed_day')], {
        description: 'A public holiday of `holidays`, or one of `closed_days`.',
      }),
    },
    {
      additionalProperties: false,
      examples: [{ date: '2026-01-06', name: 'Heilige Drei Könige', kind: 'public_holiday' }],
    },
  ),
);
export type CalendarHoliday = Static<typeof HolidaySchema>;
export const HolidayPageSchema = pageSchema('CalendarHolidayPage', HolidaySchema);

export const BusinessTimeQuery = Type.Object(
  {
    from: Type.Optional(
      DateTime({
        description:
          'RFC 3339 instant the count starts at (the `+` of an offset may be sent as is or as `%2B`); default: now.',
        examples: ['2026-11-20T16:30:00+01:00'],
      }),
    ),
    minutes: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 5_256_000,
        description: 'Business minutes to add to `from`: answers `due_at`. Give either this or `to`.',
        examples: [60],
      }),
    ),
    to: Type.Optional(
      DateTime({
        description: 'The end of the span to measure: answers `business_minutes`. Give either this or `minutes`.',
        examples: ['2026-11-23T08:30:00+01:00'],
      }),
    ),
  },
  { additionalProperties: false },
);

export const BusinessTimeSchema = named(
  'BusinessTime',
  Type.Union(
    [
      Type.Object(
        {
          due_at: DateTime({
            description:
              'The instant `minutes` business minutes after `from` (UTC). Running out at closing time is due at closing time.',
          }),
        },
        { additionalProperties: false },
      ),
      Type.Object(
        {
          business_minutes: Type.Number({
            description:
              'Business minutes between `from` and `to` (negative if `to` is earlier; fractional off whole minutes).',
          }),
        },
        { additionalProperties: false },
      ),
    ],
    { examples: [{ due_at: '2026-11-23T07:30:00.000Z' }, { business_minutes: 60 }] },
  ),
);
