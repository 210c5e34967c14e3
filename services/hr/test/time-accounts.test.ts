import { workingDayList, type GermanState, type Weekday } from '@msp/calendar';
import request from 'supertest';
import { expectProblem } from './support/callers';
import { startHr, type TestHr } from './support/hr';
import { approvedLeave, employeeWith, fullTime, seedSheets, workDay, type TestEmployee } from './support/employees';

// The overtime account, through HTTP. Full time: 480 minutes a working day.

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

const get = (e: TestEmployee, period: string) =>
  request(hr.app)
    .get(`/api/v1/employees/${e.id}/time-account${period ? `?period=${period}` : ''}`)
    .set('Authorization', e.auth);

async function accountOf(e: TestEmployee, period: string) {
  const response = await get(e, period);
  expect(response.status).toBe(200);
  return response.body;
}

describe('GET /employees/:id/time-account', () => {
  test("When March 2027 is asked in Berlin and in Bavaria, then 8 March (Frauentag, Berlin only) lowers Berlin's target by a day", async () => {
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
    expect(account).toMatchObject({
      target_minutes: 21 * 480,
      worked_minutes: 480,
      credited_minutes: 5 * 480,
      balance_minutes: 480 + 5 * 480 - 21 * 480,
    });
  });

  test('When the employment starts mid-month, then only the days from its start have a target, and the months before are empty', async () => {
    // From Wednesday 17 March 2027: 17–19, 22–25 and 30–31 March (Good Friday and Easter Monday are holidays).
    const e = await employeeWith(hr, { start_date: '2027-03-17' }, [fullTime('DE-BY', '2027-01-01')]);

    expect(await accountOf(e, '2027-03')).toMatchObject({
      target_minutes: 9 * 480,
      opening_balance_minutes: 0,
      closing_balance_minutes: -9 * 480,
    });
    expect(await accountOf(e, '2027-02')).toMatchObject({
      target_minutes: 0,
      balance_minutes: 0,
      opening_balance_minutes: 0,
      closing_balance_minutes: 0,
    });
  });

  test("When months have passed, then each month opens with the previous one's closing balance, since the employment started", async () => {
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

    expect(january).toMatchObject({
      target_minutes: 19 * 480,
      worked_minutes: 600,
      opening_balance_minutes: 0,
      closing_balance_minutes: 600 - 19 * 480,
    });
    expect(february).toMatchObject({
      target_minutes: 20 * 480,
      worked_minutes: 500,
      opening_balance_minutes: january.closing_balance_minutes,
    });
    expect(february.closing_balance_minutes).toBe(january.closing_balance_minutes + 500 - 20 * 480);
    expect(march.opening_balance_minutes).toBe(february.closing_balance_minutes);
  });

  test(
    'When the employment started in 1900 under two contracts and the month is 2199-12, then the balance ' +
      'carries every working day since as the calendar lists them, less the approved leave',
    async () => {
      const early = {
        valid_from: '1900-01-01',
        weekly_minutes: 1000,
        working_days: ['mon', 'wed', 'sat'],
        vacation_days_per_year: 12,
        state: 'DE-BY',
      };
      const late = fullTime('DE-BE', '2050-03-15');
      const e = await employeeWith(hr, { start_date: '1900-01-01' }, [early, late]);
      await approvedLeave(hr, e, 'sick', '1950-06-05', '1950-06-10');
      await workDay(hr, e, '2100-01-04', 480);

      // The same figures, day by day, from @msp/calendar: what the account must come to however it counts.
      const days = (from: string, to: string, terms: { working_days: string[]; state: string }) =>
        workingDayList(from, to, {
          workingWeekdays: terms.working_days as Weekday[],
          region: terms.state as GermanState,
        }).length;
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
      expect(await accountOf(e, '1950-06')).toMatchObject({
        credited_minutes: credited,
        target_minutes: 333 * days('1950-06-01', '1950-06-30', early),
      });
    },
  );

  test.each([
    ['a month 13', '?period=2027-13'],
    ['a day instead of a month', '?period=2027-03-01'],
  ])('When the query has %s, then it answers 400', async (_case, query) => {
    const e = await employeeWith(hr, null, []);
    expectProblem(
      await request(hr.app).get(`/api/v1/employees/${e.id}/time-account${query}`).set('Authorization', e.auth),
      400,
      'validation-error',
    );
  });

  test('When no period is given, then it is the current month (UTC)', async () => {
    const e = await employeeWith(hr, null, []);
    expect((await accountOf(e, '')).period).toBe(new Date().toISOString().slice(0, 7));
  });

  test("When the employee is another tenant's, then it answers 404", async () => {
    const e = await employeeWith(hr, null, []);
    const other = await employeeWith(hr, null, []);
    expectProblem(
      await request(hr.app)
        .get(`/api/v1/employees/${e.id}/time-account?period=2027-03`)
        .set('Authorization', other.auth),
      404,
      'not-found',
    );
  });
});

describe('An opening balance brought in by a contract', () => {
  test(
    'When a contract carries opening_balance_minutes, then the account runs from its ' +
      'valid_from with that balance, not from an employment start years back',
    async () => {
      const e = await employeeWith(hr, { start_date: '2010-01-01' }, [
        fullTime('DE-BY', '2010-01-01'),
        { ...fullTime('DE-BY', '2027-03-01'), opening_balance_minutes: 1200 },
      ]);
      await workDay(hr, e, '2027-03-01', 540);
      // March 2027 in Bavaria: 21 working days (Good Friday and Easter Monday are holidays); April: 22.

      const march = await accountOf(e, '2027-03');
      const april = await accountOf(e, '2027-04');
      const february = await accountOf(e, '2027-02');

      expect(march).toEqual({
        period: '2027-03',
        target_minutes: 21 * 480,
        worked_minutes: 540,
        credited_minutes: 0,
        balance_minutes: 540 - 21 * 480,
        opening_balance_minutes: 1200,
        closing_balance_minutes: 1200 + 540 - 21 * 480,
      });
      expect(april).toMatchObject({ opening_balance_minutes: march.closing_balance_minutes, target_minutes: 22 * 480 });
      // Before the contract the account is what it was: every working day since 2010 owed.
      expect(february.opening_balance_minutes).toBeLessThan(-17 * 200 * 480);
    },
  );

  test('When the contract with the opening balance starts mid-month, then that month opens with it and counts only the days from valid_from', async () => {
    const e = await employeeWith(hr, { start_date: '2020-01-01' }, [
      fullTime('DE-BY', '2020-01-01'),
      { ...fullTime('DE-BY', '2027-03-17'), opening_balance_minutes: -300 },
    ]);
    await seedSheets(hr, e, [
      { date: '2027-03-16', worked: 480 }, // before the account starts afresh: not counted
      { date: '2027-03-17', worked: 600 },
    ]);

    // From Wednesday 17 March 2027: 17–19, 22–25 and 30–31 March.
    expect(await accountOf(e, '2027-03')).toMatchObject({
      target_minutes: 9 * 480,
      worked_minutes: 600,
      opening_balance_minutes: -300,
      closing_balance_minutes: -300 + 600 - 9 * 480,
    });
  });

  test('When a later contract carries no opening balance, then the account carries on through it from the earlier one', async () => {
    const e = await employeeWith(hr, { start_date: '2020-01-01' }, [
      { ...fullTime('DE-BY', '2027-03-01'), opening_balance_minutes: 60 },
      { ...fullTime('DE-BY', '2027-04-01'), weekly_minutes: 2000 },
    ]);
    const march = await accountOf(e, '2027-03');
    expect(march.opening_balance_minutes).toBe(60);
    expect(await accountOf(e, '2027-04')).toMatchObject({
      opening_balance_minutes: march.closing_balance_minutes,
      target_minutes: 22 * 400,
    });
  });

  test('When a contract is added with an opening balance, then it is stored and answered; without one it is null', async () => {
    const e = await employeeWith(hr, null, []);
    const add = (body: object) =>
      request(hr.app).post(`/api/v1/employees/${e.id}/contracts`).set('Authorization', e.auth).send(body);

    const withBalance = await add({ ...fullTime('DE-BE', '2027-01-01'), opening_balance_minutes: -4500 });
    expect(withBalance.status).toBe(201);
    expect(withBalance.body.opening_balance_minutes).toBe(-4500);
    const without = await add(fullTime('DE-BE', '2027-06-01'));
    expect(without.body.opening_balance_minutes).toBeNull();
    const listed = await request(hr.app).get(`/api/v1/employees/${e.id}/contracts`).set('Authorization', e.auth);
    expect(listed.body.data.map((c: { opening_balance_minutes: number | null }) => c.opening_balance_minutes)).toEqual([
      null,
      -4500,
    ]);
  });

  test.each([
    ['over the bound', 100_001, 'must be <= 100000'],
    ['under the bound', -100_001, 'must be >= -100000'],
    ['not whole minutes', 1.5, 'must be an integer'],
  ])(
    'When opening_balance_minutes is %s, then it answers 400 naming it and stores nothing',
    async (_case, value, message) => {
      const e = await employeeWith(hr, null, []);
      const response = await request(hr.app)
        .post(`/api/v1/employees/${e.id}/contracts`)
        .set('Authorization', e.auth)
        .send({ ...fullTime('DE-BE', '2027-01-01'), opening_balance_minutes: value });
      expectProblem(response, 400, 'validation-error');
      expect(response.body.errors).toEqual(expect.arrayContaining([{ field: 'opening_balance_minutes', message }]));
      expect(await hr.db.contract.count({ where: { employeeId: e.id } })).toBe(0);
    },
  );

  test('When the OpenAPI document is read, then it says from which day the account runs when a contract brings an opening balance', async () => {
    const document = (await request(hr.app).get('/api/v1/openapi.json').expect(200)).body;
    const property = document.components.schemas.CreateContractRequest.properties.opening_balance_minutes;
    expect(JSON.stringify(property)).toMatch(/runs from this contract's `valid_from`/);
    expect(document.paths['/employees/{id}/time-account'].get.description).toMatch(
      /`opening_balance_minutes` starts the account afresh on its `valid_from`/,
    );
  });
});
