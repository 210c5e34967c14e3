import {
  addDays,
  compareDates,
  dateOf,
  daysBetween,
  eachDate,
  fromEpochDay,
  isDateString,
  isoWeek,
  isoWeekString,
  toEpochDay,
  weekdayOf,
} from '../src';

describe('plain dates', () => {
  test.each(['2026-02-28', '2024-02-29', '2000-02-29', '2026-12-31', '0050-06-01'])(
    'When %s is checked, then it is a date',
    (date) => {
      expect(isDateString(date)).toBe(true);
    },
  );

  test.each([
    '2026-02-29',
    '1900-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '2026-4-1',
    '2026-04-01T00:00',
    ' 2026-04-01',
    20260401,
    null,
  ])('When %p is checked, then it is not a date', (value) => {
    expect(isDateString(value)).toBe(false);
  });

  test('When days are added across a month, a year and the clocks changing, then the calendar date moves by whole days', () => {
    expect(addDays('2026-03-28', 1)).toBe('2026-03-29');
    expect(addDays('2026-03-29', 1)).toBe('2026-03-30');
    expect(addDays('2026-10-25', 1)).toBe('2026-10-26');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(daysBetween('2026-01-01', '2027-01-01')).toBe(365);
    expect(daysBetween('2027-01-01', '2026-12-31')).toBe(-1);
  });

  test('When dates are turned into day numbers and back, then they are the same dates', () => {
    expect(toEpochDay('1970-01-01')).toBe(0);
    for (const date of ['1970-01-01', '2026-03-29', '2026-10-25', '2099-12-31', '0050-06-01'])
      expect(fromEpochDay(toEpochDay(date))).toBe(date);
  });

  test('When weekdays are asked, then they follow the calendar', () => {
    expect(weekdayOf('2026-11-20')).toBe('fri');
    expect(weekdayOf('2026-11-23')).toBe('mon');
    expect(weekdayOf('2026-03-29')).toBe('sun');
    expect(weekdayOf('1970-01-01')).toBe('thu');
    expect(weekdayOf('1969-12-29')).toBe('mon');
  });

  test('When dates are compared or listed, then the order is the calendar order', () => {
    expect(compareDates('2026-01-02', '2026-01-10')).toBe(-1);
    expect(compareDates('2026-01-10', '2026-01-10')).toBe(0);
    expect(compareDates('2027-01-01', '2026-12-31')).toBe(1);
    expect(eachDate('2026-12-30', '2027-01-02')).toEqual(['2026-12-30', '2026-12-31', '2027-01-01', '2027-01-02']);
    expect(eachDate('2026-01-02', '2026-01-01')).toEqual([]);
  });

  test('When a date is built from parts, then a day that does not exist is refused', () => {
    expect(dateOf(2026, 3, 8)).toBe('2026-03-08');
    expect(() => dateOf(2026, 2, 29)).toThrow(RangeError);
    expect(() => addDays('2026-02-30', 1)).toThrow(RangeError);
  });
});

describe('isoWeek', () => {
  test.each([
    ['2026-01-01', 2026, 1], // a Thursday: week 1
    ['2025-12-29', 2026, 1], // the Monday of that week, still in 2025
    ['2024-12-30', 2025, 1],
    ['2026-12-31', 2026, 53], // 2026 has 53 weeks
    ['2027-01-03', 2026, 53],
    ['2027-01-04', 2027, 1],
    ['2021-01-03', 2020, 53],
    ['2026-03-29', 2026, 13],
    ['2026-11-23', 2026, 48],
  ])('When the week of %s is asked, then it is %i-W%i', (date, year, week) => {
    expect(isoWeek(date)).toEqual({ year, week });
    expect(isoWeekString(date)).toBe(`${year}-W${String(week).padStart(2, '0')}`);
  });
});
