import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createContractsRepository } from '../src/contracts/contracts.repository';
import { expectProblem } from './support/callers';
import { startHr, type TestHr } from './support/hr';
import { employeeWith } from './support/employees';

// Contracts, employment and leave accounts under the Bundesurlaubsgesetz, through HTTP.
// Today is whatever the clock says, so the accounts asked here are of past years (everything
// approved is taken) or of far future ones (everything approved is planned).

const API = '/api/v1';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

interface Employee {
  tenantId: string;
  auth: string;
  admin: string;
  id: string;
  userId: string;
}

const FIVE_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri'];

function contract(overrides: Record<string, unknown> = {}) {
  return {
    valid_from: '2024-01-01',
    weekly_minutes: 2400,
    working_days: FIVE_DAYS,
    vacation_days_per_year: 30,
    state: 'DE-BE',
    ...overrides,
  };
}

/** An employee of a fresh tenant, employed from `start` (to `end`), with the given contracts (none: no contract). */
async function newEmployee(
  employment: { start_date: string; end_date?: string | null } | null,
  contracts: Record<string, unknown>[] = [],
): Promise<Employee> {
  const employee = await employeeWith(hr, employment, contracts);
  return { ...employee, admin: `Bearer ${hr.token({ tenant_id: employee.tenantId, scope: 'admin:tenant' })}` };
}

const patchEmployee = (e: Employee, body: object) =>
  request(hr.app).patch(`${API}/employees/${e.id}`).set('Authorization', e.auth).send(body);
const addContract = (e: Employee, body: object) =>
  request(hr.app).post(`${API}/employees/${e.id}/contracts`).set('Authorization', e.auth).send(body);
const account = (e: Employee, year: number) =>
  request(hr.app).get(`${API}/employees/${e.id}/leave-account?year=${year}`).set('Authorization', e.auth);
const putSettings = (e: Employee, body: object) =>
  request(hr.app).put(`${API}/leave/settings`).set('Authorization', e.admin).send(body);

async function accountOf(e: Employee, year: number) {
  const response = await account(e, year);
  expect(response.status).toBe(200);
  return response.body;
}

const postLeave = (e: Employee, type: string, start: string, end: string) =>
  request(hr.app)
    .post(`${API}/leaves`)
    .set('Authorization', e.auth)
    .send({ user_id: e.userId, type, start_date: start, end_date: end });

async function leave(
  e: Employee,
  type: string,
  start: string,
  end: string,
  status: 'requested' | 'approved' = 'approved',
) {
  const response = await postLeave(e, type, start, end);
  expect(response.status).toBe(201);
  if (status === 'approved') {
    const approved = await request(hr.app)
      .patch(`${API}/leaves/${response.body.id}`)
      .set('Authorization', e.auth)
      .send({ status: 'approved' });
    expect(approved.status).toBe(200);
    return approved.body;
  }
  return response.body;
}

describe('Contracts', () => {
  test(
    'When a contract is added, then it answers 201 with the contract, lists it, shows ' +
      "it as the employee's current one and records contract.created",
    async () => {
      const e = await newEmployee(null);

      const response = await addContract(e, contract({ working_days: ['fri', 'mon', 'wed', 'tue', 'thu'] }));

      expect(response.status).toBe(201);
      expect(response.headers.location).toBe(`${API}/employees/${e.id}/contracts`);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        employee_id: e.id,
        valid_from: '2024-01-01',
        weekly_minutes: 2400,
        working_days: FIVE_DAYS,
        vacation_days_per_year: 30,
        state: 'DE-BE',
        opening_balance_minutes: null,
        time_zone: 'Europe/Berlin',
        created_at: expect.any(String),
      });
      const listed = await request(hr.app).get(`${API}/employees/${e.id}/contracts`).set('Authorization', e.auth);
      expect(listed.body).toMatchObject({
        data: [response.body],
        pagination: { page: 1, per_page: 25, total: 1, total_pages: 1 },
      });
      const employee = await request(hr.app).get(`${API}/employees/${e.id}`).set('Authorization', e.auth);
      expect(employee.body.current_contract).toEqual(response.body);
      const events = await hr.db.outboxEvent.findMany({ where: { tenantId: e.tenantId, type: 'contract.created' } });
      expect(events.map((event) => (event.data as { object: unknown }).object)).toEqual([response.body]);
    },
  );

  test('When a second contract starts later, then the history lists both latest first and the current one is the one valid today', async () => {
    const e = await newEmployee(null, [contract({ valid_from: '2025-01-01' })]);
    const later = await addContract(
      e,
      contract({ valid_from: '2025-07-01', working_days: ['mon', 'tue', 'wed', 'thu'], vacation_days_per_year: 24 }),
    );
    const future = await addContract(e, contract({ valid_from: '2199-01-01' }));

    const listed = await request(hr.app).get(`${API}/employees/${e.id}/contracts`).set('Authorization', e.auth);
    expect(listed.body.data.map((c: { valid_from: string }) => c.valid_from)).toEqual([
      '2199-01-01',
      '2025-07-01',
      '2025-01-01',
    ]);
    const employee = await request(hr.app).get(`${API}/employees/${e.id}`).set('Authorization', e.auth);
    expect(employee.body.current_contract.id).toBe(later.body.id);
    expect(future.status).toBe(201);
  });

  test.each([
    [['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], 23.5, 24],
    [FIVE_DAYS, 19.5, 20],
    [['mon', 'tue', 'wed', 'thu'], 15, 16],
    [['mon'], 3.5, 4],
  ])(
    'When %j gets %d vacation days, below the §3 BUrlG minimum, then it answers 422 naming the minimum %d and stores nothing',
    async (days, given, minimum) => {
      const e = await newEmployee(null);

      const response = await addContract(e, contract({ working_days: days, vacation_days_per_year: given }));

      expectProblem(response, 422, 'unprocessable');
      expect(response.body.minimum).toBe(minimum);
      expect(response.body.detail).toContain(`at least ${minimum}`);
      expect(response.body.detail).toContain('§3 BUrlG');
      expect(response.body.errors).toEqual([
        {
          field: 'vacation_days_per_year',
          message: `must be at least ${minimum} (§3 BUrlG, ${days.length} working days a week)`,
        },
      ]);
      expect(await hr.db.contract.count({ where: { employeeId: e.id } })).toBe(0);
    },
  );

  test.each([
    [['mon', 'tue', 'wed', 'thu', 'fri', 'sat'], 24],
    [FIVE_DAYS, 20],
    [['mon', 'tue', 'wed', 'thu'], 16],
  ])('When %j gets exactly the minimum %d, then it is accepted', async (days, minimum) => {
    const e = await newEmployee(null);
    expect((await addContract(e, contract({ working_days: days, vacation_days_per_year: minimum }))).status).toBe(201);
  });

  test("When a contract repeats a valid_from, then it answers 409; a bad body is a 400; another tenant's employee is a 404", async () => {
    const e = await newEmployee(null, [contract()]);
    expectProblem(await addContract(e, contract()), 409, 'conflict');
    for (const bad of [
      { state: 'DE-XX' },
      { working_days: [] },
      { working_days: ['mon', 'mon'] },
      { vacation_days_per_year: 30.25 },
      { weekly_minutes: 0 },
    ]) {
      expectProblem(await addContract(e, contract(bad)), 400, 'validation-error');
    }
    const other = await newEmployee(null);
    const response = await request(hr.app)
      .post(`${API}/employees/${e.id}/contracts`)
      .set('Authorization', other.auth)
      .send(contract({ valid_from: '2026-01-01' }));
    expectProblem(response, 404, 'not-found');
    expectProblem(
      await request(hr.app).get(`${API}/employees/${e.id}/contracts`).set('Authorization', other.auth),
      404,
      'not-found',
    );
    expect(await hr.db.contract.count({ where: { employeeId: e.id } })).toBe(1);
  });
});

describe('The contract valid on a day (for timesheets and later features)', () => {
  test('When a day is asked, then the contract with the latest valid_from on or before it answers, and none before the first', async () => {
    const e = await newEmployee(null, [
      contract({ valid_from: '2025-01-01' }),
      contract({ valid_from: '2025-07-01', state: 'DE-BY' }),
    ]);
    const contracts = createContractsRepository(hr.db.service.db);

    expect(await contracts.validOn(e.tenantId, e.userId, '2024-12-31')).toBeNull();
    expect(await contracts.validOn(e.tenantId, e.userId, '2025-06-30')).toMatchObject({
      validFrom: '2025-01-01',
      state: 'DE-BE',
    });
    expect(await contracts.validOn(e.tenantId, e.userId, '2025-07-01')).toMatchObject({
      validFrom: '2025-07-01',
      state: 'DE-BY',
    });
    expect(await contracts.validOn(randomUUID(), e.userId, '2025-07-01')).toBeNull();
  });
});

describe('Employment', () => {
  test('When an employee is registered with its employment, then it shows it', async () => {
    const tenantId = randomUUID();
    const response = await request(hr.app)
      .post(`${API}/employees`)
      .set('Authorization', `Bearer ${hr.token({ tenant_id: tenantId, scope: 'write:hr' })}`)
      .send({ user_id: randomUUID(), personnel_number: '1', name: 'Max', employment: { start_date: '2026-03-15' } });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      employment: { start_date: '2026-03-15', end_date: null },
      current_contract: null,
    });
  });

  test('When the employment is set and then ended, then the employee shows both dates', async () => {
    const e = await newEmployee({ start_date: '2025-03-15' });
    const ended = await patchEmployee(e, { employment: { end_date: '2026-06-30' } });
    expect(ended.status).toBe(200);
    expect(ended.body.employment).toEqual({ start_date: '2025-03-15', end_date: '2026-06-30' });
  });

  test('When the end is before the start, then it answers 422 and changes nothing', async () => {
    const e = await newEmployee({ start_date: '2025-03-15' });
    const response = await patchEmployee(e, { employment: { end_date: '2025-03-14' } });
    expectProblem(response, 422, 'unprocessable');
    expect(response.body.errors).toEqual([
      { field: 'employment.end_date', message: 'must not be before start_date (2025-03-15)' },
    ]);
    expect(
      (await request(hr.app).get(`${API}/employees/${e.id}`).set('Authorization', e.auth)).body.employment,
    ).toEqual({ start_date: '2025-03-15', end_date: null });
  });
});

describe("Leave working days (public holidays of the contract's state)", () => {
  test.each([
    ['DE-BE', 4],
    ['DE-BY', 5],
  ])('When a week of leave includes 8 March 2027 in %s, then working_days is %d', async (state, days) => {
    const e = await newEmployee({ start_date: '2026-01-01' }, [contract({ valid_from: '2026-01-01', state })]);
    expect((await postLeave(e, 'vacation', '2027-03-08', '2027-03-12')).body.working_days).toBe(days);
  });

  test('When a leave spans a change of contract, then each day counts under the contract valid that day', async () => {
    const e = await newEmployee({ start_date: '2025-01-01' }, [
      contract({ valid_from: '2025-01-01' }),
      contract({ valid_from: '2025-07-01', working_days: ['mon', 'tue', 'wed', 'thu'], vacation_days_per_year: 24 }),
    ]);
    // Monday 30 June under Monday–Friday; Tuesday to Thursday 1–3 July under Monday–Thursday, Friday 4 July is no working day.
    expect((await postLeave(e, 'unpaid', '2025-06-30', '2025-07-04')).body.working_days).toBe(4);
  });
});

describe('Entitlement (§§4, 5 BUrlG)', () => {
  test.each([
    ['entry on 15 March: the waiting period ends in September, the whole year', { start_date: '2025-03-15' }, 2025, 30],
    ['entry on 1 July: the waiting period ends on 31 December, the whole year', { start_date: '2025-07-01' }, 2025, 30],
    [
      'entry on 15 July: the waiting period ends next January, 5/12 (August–December) of 30 = 12.5, rounded up (§5 (2))',
      { start_date: '2025-07-15' },
      2025,
      13,
    ],
    ['entry on 15 July, the next year: the whole year', { start_date: '2025-07-15' }, 2026, 30],
    [
      'exit on 30 June after the waiting period: 6/12 (§5 (1) c)',
      { start_date: '2020-01-01', end_date: '2025-06-30' },
      2025,
      15,
    ],
    [
      'exit on 1 July after the waiting period: the whole year',
      { start_date: '2020-01-01', end_date: '2025-07-01' },
      2025,
      30,
    ],
    ['exit on 15 May: 4/12 (January–April) of 30 = 10', { start_date: '2020-01-01', end_date: '2025-05-15' }, 2025, 10],
    ['exit the year before', { start_date: '2020-01-01', end_date: '2024-12-31' }, 2025, 0],
    ['entry the year after', { start_date: '2026-01-01' }, 2025, 0],
  ])('When %s, then entitlement_days is %d', async (_case, employment, year, days) => {
    const e = await newEmployee(employment, [contract({ valid_from: employment.start_date })]);
    expect((await accountOf(e, year)).entitlement_days).toBe(days);
  });

  test('When 5/12 of 20 days leave a fraction under half a day, then it is kept, not rounded (§5 (2))', async () => {
    const e = await newEmployee({ start_date: '2025-07-15' }, [
      contract({ valid_from: '2025-07-15', vacation_days_per_year: 20 }),
    ]);
    expect((await accountOf(e, 2025)).entitlement_days).toBe(8.33);
  });

  test('When the contract changes mid-year, then the entitlement is spread by the days each contract holds', async () => {
    const e = await newEmployee({ start_date: '2024-01-01' }, [
      contract({ valid_from: '2024-01-01' }),
      contract({ valid_from: '2025-07-01', working_days: ['mon', 'tue', 'wed', 'thu'], vacation_days_per_year: 24 }),
    ]);
    // (30 × 181 + 24 × 184) / 365 = 26.98, rounded up.
    expect((await accountOf(e, 2025)).entitlement_days).toBe(27);
  });

  test("When the employment start is not set, then the first contract's valid_from stands in", async () => {
    const e = await newEmployee(null, [contract({ valid_from: '2025-07-15' })]);
    expect((await accountOf(e, 2025)).entitlement_days).toBe(13);
  });
});

describe('Carry-over (§7 (3) BUrlG)', () => {
  /** Employed since 2024 with 30 days; 25 taken in 2024, so 5 carry into 2025. */
  async function withFiveCarried() {
    const e = await newEmployee({ start_date: '2024-01-01' }, [contract()]);
    await leave(e, 'vacation', '2024-06-03', '2024-07-05');
    return e;
  }

  test('When the carried-over days are not used by 31 March, then they expire after it', async () => {
    const e = await withFiveCarried();
    await leave(e, 'vacation', '2025-04-07', '2025-04-09');

    expect(await accountOf(e, 2024)).toMatchObject({
      entitlement_days: 30,
      taken_days: 25,
      planned_days: 0,
      remaining_days: 5,
    });
    expect(await accountOf(e, 2025)).toEqual({
      year: 2025,
      entitlement_days: 30,
      carried_over_days: 5,
      carry_over_expires_on: '2025-03-31',
      expired_days: 5,
      adjustments_days: 0,
      taken_days: 3,
      planned_days: 0,
      requested_days: 0,
      remaining_days: 27,
      adjustments: [],
    });
  });

  test('When vacation is taken before 31 March, then it uses the carried-over days first and only the rest expires', async () => {
    const e = await withFiveCarried();
    await leave(e, 'vacation', '2025-02-03', '2025-02-05');

    expect(await accountOf(e, 2025)).toMatchObject({
      carried_over_days: 5,
      expired_days: 2,
      taken_days: 3,
      remaining_days: 30,
    });
  });

  test("When the tenant moves the expiry to 30 April, then April's vacation uses the carried-over days, and the settings read back", async () => {
    const e = await withFiveCarried();
    await leave(e, 'vacation', '2025-04-07', '2025-04-09');

    const put = await putSettings(e, { carry_over_expiry: '04-30', allow_negative_balance: false });

    expect(put.status).toBe(200);
    expect(put.body).toEqual({ carry_over_expiry: '04-30', allow_negative_balance: false });
    expect((await request(hr.app).get(`${API}/leave/settings`).set('Authorization', e.auth)).body).toEqual(put.body);
    expect(await accountOf(e, 2025)).toMatchObject({
      carry_over_expires_on: '2025-04-30',
      expired_days: 2,
      remaining_days: 30,
    });
    const events = await hr.db.outboxEvent.findMany({
      where: { tenantId: e.tenantId, type: 'leave_settings.updated' },
    });
    expect(events.map((event) => event.changes)).toEqual([{ carry_over_expiry: { from: '03-31', to: '04-30' } }]);
  });

  test('When a future year is asked, then approved vacation is planned, requested vacation is requested, and nothing has expired yet', async () => {
    const e = await newEmployee({ start_date: '2024-01-01' }, [contract()]);
    await leave(e, 'vacation', '2030-06-03', '2030-06-07');
    await leave(e, 'vacation', '2030-07-01', '2030-07-02', 'requested');

    expect(await accountOf(e, 2030)).toMatchObject({
      taken_days: 0,
      planned_days: 5,
      requested_days: 2,
      expired_days: 0,
    });
  });
});

describe('Settings', () => {
  test('When the settings were never saved, then they are the defaults; a PUT needs admin:tenant and a day every year has', async () => {
    const e = await newEmployee(null);
    expect((await request(hr.app).get(`${API}/leave/settings`).set('Authorization', e.auth)).body).toEqual({
      carry_over_expiry: '03-31',
      allow_negative_balance: false,
    });
    const forbidden = await request(hr.app)
      .put(`${API}/leave/settings`)
      .set('Authorization', e.auth)
      .send({ carry_over_expiry: '04-30', allow_negative_balance: true });
    expect(forbidden.status).toBe(403);
    for (const day of ['02-29', '04-31', '13-01', '3-31']) {
      expectProblem(
        await putSettings(e, { carry_over_expiry: day, allow_negative_balance: false }),
        400,
        'validation-error',
      );
    }
    expect(await hr.db.leaveSettings.count({ where: { tenantId: e.tenantId } })).toBe(0);
  });
});

describe('Adjustments', () => {
  test('When an adjustment is recorded, then the account counts and lists it, and leave_adjustment.created is recorded', async () => {
    const e = await newEmployee({ start_date: '2024-01-01' }, [contract()]);

    const response = await request(hr.app)
      .post(`${API}/employees/${e.id}/leave-adjustments`)
      .set('Authorization', e.auth)
      .send({ year: 2025, days: 2.5, reason: 'TV-L §26' });
    const minus = await request(hr.app)
      .post(`${API}/employees/${e.id}/leave-adjustments`)
      .set('Authorization', e.auth)
      .send({ year: 2025, days: -0.5, reason: 'Correction' });

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${API}/employees/${e.id}/leave-account?year=2025`);
    expect(response.body).toEqual({
      id: expect.any(String),
      employee_id: e.id,
      year: 2025,
      days: 2.5,
      reason: 'TV-L §26',
      created_at: expect.any(String),
    });
    // 2024's 30 days expired unused after 31 March 2025: 30 + 30 − 30 + 2.
    expect(await accountOf(e, 2025)).toMatchObject({
      adjustments_days: 2,
      remaining_days: 32,
      adjustments: [response.body, minus.body],
    });
    expect(await hr.db.outboxEvent.count({ where: { tenantId: e.tenantId, type: 'leave_adjustment.created' } })).toBe(
      2,
    );
  });

  test('When the days are not in steps of 0.5 or are 0, then it answers 400 and stores nothing', async () => {
    const e = await newEmployee({ start_date: '2024-01-01' }, [contract()]);
    for (const days of [0.3, 0]) {
      const response = await request(hr.app)
        .post(`${API}/employees/${e.id}/leave-adjustments`)
        .set('Authorization', e.auth)
        .send({ year: 2025, days, reason: 'x' });
      expectProblem(response, 400, 'validation-error');
    }
    expect(await hr.db.leaveAdjustment.count({ where: { employeeId: e.id } })).toBe(0);
  });

  test('When another tenant asks for the account or adjusts it, then it answers 404', async () => {
    const e = await newEmployee({ start_date: '2024-01-01' }, [contract()]);
    const other = await newEmployee(null);
    expectProblem(
      await request(hr.app).get(`${API}/employees/${e.id}/leave-account?year=2025`).set('Authorization', other.auth),
      404,
      'not-found',
    );
    const adjust = await request(hr.app)
      .post(`${API}/employees/${e.id}/leave-adjustments`)
      .set('Authorization', other.auth)
      .send({ year: 2025, days: 1, reason: 'x' });
    expectProblem(adjust, 404, 'not-found');
    expectProblem(await account(e, 99), 400, 'validation-error');
  });
});

describe('Balance (insufficient_leave_balance)', () => {
  /** Entered 15 July 2025: 13 days in 2025. */
  const newcomer = () => newEmployee({ start_date: '2025-07-15' }, [contract({ valid_from: '2025-07-15' })]);

  test('When a vacation needs more than is left, then it answers 422 insufficient_leave_balance naming what is left, and stores nothing', async () => {
    const e = await newcomer();

    // 1–16 December 2025: 12 working days; then 2 more.
    await leave(e, 'vacation', '2025-12-01', '2025-12-16', 'requested');
    const response = await postLeave(e, 'vacation', '2025-12-17', '2025-12-18');

    expectProblem(response, 422, 'insufficient_leave_balance');
    expect(response.body).toMatchObject({
      year: 2025,
      needed_days: 2,
      remaining_days: 13,
      requested_days: 12,
      available_days: 1,
    });
    expect(response.body.detail).toContain('only 1 is left');
    expect(await hr.db.leave.count({ where: { userId: e.userId } })).toBe(1);
    // Exactly what is left fits.
    expect((await postLeave(e, 'vacation', '2025-12-17', '2025-12-17')).status).toBe(201);
  });

  test('When two vacations that fit only one at a time are requested at once, then exactly one is accepted', async () => {
    const e = await newcomer();

    // 1–9 and 10–18 December 2025: 7 working days each, 13 left.
    const responses = await Promise.all([
      postLeave(e, 'vacation', '2025-12-01', '2025-12-09'),
      postLeave(e, 'vacation', '2025-12-10', '2025-12-18'),
    ]);

    expect(responses.map((r) => r.status).sort()).toEqual([201, 422]);
    expect(await hr.db.leave.count({ where: { userId: e.userId } })).toBe(1);
  });

  test('When the tenant allows negative balances, then the same vacation is accepted and the account goes below zero', async () => {
    const e = await newcomer();
    expect((await putSettings(e, { carry_over_expiry: '03-31', allow_negative_balance: true })).status).toBe(200);

    await leave(e, 'vacation', '2025-12-01', '2025-12-18');

    expect(await accountOf(e, 2025)).toMatchObject({ entitlement_days: 13, taken_days: 14, remaining_days: -1 });
    expect(await accountOf(e, 2026)).toMatchObject({ carried_over_days: -1, expired_days: 0, remaining_days: 29 });
  });

  test('When the leave is not a vacation, then the balance does not limit it', async () => {
    const e = await newcomer();
    expect((await postLeave(e, 'unpaid', '2025-12-01', '2025-12-31')).status).toBe(201);
  });
});

describe('Sickness during vacation (§9 BUrlG)', () => {
  test(
    'When a sick leave overlaps an approved vacation, then it is accepted, the ' +
      'vacation shows the returned days and the account gets them back',
    async () => {
      const e = await newEmployee({ start_date: '2024-01-01' }, [contract()]);
      const vacation = await leave(e, 'vacation', '2030-06-03', '2030-06-07');

      const sick = await postLeave(e, 'sick', '2030-06-05', '2030-06-09');

      expect(sick.status).toBe(201);
      expect(sick.body.working_days).toBe(3);
      const shown = await request(hr.app).get(`${API}/leaves/${vacation.id}`).set('Authorization', e.auth);
      expect(shown.body).toMatchObject({ working_days: 5, returned_days: 3 });
      const listed = await request(hr.app)
        .get(`${API}/leaves?type=vacation&user_id=${e.userId}`)
        .set('Authorization', e.auth);
      expect(listed.body.data[0]).toMatchObject({ id: vacation.id, returned_days: 3 });
      expect(await accountOf(e, 2030)).toMatchObject({ planned_days: 2 });

      // Cancelled, the sick leave gives the days back to the vacation.
      expect(
        (
          await request(hr.app)
            .patch(`${API}/leaves/${sick.body.id}`)
            .set('Authorization', e.auth)
            .send({ status: 'cancelled' })
        ).status,
      ).toBe(200);
      expect(
        (await request(hr.app).get(`${API}/leaves/${vacation.id}`).set('Authorization', e.auth)).body.returned_days,
      ).toBe(0);
      expect(await accountOf(e, 2030)).toMatchObject({ planned_days: 5 });
    },
  );

  test('When a sick leave overlaps a vacation still requested, or another leave type overlaps an approved vacation, then it is a 409', async () => {
    const e = await newEmployee({ start_date: '2024-01-01' }, [contract()]);
    await leave(e, 'vacation', '2030-06-03', '2030-06-07', 'requested');
    expectProblem(await postLeave(e, 'sick', '2030-06-05', '2030-06-06'), 409, 'conflict');
    await leave(e, 'vacation', '2030-07-01', '2030-07-05');
    expectProblem(await postLeave(e, 'unpaid', '2030-07-02', '2030-07-03'), 409, 'conflict');
  });
});
