import type FullHolidays from 'date-holidays';
import type * as CalendarModule from '../src';
import {
  CalendarInputError,
  GERMAN_STATES,
  holidays,
  isCalendarInputError,
  isHoliday,
  type HolidayRegion,
} from '../src';

const NORTHERN = ['DE-HB', 'DE-HH', 'DE-NI', 'DE-SH'] as const;

describe('holidays', () => {
  test('When asking for Bavaria in 2026, then the list is its statewide holidays in date order, with German names', () => {
    expect(holidays('DE-BY', 2026)).toEqual([
      { date: '2026-01-01', name: 'Neujahr' },
      { date: '2026-01-06', name: 'Heilige Drei Könige' },
      { date: '2026-04-03', name: 'Karfreitag' },
      { date: '2026-04-06', name: 'Ostermontag' },
      { date: '2026-05-01', name: 'Maifeiertag' },
      { date: '2026-05-14', name: 'Christi Himmelfahrt' },
      { date: '2026-05-25', name: 'Pfingstmontag' },
      { date: '2026-06-04', name: 'Fronleichnam' },
      { date: '2026-10-03', name: 'Tag der Deutschen Einheit' },
      { date: '2026-11-01', name: 'Allerheiligen' },
      { date: '2026-12-25', name: '1. Weihnachtstag' },
      { date: '2026-12-26', name: '2. Weihnachtstag' },
    ]);
  });

  test('When asking for DE without a state, then the list is the nine holidays all of Germany keeps', () => {
    expect(holidays('DE', 2026).map((holiday) => holiday.date)).toEqual([
      '2026-01-01',
      '2026-04-03',
      '2026-04-06',
      '2026-05-01',
      '2026-05-14',
      '2026-05-25',
      '2026-10-03',
      '2026-12-25',
      '2026-12-26',
    ]);
  });

  test('When a caller changes a returned list, then the next answer is unchanged', () => {
    const list = holidays('DE-BE', 2026);
    list[0]!.name = 'changed';
    list.pop();
    expect(holidays('DE-BE', 2026)[0]!.name).toBe('Neujahr');
    expect(holidays('DE-BE', 2026)).toHaveLength(list.length + 1);
  });

  test('When every state is asked, then each has the nationwide holidays and a list of its own', () => {
    const nationwide = holidays('DE', 2026).map((holiday) => holiday.date);
    for (const state of GERMAN_STATES) {
      const dates = holidays(state, 2026).map((holiday) => holiday.date);
      expect(dates).toEqual(expect.arrayContaining(nationwide));
    }
  });
});

describe('isHoliday: the state rules', () => {
  test.each([
    ['DE-BY', '2026-01-06', true], // Heilige Drei Könige
    ['DE-BE', '2026-01-06', false],
    ['DE-BY', '2026-11-01', true], // Allerheiligen
    ['DE-BE', '2026-11-01', false],
    ['DE-BE', '2026-03-08', true], // Frauentag, Berlin since 2019
    ['DE-BY', '2026-03-08', false],
    ['DE-BE', '2018-03-08', false],
    ['DE-BE', '2019-03-08', true],
    ['DE-MV', '2023-03-08', true], // Frauentag, Mecklenburg-Vorpommern since 2023
    ['DE-MV', '2022-03-08', false],
    ['DE-TH', '2026-09-20', true], // Weltkindertag, Thüringen since 2019
    ['DE-TH', '2018-09-20', false],
    ['DE-SN', '2026-11-18', true], // Buß- und Bettag, Sachsen only
    ['DE-BY', '2026-11-18', false],
    ['DE-BY', '2026-06-04', true], // Fronleichnam
    ['DE-BE', '2026-06-04', false],
    ['DE-BY', '2026-08-15', false], // Mariä Himmelfahrt: not statewide in Bavaria
    ['DE-SL', '2026-08-15', true], // …but in the Saarland
    ['DE-BB', '2026-10-31', true], // Reformationstag in the eastern states for long
    ['DE-BW', '2026-10-31', false],
    ['DE', '2017-10-31', true], // once nationwide: 500 years of the Reformation
    ['DE', '2026-10-31', false],
    ['DE', '2026-10-03', true],
    ['DE-BE', '2025-05-08', true], // Berlin's one-off days: 80 years since the end of the war…
    ['DE-BE', '2026-05-08', false],
    ['DE-BE', '2028-06-17', true], // …and 75 years since the uprising of 17 June 1953
    ['DE-BB', '2028-06-17', false],
    ['DE-BY', '2026-12-24', false], // a bank day, not a public holiday
  ] as Array<[HolidayRegion, string, boolean]>)(
    'When %s is asked about %s, then the answer is %s',
    (region, date, expected) => {
      expect(isHoliday(region, date)).toBe(expected);
    },
  );

  test('When a northern state is asked about Reformationstag, then it is a holiday from 2018 on (and in 2017, nationwide), not before', () => {
    for (const state of NORTHERN) {
      expect([2016, 2017, 2018, 2026].map((year) => isHoliday(state, `${year}-10-31`))).toEqual([
        false,
        true,
        true,
        true,
      ]);
    }
  });
});

describe('bad input', () => {
  test.each(['DE-XX', 'BY', 'de-by', 'AT', '', null, undefined, 42])(
    'When the region is %p, then an unknown-region CalendarInputError is thrown',
    (region) => {
      const call = () => isHoliday(region as HolidayRegion, '2026-01-01');
      expect(call).toThrow(CalendarInputError);
      try {
        call();
      } catch (error) {
        expect(isCalendarInputError(error)).toBe(true);
        expect(error).toMatchObject({ code: 'unknown-region', value: region });
      }
      expect(() => holidays(region as HolidayRegion, 2026)).toThrow(
        expect.objectContaining({ code: 'unknown-region' }),
      );
    },
  );

  test.each(['2026-02-30', '2026-1-6', '06.01.2026', ''])(
    'When the date is %p, then an invalid-date CalendarInputError is thrown',
    (date) => {
      expect(() => isHoliday('DE-BY', date)).toThrow(
        expect.objectContaining({ name: 'CalendarInputError', code: 'invalid-date' }),
      );
    },
  );

  test.each([2026.5, Number.NaN, 99])(
    'When the year is %p, then an invalid-date CalendarInputError is thrown',
    (year) => {
      expect(() => holidays('DE-BY', year)).toThrow(expect.objectContaining({ code: 'invalid-date' }));
    },
  );
});

describe('the rules held to date-holidays (a devDependency; src/german-holidays.ts)', () => {
  test("When holidays are asked for, then date-holidays (every country's calendars, not shipped in the images) is never loaded", () => {
    jest.doMock('date-holidays', () => {
      throw new Error('date-holidays was loaded');
    });
    try {
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const fresh = require('../src') as typeof CalendarModule;
        expect(fresh.holidays('DE-BY', 2027).map((holiday) => holiday.date)).toContain('2027-01-06');
        expect(fresh.isHoliday('DE-SN', '2027-11-17')).toBe(true);
      });
    } finally {
      jest.dontMock('date-holidays');
    }
  });

  test("When every region is asked for every year from 1990 to 2060, then the answers are those of date-holidays with every country's rules loaded", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const Full = require('date-holidays') as typeof FullHolidays;
    for (const region of ['DE', ...GERMAN_STATES] as HolidayRegion[]) {
      const full =
        region === 'DE'
          ? new Full('DE', { types: ['public'] })
          : new Full('DE', region.slice(3), { types: ['public'] });
      for (let year = 1990; year <= 2060; year++) {
        const expected = full
          .getHolidays(year, 'de')
          .filter((holiday) => holiday.type === 'public')
          .map((holiday) => ({ date: holiday.date.slice(0, 10), name: holiday.name }))
          .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
        expect([region, year, holidays(region, year)]).toEqual([region, year, expected]);
      }
    }
  });
});
