import { WEEKDAYS, isTimeZone, validateCalendar } from '../src';

const officeHours = [{ start: '08:00', end: '17:00' }];
const valid = () => ({
  time_zone: 'Europe/Berlin',
  hours: {
    mon: officeHours,
    tue: officeHours,
    wed: officeHours,
    thu: officeHours,
    fri: [
      { start: '08:00', end: '12:00' },
      { start: '13:00', end: '24:00' },
    ],
    sat: [],
    sun: [],
  },
  holidays: { country: 'DE', region: 'DE-BY' } as Record<string, unknown> | null,
  closed_days: ['2026-12-24'] as unknown[],
});

describe('validateCalendar', () => {
  test('When a calendar is well-formed, then there are no errors, and none for null (24×7) or nationwide holidays', () => {
    expect(validateCalendar(valid())).toEqual([]);
    expect(validateCalendar(null)).toEqual([]);
    expect(validateCalendar({ ...valid(), holidays: { country: 'DE' } })).toEqual([]);
    expect(validateCalendar({ ...valid(), holidays: null, time_zone: 'America/New_York' })).toEqual([]);
  });

  test.each(['Europe/Munich', 'Mars/Olympus', '+01:00', 'CET+1', '', 42])(
    'When the time zone is %p, then time_zone is named',
    (timeZone) => {
      expect(validateCalendar({ ...valid(), time_zone: timeZone })).toEqual([
        { field: 'time_zone', message: expect.stringMatching(/time zone/) },
      ]);
    },
  );

  test('When time zones are aliases, then they are accepted', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(validateCalendar({ ...valid(), time_zone: 'UTC' })).toEqual([]);
  });

  test('When intervals are malformed, then each bad start or end is named with its day and index', () => {
    const calendar = valid();
    calendar.hours.mon = [
      { start: '8:00', end: '17:00' },
      { start: '09:00', end: '25:00' },
      { start: '24:00', end: '24:00' },
      { start: '17:00', end: '09:00' },
      { start: '12:00', end: '12:00' },
    ];
    expect(validateCalendar(calendar)).toEqual([
      { field: 'hours.mon[0].start', message: 'must be a time HH:MM from 00:00 to 23:59' },
      { field: 'hours.mon[1].end', message: 'must be a time HH:MM from 00:01 to 24:00' },
      { field: 'hours.mon[2].start', message: 'must be a time HH:MM from 00:00 to 23:59' },
      { field: 'hours.mon[3].end', message: 'must be after start' },
      { field: 'hours.mon[4].end', message: 'must be after start' },
    ]);
  });

  test('When intervals of a day overlap, then the later one is named; when they only touch, then that is fine', () => {
    const calendar = valid();
    calendar.hours.tue = [
      { start: '13:00', end: '18:00' },
      { start: '08:00', end: '13:30' },
    ];
    expect(validateCalendar(calendar)).toEqual([{ field: 'hours.tue[0]', message: 'overlaps hours.tue[1]' }]);
    calendar.hours.tue = [
      { start: '13:00', end: '18:00' },
      { start: '08:00', end: '13:00' },
    ];
    expect(validateCalendar(calendar)).toEqual([]);
  });

  test('When days are missing, unknown or not lists, then each is named', () => {
    const hours: Record<string, unknown> = { ...valid().hours };
    delete hours.sun;
    expect(validateCalendar({ ...valid(), hours: { ...hours, sat: 'closed', monday: [] } })).toEqual([
      { field: 'hours.monday', message: expect.stringContaining('is not a day') },
      { field: 'hours.sat', message: expect.stringContaining('is required') },
      { field: 'hours.sun', message: expect.stringContaining('is required') },
    ]);
    expect(validateCalendar({ ...valid(), hours: { ...valid().hours, wed: [null] } })).toEqual([
      { field: 'hours.wed[0]', message: 'must be an object {start, end}' },
    ]);
  });

  test('When no day has business hours, then hours is named (such a clock would never run)', () => {
    const hours = Object.fromEntries(WEEKDAYS.map((day) => [day, []]));
    expect(validateCalendar({ ...valid(), hours })).toEqual([
      { field: 'hours', message: 'must have business hours on at least one day' },
    ]);
  });

  test('When the holidays name another country or an unknown region, then that field is named', () => {
    expect(validateCalendar({ ...valid(), holidays: { country: 'AT', region: 'DE-BY' } })).toEqual([
      { field: 'holidays.country', message: 'must be DE' },
    ]);
    expect(validateCalendar({ ...valid(), holidays: { country: 'DE', region: 'DE-XX' } })).toEqual([
      { field: 'holidays.region', message: expect.stringContaining('must be a German state') },
    ]);
    expect(validateCalendar({ ...valid(), holidays: 'DE-BY' })).toEqual([
      { field: 'holidays', message: 'must be {country, region} or null' },
    ]);
    const withoutHolidays: Record<string, unknown> = valid();
    delete withoutHolidays.holidays;
    expect(validateCalendar(withoutHolidays)).toEqual([
      { field: 'holidays', message: expect.stringContaining('is required') },
    ]);
  });

  test('When closed days are not dates, then each bad one is named', () => {
    expect(validateCalendar({ ...valid(), closed_days: ['2026-12-24', '2026-02-30', 'tomorrow', 20261231] })).toEqual([
      { field: 'closed_days[1]', message: 'must be a date YYYY-MM-DD' },
      { field: 'closed_days[2]', message: 'must be a date YYYY-MM-DD' },
      { field: 'closed_days[3]', message: 'must be a date YYYY-MM-DD' },
    ]);
    expect(validateCalendar({ ...valid(), closed_days: undefined })).toEqual([
      { field: 'closed_days', message: expect.stringContaining('is required') },
    ]);
  });

  test('When a prefix is given, then every field is under it; when the value is no object, then the prefix itself is named', () => {
    expect(
      validateCalendar({ ...valid(), time_zone: 'Nowhere', closed_days: ['x'] }, 'calendar').map(
        (error) => error.field,
      ),
    ).toEqual(['calendar.time_zone', 'calendar.closed_days[0]']);
    expect(validateCalendar('24x7', 'calendar')).toEqual([{ field: 'calendar', message: 'must be an object or null' }]);
    expect(validateCalendar([])).toEqual([{ field: '(body)', message: 'must be an object or null' }]);
  });
});
