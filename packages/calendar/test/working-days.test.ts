import { workingDayList, workingDays } from '../src';

describe('workingDays', () => {
  test('When a week in January holds 6 January, then Bavaria counts 4 working days and Berlin 5', () => {
    expect(workingDays('2026-01-05', '2026-01-11', { region: 'DE-BY' })).toBe(4);
    expect(workingDays('2026-01-05', '2026-01-11', { region: 'DE-BE' })).toBe(5);
    expect(workingDayList('2026-01-05', '2026-01-11', { region: 'DE-BY' })).toEqual([
      '2026-01-05',
      '2026-01-07',
      '2026-01-08',
      '2026-01-09',
    ]);
  });

  test('When 8 March falls on a Monday (2027), then Berlin has one working day less that week than Bavaria', () => {
    expect(workingDays('2027-03-08', '2027-03-14', { region: 'DE-BE' })).toBe(4);
    expect(workingDays('2027-03-08', '2027-03-14', { region: 'DE-BY' })).toBe(5);
  });

  test('When a person works Monday, Wednesday and Thursday, then only those days count', () => {
    const options = { workingWeekdays: ['mon', 'wed', 'thu'] as const, region: 'DE-BY' as const };
    // 1–14 June 2026: Fronleichnam (Thursday 4 June) is a holiday in Bavaria.
    expect(workingDayList('2026-06-01', '2026-06-14', options)).toEqual([
      '2026-06-01',
      '2026-06-03',
      '2026-06-08',
      '2026-06-10',
      '2026-06-11',
    ]);
    expect(workingDays('2026-06-01', '2026-06-14', { ...options, workingWeekdays: ['sat', 'sun'] })).toBe(4);
  });

  test('When no region is given, then only the weekdays count; with DE, the nationwide holidays are days off', () => {
    // 2026: 261 weekdays; nationwide holidays on weekdays: 1 Jan, Good Friday, Easter Monday, 1 May,
    // Ascension, Whit Monday, 25 Dec (3 Oct and 26 Dec are Saturdays).
    expect(workingDays('2026-01-01', '2026-12-31')).toBe(261);
    expect(workingDays('2026-01-01', '2026-12-31', { region: 'DE' })).toBe(254);
    expect(workingDays('2026-01-01', '2026-12-31', { region: 'DE-BY' })).toBe(254 - 2); // 6 Jan and Fronleichnam; 1 Nov is a Sunday
  });

  test('When closed days are given, then they are days off too (15 August in a Catholic commune of Bavaria)', () => {
    expect(workingDays('2027-08-09', '2027-08-20', { region: 'DE-BY' })).toBe(10);
    expect(workingDays('2027-08-09', '2027-08-20', { region: 'DE-BY', closedDays: ['2027-08-16'] })).toBe(9);
  });

  test('When to is before from, then there are none; when from is to, then that one day', () => {
    expect(workingDays('2026-01-10', '2026-01-01')).toBe(0);
    expect(workingDayList('2026-01-07', '2026-01-07', { region: 'DE-BY' })).toEqual(['2026-01-07']);
  });

  test('When a date, weekday or region is bad, then the caller gets a typed error', () => {
    expect(() => workingDays('2026-02-30', '2026-03-01')).toThrow(
      expect.objectContaining({ name: 'CalendarInputError', code: 'invalid-date' }),
    );
    expect(() => workingDays('2026-03-01', '2026-03-31', { region: 'DE-XX' as never })).toThrow(
      expect.objectContaining({ code: 'unknown-region' }),
    );
    expect(() => workingDays('2026-03-01', '2026-03-31', { workingWeekdays: ['monday' as never] })).toThrow(RangeError);
  });

  test("When the span is long, then the count is the list's, computed from whole weeks and the holidays inside (1900 to 2100 and random spans)", () => {
    const options = [
      {},
      { region: 'DE-BY' as const },
      {
        region: 'DE-BE' as const,
        workingWeekdays: ['mon', 'sat', 'sun'] as const,
        closedDays: ['2026-12-24', '1999-02-29', '2031-08-15'],
      },
    ];
    for (const option of options) {
      expect(workingDays('1900-01-01', '2100-12-31', option)).toBe(
        workingDayList('1900-01-01', '2100-12-31', option).length,
      );
      for (let i = 0; i < 50; i++) {
        const start = Date.parse('1990-01-01') + Math.floor(Math.random() * 40 * 365) * 86_400_000;
        const from = new Date(start).toISOString().slice(0, 10);
        const to = new Date(start + Math.floor(Math.random() * 800) * 86_400_000).toISOString().slice(0, 10);
        expect({ from, to, count: workingDays(from, to, option) }).toEqual({
          from,
          to,
          count: workingDayList(from, to, option).length,
        });
      }
    }
  });
});
