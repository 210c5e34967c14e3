import { workingDayList, type GermanState, type Weekday } from '@msp/calendar';
import request from 'supertest';
import { expectProblem } from './support/callers';
import { startHr, type TestHr } from './support/hr';
import { approvedLeave, employeeWith, fullTime, seedSheets, workDay, type TestEmployee } from './support/employees';

// The overtime account (issue 23, point 6), through HTTP. Full time: 480 minutes a working day.

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

const get = (e: TestEmployee, period: string) => request(hr.app).get(`/api/v1/employees/${e.id}/time-account${period ? `?period=${period}` : ''}`).set('Authorization', e.auth);

async function accountOf(e: TestEmployee, period: string) {
  const response = await get(e, period);
  expect(response.status).toBe(200);
  return response.body;
}

describe('GET /employees/:id/time-account', () => {
  test('When March 2027 is asked in Berlin and in Bavaria, then 8 March (Frauentag, Berlin only) lowers Berlin\'s target by a day', async () => {
    // Both keep Good Friday (26 March) and Easter Monday (29 March): 21 working days in Bavaria, 20 in Berlin.
    const berlin = await employeeWith(hr, { start_date: '2027-03-01' }, [fullTime('DE-BE', '2027-03-01')]);
    const bavaria = await employeeWith(hr, { start_date: '2027-03-01' }, [fullTime('DE-BY', '2027-03-01')]);
    await workDay(hr, berlin, '2027-03-02', 540);

    expect(await accountOf(berlin, '2027-03')).toEqual({
      period: '2027-03',
      target_minutes: 20 * 480,
      worked_minutes: 540,
      credited_minutes: 0,
      balance_minutes: 540 - 20 * 480,
      opening_balance_minutes: 0,
      closing_balance_minutes: 540 - 20 * 480,
    });
    expect((await accountOf(bavaria, '2027-03')).target_minutes).toBe(21 * 480);
  });

  test('When a week of vacation is approved, then its days are credited with their target (a sick leave over it is credited once)', async () => {
    const e = await employeeWith(hr, { start_date: '2027-03-01' }, [fullTime('DE-BY', '2027-03-01')]);
    await approvedLeave(hr, e, 'vacation', '2027-03-15', '2027-03-19');
    await approvedLeave(hr, e, 'sick', '2027-03-18', '2027-03-19');
    await workDay(hr, e, '2027-03-01', 480);

    const account = await accountOf(e, '2027-03');
    expect(account).toMatchObject({ target_minutes: 21 * 480, worked_minutes: 480, credited_minutes: 5 * 480, balance_minutes: 480 + 5 * 480 - 21 * 480 });
  });

  test('When the employment starts mid-month, then only the days from its start have a target, and the months before are empty', async () => {
    // From Wednesday 17 March 2027: 17–19, 22–25 and 30–31 March (Good Friday and Easter Monday are holidays).
    const e = await employeeWith(hr, { start_date: '2027-03-17' }, [fullTime('DE-BY', '2027-01-01')]);

    expect(await accountOf(e, '2027-03')).toMatchObject({ target_minutes: 9 * 480, opening_balance_minutes: 0, closing_balance_minutes: -9 * 480 });
    expect(await accountOf(e, '2027-02')).toMatchObject({ target_minutes: 0, balance_minutes: 0, opening_balance_minutes: 0, closing_balance_minutes: 0 });
  });

  test('When months have passed, then each month opens with the previous one\'s closing balance, since the employment started', async () => {
    const e = await employeeWith(hr, { start_date: '2027-01-01' }, [fullTime('DE-BY', '2027-01-01')]);
    // January 2027 in Bavaria: 19 working days (1 and 6 January are holidays); February: 20.
    await seedSheets(hr, e, [
      { date: '2026-12-30', worked: 600 }, // before the employment: not counted
      { date: '2027-01-04', worked: 600 },
      { date: '2027-02-01', worked: 500 },
    ]);

    const january = await accountOf(e, '2027-01');
    const february = await accountOf(e, '2027-02');
    const march = await accountOf(e, '2027-03');

    expect(january).toMatchObject({ target_minutes: 19 * 480, worked_minutes: 600, opening_balance_minutes: 0, closing_balance_minutes: 600 - 19 * 480 });
    expect(february).toMatchObject({ target_minutes: 20 * 480, worked_minutes: 500, opening_balance_minutes: january.closing_balance_minutes });
    expect(february.closing_balance_minutes).toBe(january.closing_balance_minutes + 500 - 20 * 480);
    expect(march.opening_balance_minutes).toBe(february.closing_balance_minutes);
  });

  test('When the employment started in 1900 under two contracts and the month is 2199-12, then the balance carries every working day since as the calendar lists them, less the approved leave', async () => {
    const early = { valid_from: '1900-01-01', weekly_minutes: 1000, working_days: ['mon', 'wed', 'sat'], vacation_days_per_year: 12, state: 'DE-BY' };
    const late = fullTime('DE-BE', '2050-03-15');
    const e = await employeeWith(hr, { start_date: '1900-01-01' }, [early, late]);
    await approvedLeave(hr, e, 'sick', '1950-06-05', '1950-06-10');
    await workDay(hr, e, '2100-01-04', 480);

    // The same figures, day by day, from @msp/calendar: what the account must come to however it counts.
    const days = (from: string, to: string, terms: { working_days: string[]; state: string }) =>
      workingDayList(from, to, { workingWeekdays: terms.working_days as Weekday[], region: terms.state as GermanState }).length;
    const targetBefore = 333 * days('1900-01-01', '2050-03-14', early) + 480 * days('2050-03-15', '2199-11-30', late);
    const credited = 333 * days('1950-06-05', '1950-06-10', early);

    expect(await accountOf(e, '2199-12')).toEqual({
      period: '2199-12',
      target_minutes: 480 * days('2199-12-01', '2199-12-31', late),
      worked_minutes: 0,
      credited_minutes: 0,
      balance_minutes: -480 * days('2199-12-01', '2199-12-31', late),
      opening_balance_minutes: 480 + credited - targetBefore,
      closing_balance_minutes: 480 + credited - targetBefore - 480 * days('2199-12-01', '2199-12-31', late),
    });
    expect(await accountOf(e, '1950-06')).toMatchObject({ credited_minutes: credited, target_minutes: 333 * days('1950-06-01', '1950-06-30', early) });
  });

  test.each([
    ['a month 13', '?period=2027-13'],
    ['a day instead of a month', '?period=2027-03-01'],
  ])('When the query has %s, then it answers 400', async (_case, query) => {
    const e = await employeeWith(hr, null, []);
    expectProblem(await request(hr.app).get(`/api/v1/employees/${e.id}/time-account${query}`).set('Authorization', e.auth), 400, 'validation-error');
  });

  test('When no period is given, then it is the current month (UTC)', async () => {
    const e = await employeeWith(hr, null, []);
    expect((await accountOf(e, '')).period).toBe(new Date().toISOString().slice(0, 7));
  });

  test('When the employee is another tenant\'s, then it answers 404', async () => {
    const e = await employeeWith(hr, null, []);
    const other = await employeeWith(hr, null, []);
    expectProblem(await request(hr.app).get(`/api/v1/employees/${e.id}/time-account?period=2027-03`).set('Authorization', other.auth), 404, 'not-found');
  });
});
