import { eachDate, weekdayOf } from '@msp/calendar';
import request from 'supertest';
import { expectProblem } from './support/callers';
import { startHr, type TestHr } from './support/hr';
import { employeeWith, seedSheets, type TestEmployee } from './support/employees';

// The working-time record an inspector asks for, through HTTP.

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

const get = (e: TestEmployee, query: string) =>
  request(hr.app).get(`/api/v1/employees/${e.id}/working-time?${query}`).set('Authorization', e.auth);

async function recordOf(e: TestEmployee, query: string) {
  const response = await get(e, query);
  expect(response.status).toBe(200);
  return response.body;
}

const newEmployee = () => employeeWith(hr, null, []);

async function sheet(e: TestEmployee, date: string, entries: { start: string; end: string; category: string }[]) {
  const response = await request(hr.app)
    .post('/api/v1/timesheets')
    .set('Authorization', e.auth)
    .send({ user_id: e.userId, date, entries });
  expect(response.status).toBe(201);
}

const SUNDAY_WARNING = {
  code: 'sunday_work',
  message: '2026-11-08 is a Sunday: work on Sundays is allowed only under the exceptions of §10 ArbZG (§9 ArbZG).',
};

/** A week with a Monday of 9 h (standby beside it) and a Sunday of 4 h. */
async function aWeek(e: TestEmployee) {
  await sheet(e, '2026-11-02', [
    { start: '08:00', end: '12:00', category: 'normal' },
    { start: '12:45', end: '17:45', category: 'normal' },
    { start: '18:00', end: '20:00', category: 'standby' },
  ]);
  await sheet(e, '2026-11-08', [{ start: '10:00', end: '14:00', category: 'normal' }]);
  await sheet(e, '2026-11-09', [{ start: '08:00', end: '12:00', category: 'normal' }]); // after `to`
}

describe('GET /employees/:id/working-time', () => {
  test("When a week is asked, then it answers each day with its worked, break and standby minutes and warnings, and the ISO week's total", async () => {
    const e = await newEmployee();
    await aWeek(e);

    const record = await recordOf(e, 'from=2026-11-02&to=2026-11-08');

    expect(record).toEqual({
      employee_id: e.id,
      from: '2026-11-02',
      to: '2026-11-08',
      days: [
        { date: '2026-11-02', worked_minutes: 540, break_minutes: 45, standby_minutes: 120, warnings: [] },
        { date: '2026-11-08', worked_minutes: 240, break_minutes: 0, standby_minutes: 0, warnings: [SUNDAY_WARNING] },
      ],
      weeks: [{ week: '2026-W45', worked_minutes: 780, standby_minutes: 120 }],
      average: {
        from: '2026-05-25',
        to: '2026-11-08',
        worked_minutes: 780,
        working_days: 144,
        minutes_per_working_day: 5.42,
      },
      sundays: { year: 2026, sundays: 52, worked: 1, free: 51 },
      warnings: [],
    });
  });

  test('When the record spans part of two ISO weeks, then both are listed with the totals of their days inside it', async () => {
    const e = await newEmployee();
    await aWeek(e);

    expect((await recordOf(e, 'from=2026-11-08&to=2026-11-10')).weeks).toEqual([
      { week: '2026-W45', worked_minutes: 240, standby_minutes: 0 },
      { week: '2026-W46', worked_minutes: 240, standby_minutes: 0 },
    ]);
  });

  describe('§3: at most 8 h per Werktag on average over 24 weeks', () => {
    // The 24 weeks ending on Sunday 8 November 2026 run from 25 May: 144 Werktage (Monday–Saturday).
    const werktage = eachDate('2026-05-25', '2026-11-08').filter((day) => weekdayOf(day) !== 'sun');

    test.each([
      ['exactly 8 h (69,120 min)', 0, 480, []],
      ['one minute more (69,121 min)', 1, 480.01, ['average_over_8_hours']],
    ])(
      'When the 144 Werktage hold on average %s, then the warning is given accordingly',
      async (_case, extra, average, codes) => {
        expect(werktage).toHaveLength(144);
        const e = await newEmployee();
        // 10 h and 6 h by turns (72 days each: 69,120 min), plus `extra` on the last; a day before the 24 weeks does not count.
        await seedSheets(hr, e, [
          { date: '2026-05-24', worked: 600 },
          ...werktage.map((date, i) => ({
            date,
            worked: (i % 2 === 0 ? 600 : 360) + (i === werktage.length - 1 ? extra : 0),
          })),
        ]);

        const record = await recordOf(e, 'from=2026-11-01&to=2026-11-08');

        expect(record.average).toEqual({
          from: '2026-05-25',
          to: '2026-11-08',
          worked_minutes: 69_120 + extra,
          working_days: 144,
          minutes_per_working_day: average,
        });
        expect(record.warnings.map((w: { code: string }) => w.code)).toEqual(codes);
        if (extra) expect(record.warnings[0].message).toContain('§3 ArbZG');
      },
    );
  });

  describe('§11 (1): at least 15 free Sundays a year', () => {
    // 2026 has 52 Sundays: 37 worked leaves 15 free (allowed), 38 leaves 14.
    const sundays = eachDate('2026-01-01', '2026-12-31').filter((day) => weekdayOf(day) === 'sun');

    test.each([
      [37, 15, []],
      [38, 14, ['too_few_free_sundays']],
    ])(
      'When %i Sundays of the year have work (%i free), then the warning is given accordingly',
      async (worked, free, codes) => {
        expect(sundays).toHaveLength(52);
        const e = await newEmployee();
        // A Sunday with a sheet but no working time (standby only) is free.
        await seedSheets(hr, e, [
          ...sundays.slice(0, worked).map((date) => ({ date, worked: 240 })),
          { date: sundays[worked]!, worked: 0 },
        ]);

        const record = await recordOf(e, 'from=2026-12-01&to=2026-12-31');

        expect(record.sundays).toEqual({ year: 2026, sundays: 52, worked, free });
        expect(record.warnings.map((w: { code: string }) => w.code)).toEqual(codes);
      },
    );
  });

  test('When format=csv, then it streams the days as CSV with a header row and CRLF, as an attachment', async () => {
    const e = await newEmployee();
    await aWeek(e);

    const response = await get(e, 'from=2026-11-02&to=2026-11-08&format=csv');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(
      'attachment; filename="working-time-2026-11-02-2026-11-08.csv"',
    );
    expect(response.text).toBe(
      'date,worked_minutes,break_minutes,standby_minutes,warnings\r\n' +
        '2026-11-02,540,45,120,\r\n' +
        '2026-11-08,240,0,0,sunday_work\r\n',
    );
  });

  test('When format=csv and no day has a sheet, then the file holds the header row only', async () => {
    const e = await newEmployee();
    const response = await get(e, 'from=2026-11-02&to=2026-11-08&format=csv');
    expect(response.status).toBe(200);
    expect(response.text).toBe('date,worked_minutes,break_minutes,standby_minutes,warnings\r\n');
  });

  test('When from and to are left out, then the record runs from 1 January to today (UTC)', async () => {
    const e = await newEmployee();
    const today = new Date().toISOString().slice(0, 10);
    expect(await recordOf(e, '')).toMatchObject({ from: `${today.slice(0, 4)}-01-01`, to: today });
  });

  test('When the record spans exactly a year less a day, then it answers 200', async () => {
    const e = await newEmployee();
    expect((await get(e, 'from=2026-01-01&to=2026-12-31')).status).toBe(200);
  });

  test.each([
    ['to is a year after from', 'from=2026-01-01&to=2027-01-01', 'to'],
    ['to is before from', 'from=2026-11-08&to=2026-11-07', 'to'],
    ['from is left out and to is not a date', 'to=2026-11-31', 'to'],
    ['the format is unknown', 'from=2026-11-01&to=2026-11-07&format=xlsx', 'format'],
  ])('When %s, then it answers 400 naming the field', async (_case, query, field) => {
    const e = await newEmployee();
    const response = await get(e, query);
    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
  });

  test("When the employee is another tenant's, then it answers 404", async () => {
    const e = await newEmployee();
    const other = await newEmployee();
    expectProblem(
      await request(hr.app)
        .get(`/api/v1/employees/${e.id}/working-time?from=2026-11-01&to=2026-11-07`)
        .set('Authorization', other.auth),
      404,
      'not-found',
    );
  });
});
