import fc from 'fast-check';
import {
  BusinessTimeRangeError,
  WEEKDAYS,
  addBusinessMinutes,
  weeklyBusinessMinutes,
  businessMinutesBetween,
  isBusinessTime,
  isHoliday,
  parseTime,
  type BusinessCalendar,
  type BusinessInterval,
  type CalendarOrAlwaysOpen,
  type Weekday,
} from '../src';

function week(hours: Partial<Record<Weekday, BusinessInterval[]>>): Record<Weekday, BusinessInterval[]> {
  return Object.fromEntries(WEEKDAYS.map((day) => [day, hours[day] ?? []])) as Record<Weekday, BusinessInterval[]>;
}

const officeHours = [{ start: '08:00', end: '17:00' }];
const munich: BusinessCalendar = {
  time_zone: 'Europe/Berlin',
  hours: week({ mon: officeHours, tue: officeHours, wed: officeHours, thu: officeHours, fri: officeHours }),
  holidays: { country: 'DE', region: 'DE-BY' },
  closed_days: [],
};
const berlin: BusinessCalendar = { ...munich, holidays: { country: 'DE', region: 'DE-BE' } };
const allDay = [{ start: '00:00', end: '24:00' }];
const roundTheClock: BusinessCalendar = {
  time_zone: 'Europe/Berlin',
  hours: week(Object.fromEntries(WEEKDAYS.map((day) => [day, allDay]))),
  holidays: null,
  closed_days: [],
};
const night = [
  { start: '00:00', end: '06:00' },
  { start: '22:00', end: '24:00' },
];
const nightShift: BusinessCalendar = {
  time_zone: 'Europe/Berlin',
  hours: week(Object.fromEntries(WEEKDAYS.map((day) => [day, night]))),
  holidays: null,
  closed_days: [],
};
const split = [
  { start: '13:00', end: '17:30' },
  { start: '09:00', end: '12:00' },
];
const newYork: BusinessCalendar = {
  time_zone: 'America/New_York',
  hours: week({ mon: split, tue: split, wed: split, thu: split, fri: split, sat: [{ start: '10:00', end: '14:00' }] }),
  holidays: { country: 'DE' },
  closed_days: ['2026-12-24', '2026-12-31', '2027-07-05'],
};

const due = (calendar: CalendarOrAlwaysOpen, from: string, minutes: number) =>
  addBusinessMinutes(calendar, new Date(from), minutes).toISOString();
const between = (calendar: CalendarOrAlwaysOpen, from: string, to: string) =>
  businessMinutesBetween(calendar, new Date(from), new Date(to));
const iso = (local: string) => new Date(local).toISOString();

describe('addBusinessMinutes', () => {
  test('When a ticket comes in on Friday at 16:30 with 60 business minutes in Munich, then it is due on Monday at 08:30', () => {
    expect(due(munich, '2026-11-20T16:30:00+01:00', 60)).toBe(iso('2026-11-23T08:30:00+01:00'));
  });

  test('When the minutes run out exactly at closing time, then the due time is closing time, not the next opening', () => {
    expect(due(munich, '2026-11-20T16:30:00+01:00', 30)).toBe(iso('2026-11-20T17:00:00+01:00'));
    expect(due(munich, '2026-11-20T08:00:00+01:00', 540)).toBe(iso('2026-11-20T17:00:00+01:00'));
  });

  test('When from lies outside business hours, then the clock starts at the next opening', () => {
    expect(due(munich, '2026-11-23T06:00:00+01:00', 30)).toBe(iso('2026-11-23T08:30:00+01:00')); // before opening
    expect(due(munich, '2026-11-23T19:00:00+01:00', 30)).toBe(iso('2026-11-24T08:30:00+01:00')); // after closing
    expect(due(munich, '2026-11-21T11:00:00+01:00', 30)).toBe(iso('2026-11-23T08:30:00+01:00')); // on a Saturday
  });

  test('When from lies inside a holiday, then the clock starts on the next working day', () => {
    // 6 January: Heilige Drei Könige in Bavaria, a working day in Berlin.
    expect(due(munich, '2026-01-06T10:00:00+01:00', 30)).toBe(iso('2026-01-07T08:30:00+01:00'));
    expect(due(berlin, '2026-01-06T10:00:00+01:00', 30)).toBe(iso('2026-01-06T10:30:00+01:00'));
  });

  test('When a span covers 1 November (a Monday in 2027), then Bavaria skips it and Berlin does not', () => {
    expect(due(munich, '2027-10-29T16:00:00+02:00', 120)).toBe(iso('2027-11-02T09:00:00+01:00'));
    expect(due(berlin, '2027-10-29T16:00:00+02:00', 120)).toBe(iso('2027-11-01T09:00:00+01:00'));
  });

  test('When a span covers 8 March (a Monday in 2027), then Berlin skips it and Bavaria does not', () => {
    expect(due(berlin, '2027-03-05T16:00:00+01:00', 120)).toBe(iso('2027-03-09T09:00:00+01:00'));
    expect(due(munich, '2027-03-05T16:00:00+01:00', 120)).toBe(iso('2027-03-08T09:00:00+01:00'));
  });

  test('When 24 and 31 December are closed days, then the clock skips them as it skips the holidays between', () => {
    const closing = { ...munich, closed_days: ['2026-12-24', '2026-12-31'] };
    expect(due(munich, '2026-12-23T16:00:00+01:00', 120)).toBe(iso('2026-12-24T09:00:00+01:00'));
    // 24 closed, 25 and 26 holidays, 27 a Sunday.
    expect(due(closing, '2026-12-23T16:00:00+01:00', 120)).toBe(iso('2026-12-28T09:00:00+01:00'));
    expect(due(closing, '2026-12-30T16:00:00+01:00', 120)).toBe(iso('2027-01-04T09:00:00+01:00')); // 31 closed, 1 January, a weekend
  });

  test("When the clock runs over midnight in hours that end at 24:00, then it goes on at the next day's 00:00", () => {
    expect(due(nightShift, '2026-11-23T23:00:00+01:00', 120)).toBe(iso('2026-11-24T01:00:00+01:00'));
    expect(due(nightShift, '2026-11-24T05:00:00+01:00', 120)).toBe(iso('2026-11-24T23:00:00+01:00'));
  });

  test('When a business day lies on either side of the change to summer time (29 March 2026), then the due time is in summer time', () => {
    expect(due(munich, '2026-03-27T16:00:00+01:00', 120)).toBe(iso('2026-03-30T09:00:00+02:00'));
  });

  test('When a business day lies on either side of the change to winter time (25 October 2026), then the due time is in winter time', () => {
    expect(due(munich, '2026-10-23T16:00:00+02:00', 120)).toBe(iso('2026-10-26T09:00:00+01:00'));
  });

  test('When a 24×7 clock runs over a change of the clocks, then it counts real minutes', () => {
    expect(due(roundTheClock, '2026-03-28T12:00:00+01:00', 1440)).toBe(iso('2026-03-29T13:00:00+02:00'));
    expect(due(roundTheClock, '2026-10-24T12:00:00+02:00', 1440)).toBe(iso('2026-10-25T11:00:00+01:00'));
    expect(due(null, '2026-03-28T12:00:00+01:00', 1440)).toBe(iso('2026-03-29T13:00:00+02:00'));
  });

  test('When night hours run over the change to winter time, then the hour the clocks show twice is counted twice', () => {
    // 02:00 summer time is 00:00 UTC; from there 60 minutes lead to 02:00 winter time.
    expect(due(nightShift, '2026-10-24T23:00:00+02:00', 180)).toBe('2026-10-25T00:00:00.000Z');
    expect(due(nightShift, '2026-10-24T23:00:00+02:00', 240)).toBe(iso('2026-10-25T02:00:00+01:00'));
    expect(due(nightShift, '2026-10-24T22:00:00+02:00', 540)).toBe(iso('2026-10-25T06:00:00+01:00'));
  });

  test('When night hours run over the change to summer time, then the hour the clocks skip is not counted', () => {
    expect(due(nightShift, '2026-03-28T22:00:00+01:00', 240)).toBe(iso('2026-03-29T03:00:00+02:00'));
    expect(due(nightShift, '2026-03-28T22:00:00+01:00', 420)).toBe(iso('2026-03-29T06:00:00+02:00'));
  });

  test('When the minutes are 0, then the due time is from itself; when they are negative or from is no date, then a RangeError is thrown', () => {
    expect(due(munich, '2026-11-21T11:00:00+01:00', 0)).toBe(iso('2026-11-21T11:00:00+01:00'));
    expect(() => addBusinessMinutes(munich, new Date(), -1)).toThrow(RangeError);
    expect(() => addBusinessMinutes(munich, new Date(), Number.NaN)).toThrow(RangeError);
    expect(() => addBusinessMinutes(munich, new Date('not a date'), 10)).toThrow(RangeError);
  });

  test('When a calendar has no business hours at all, then a RangeError is thrown rather than a search without end', () => {
    expect(() => addBusinessMinutes({ ...munich, hours: week({}) }, new Date(), 10)).toThrow(RangeError);
  });

  test('When a calendar names an unknown holiday region, then the unknown-region error reaches the caller', () => {
    const calendar = { ...munich, holidays: { country: 'DE', region: 'DE-XX' } } as unknown as BusinessCalendar;
    expect(() => addBusinessMinutes(calendar, new Date('2026-11-20T10:00:00+01:00'), 10)).toThrow(
      expect.objectContaining({ code: 'unknown-region' }),
    );
  });
});

describe('businessMinutesBetween', () => {
  test('When a 24×7 calendar spans the weekends of the clock changes, then it counts 47 and 49 hours', () => {
    for (const calendar of [roundTheClock, null]) {
      expect(between(calendar, '2026-03-28T00:00:00+01:00', '2026-03-30T00:00:00+02:00')).toBe(47 * 60);
      expect(between(calendar, '2026-10-24T00:00:00+02:00', '2026-10-26T00:00:00+01:00')).toBe(49 * 60);
    }
  });

  test('When night hours span the nights of the clock changes, then the nights last 7 and 9 hours', () => {
    expect(between(nightShift, '2026-03-28T21:00:00+01:00', '2026-03-29T07:00:00+02:00')).toBe(7 * 60);
    expect(between(nightShift, '2026-10-24T21:00:00+02:00', '2026-10-25T07:00:00+01:00')).toBe(9 * 60);
  });

  test('When hours lie across the hour the clocks skip or repeat, then that hour counts zero times or twice', () => {
    const earlySunday = { ...roundTheClock, hours: week({ sun: [{ start: '01:00', end: '04:00' }] }) };
    expect(between(earlySunday, '2026-03-29T00:00:00+01:00', '2026-03-29T12:00:00+02:00')).toBe(2 * 60);
    expect(between(earlySunday, '2026-10-25T00:00:00+02:00', '2026-10-25T12:00:00+01:00')).toBe(4 * 60);
    const skipped = { ...roundTheClock, hours: week({ sun: [{ start: '02:00', end: '03:00' }], mon: officeHours }) };
    expect(between(skipped, '2026-03-28T00:00:00+01:00', '2026-03-30T00:00:00+02:00')).toBe(0);
    expect(isBusinessTime(skipped, new Date('2026-10-25T02:30:00+02:00'))).toBe(true);
    expect(isBusinessTime(skipped, new Date('2026-10-25T02:30:00+01:00'))).toBe(true);
  });

  test('When two business days lie around a change of the clocks, then each counts its full hours', () => {
    expect(between(munich, '2026-03-27T08:00:00+01:00', '2026-03-30T17:00:00+02:00')).toBe(2 * 540);
    expect(between(munich, '2026-10-23T08:00:00+02:00', '2026-10-26T17:00:00+01:00')).toBe(2 * 540);
  });

  test('When the span holds holidays and closed days, then they count nothing', () => {
    // Week of 5 January 2026 in Bavaria: Tuesday the 6th is a holiday, Friday the 9th closed.
    const calendar = { ...munich, closed_days: ['2026-01-09'] };
    expect(between(calendar, '2026-01-05T00:00:00+01:00', '2026-01-10T00:00:00+01:00')).toBe(3 * 540);
    expect(between(berlin, '2026-01-05T00:00:00+01:00', '2026-01-10T00:00:00+01:00')).toBe(5 * 540);
  });

  test('When to is before from, then the minutes are negative; when the instants are not on whole minutes, then fractional', () => {
    expect(between(munich, '2026-11-23T10:00:00+01:00', '2026-11-20T16:30:00+01:00')).toBe(-150);
    expect(between(munich, '2026-11-23T10:00:00+01:00', '2026-11-23T10:00:30+01:00')).toBe(0.5);
    expect(between(munich, '2026-11-23T10:00:00+01:00', '2026-11-23T10:00:00+01:00')).toBe(0);
  });

  test('When a span lasts years, then the count is that of its business days', () => {
    // 2027 in Berlin: 261 weekdays, of which Neujahr, Frauentag, Karfreitag, Ostermontag, 1 May is a
    // Saturday, Himmelfahrt, Pfingstmontag, 3 October a Sunday, 25 and 26 December a weekend.
    const weekdays = 261;
    const holidaysOnWeekdays = ['2027-01-01', '2027-03-08', '2027-03-26', '2027-03-29', '2027-05-06', '2027-05-17'];
    holidaysOnWeekdays.forEach((date) => expect(isHoliday('DE-BE', date)).toBe(true));
    expect(between(berlin, '2027-01-01T00:00:00+01:00', '2028-01-01T00:00:00+01:00')).toBe(
      (weekdays - holidaysOnWeekdays.length) * 540,
    );
  });
});

describe('isBusinessTime', () => {
  test('When an instant is at opening, inside, at closing or on a holiday, then it is open, open, closed, closed', () => {
    expect(isBusinessTime(munich, new Date('2026-11-20T08:00:00+01:00'))).toBe(true);
    expect(isBusinessTime(munich, new Date('2026-11-20T16:59:59+01:00'))).toBe(true);
    expect(isBusinessTime(munich, new Date('2026-11-20T17:00:00+01:00'))).toBe(false);
    expect(isBusinessTime(munich, new Date('2026-01-06T10:00:00+01:00'))).toBe(false);
    expect(isBusinessTime(null, new Date('2026-01-06T10:00:00+01:00'))).toBe(true);
  });
});

// A reference that knows nothing of the implementation: minute by minute, read the zone's wall
// clock with Intl and ask whether the calendar is open at that time of that date.
function referenceMinutes(calendar: BusinessCalendar, from: number, to: number): number {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone: calendar.time_zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    weekday: 'short',
  });
  let open = 0;
  for (let t = from; t < to; t += 60_000) {
    const parts = Object.fromEntries(format.formatToParts(t).map((part) => [part.type, part.value]));
    const date = `${parts.year}-${parts.month}-${parts.day}`;
    const day = String(parts.weekday).slice(0, 3).toLowerCase() as Weekday;
    const minute = Number(parts.hour) * 60 + Number(parts.minute);
    if (calendar.closed_days.includes(date)) continue;
    if (calendar.holidays && isHoliday(calendar.holidays.region ?? 'DE', date)) continue;
    if (
      calendar.hours[day].some(
        (interval) => parseTime(interval.start)! <= minute && minute < parseTime(interval.end, true)!,
      )
    )
      open++;
  }
  return open;
}

describe('properties over random instants', () => {
  const calendars = [
    munich,
    berlin,
    roundTheClock,
    nightShift,
    newYork,
    { ...munich, closed_days: ['2026-12-24', '2027-03-29'] },
  ];
  const calendar = fc.constantFrom(...calendars);
  // 2026 to 2028, on whole seconds, so that results are not all on whole minutes.
  const instant = fc
    .integer({ min: Date.parse('2026-01-01T00:00:00Z') / 1000, max: Date.parse('2028-12-31T00:00:00Z') / 1000 })
    .map((s) => s * 1000);
  // Days of clock changes in Berlin and New York, to land near them often.
  const changes = ['2026-03-08', '2026-03-29', '2026-10-25', '2026-11-01', '2027-03-28', '2027-10-31'].map((date) =>
    Date.parse(`${date}T00:00:00Z`),
  );
  const nearChange = fc
    .tuple(fc.constantFrom(...changes), fc.integer({ min: -3 * 1440, max: 3 * 1440 }))
    .map(([day, minutes]) => day + minutes * 60_000);

  test('When N business minutes are added to any instant, then businessMinutesBetween gives N back', () => {
    fc.assert(
      fc.property(calendar, fc.oneof(instant, nearChange), fc.integer({ min: 0, max: 30_000 }), (c, from, minutes) => {
        const dueAt = addBusinessMinutes(c, new Date(from), minutes);
        expect(dueAt.getTime()).toBeGreaterThanOrEqual(from);
        expect(businessMinutesBetween(c, new Date(from), dueAt)).toBe(minutes);
        // …and it is the first such instant: a second earlier, the clock had not got there.
        if (minutes > 0)
          expect(businessMinutesBetween(c, new Date(from), new Date(dueAt.getTime() - 1000))).toBeLessThan(minutes);
      }),
      { numRuns: 300 },
    );
  });

  test('When a span is cut at any instant, then the parts add up to the whole', () => {
    fc.assert(
      fc.property(calendar, fc.array(fc.oneof(instant, nearChange), { minLength: 3, maxLength: 3 }), (c, points) => {
        const [a, b, d] = points.sort((x, y) => x - y).map((t) => new Date(t)) as [Date, Date, Date];
        const whole = businessMinutesBetween(c, a, d) * 60_000;
        const parts = (businessMinutesBetween(c, a, b) + businessMinutesBetween(c, b, d)) * 60_000;
        expect(Math.round(parts)).toBe(Math.round(whole));
        expect(businessMinutesBetween(c, d, a)).toBe(-businessMinutesBetween(c, a, d));
      }),
      { numRuns: 100 },
    );
  });

  test('When counted minute by minute on the wall clock, then businessMinutesBetween agrees, around the clock changes too', () => {
    const minuteInstant = fc.oneof(instant, nearChange).map((t) => Math.floor(t / 60_000) * 60_000);
    fc.assert(
      fc.property(
        fc.constantFrom(...calendars),
        minuteInstant,
        fc.integer({ min: 0, max: 4 * 1440 }),
        (c, from, length) => {
          const to = from + length * 60_000;
          expect(businessMinutesBetween(c, new Date(from), new Date(to))).toBe(referenceMinutes(c, from, to));
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('spans of years, and clocks that cannot be answered', () => {
  const oneMinuteAWeek: BusinessCalendar = {
    ...munich,
    hours: week({ wed: [{ start: '10:00', end: '10:01' }] }),
    holidays: null,
  };

  test("When a span covers two centuries, then its business minutes are the sum of its years', without a walk over its days", () => {
    let years = 0;
    for (let year = 1901; year < 2101; year++)
      years += between(munich, `${year}-01-01T00:00:00Z`, `${year + 1}-01-01T00:00:00Z`);
    expect(between(munich, '1901-01-01T00:00:00Z', '2101-01-01T00:00:00Z')).toBe(years);
    expect(between(nightShift, '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z')).toBeGreaterThan(0);
  });

  test(
    'When a calendar open one minute a week is asked for a year of minutes, then a ' +
      'BusinessTimeRangeError names the 100-year horizon; a few minutes are answered',
    () => {
      expect(() => addBusinessMinutes(oneMinuteAWeek, new Date('2026-11-20T10:00:00Z'), 525_600)).toThrow(
        BusinessTimeRangeError,
      );
      expect(() => addBusinessMinutes(oneMinuteAWeek, new Date('2026-11-20T10:00:00Z'), 525_600)).toThrow(
        expect.objectContaining({ code: 'horizon', limit: expect.stringContaining('100 years') }),
      );
      // 3 minutes: the Wednesdays 25 November, 2 and 9 December 2026, each minute from 10:00 Berlin time.
      expect(due(oneMinuteAWeek, '2026-11-20T10:00:00Z', 3)).toBe(iso('2026-12-09T10:01:00+01:00'));
    },
  );

  test('When the due time would lie after 9999-12-31, then a BusinessTimeRangeError names the year 9999, also on a 24×7 clock', () => {
    for (const calendar of [munich, roundTheClock, null]) {
      expect(() => addBusinessMinutes(calendar, new Date('9999-12-30T00:00:00Z'), 5_256_000)).toThrow(
        expect.objectContaining({ name: 'BusinessTimeRangeError', code: 'last-instant' }),
      );
    }
    expect(due(null, '9999-12-31T23:58:59.999Z', 1)).toBe('9999-12-31T23:59:59.999Z');
  });

  test("When a calendar's regular week is asked for, then it is its hours summed, holidays and closed days aside", () => {
    expect(weeklyBusinessMinutes(munich)).toBe(5 * 540);
    expect(weeklyBusinessMinutes(nightShift)).toBe(7 * 480);
    expect(weeklyBusinessMinutes(oneMinuteAWeek)).toBe(1);
  });
});
