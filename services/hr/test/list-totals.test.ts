import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { addEmployee, expectProblem, newCallerWithEmployee, type CallerWithEmployee } from './support/callers';
import { startHr, type TestHr } from './support/hr';

/*
 * Every list's `total` is exact (list_counts, kept by triggers in the writing transaction,
 * or count(*) where the filter bounds it), with and without each filter, after every kind of write
 * through the API and after rejected ones; and `after` walks each list once, in order.
 */

const API = '/api/v1';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

type Caller = CallerWithEmployee;

const get = (auth: string, path: string) => request(hr.app).get(`${API}${path}`).set('Authorization', auth);
const send = (auth: string, method: 'post' | 'patch' | 'delete', path: string, body?: object) => {
  const req = request(hr.app)[method](`${API}${path}`).set('Authorization', auth);
  return body ? req.send(body) : req;
};

async function count(sql: string, values: unknown[]): Promise<number> {
  const [row] = await hr.db.$queryRawUnsafe<{ n: bigint }[]>(sql, ...values);
  return Number(row!.n);
}

/** The `total` the API answers for `path` (one item a page, so it is not the page's length). */
async function totalOf(auth: string, path: string): Promise<number> {
  const response = await get(auth, `${path}${path.includes('?') ? '&' : '?'}per_page=1`);
  expect(response.status).toBe(200);
  return response.body.pagination.total as number;
}

/**
 * Each (path, WHERE over the table for the tenant $1) pair: the API's total against count(*) of
 * what is stored. `values` fill $2... of every WHERE.
 */
async function expectTotalsExact(
  auth: string,
  table: string,
  tenantId: string,
  cases: [string, string][],
  values: unknown[] = [],
) {
  const answered = await Promise.all(cases.map(([path]) => totalOf(auth, path)));
  const stored = await Promise.all(
    cases.map(([, where]) =>
      count(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1::uuid ${where}`, [tenantId, ...values]),
    ),
  );
  expect(Object.fromEntries(cases.map(([path], i) => [path, answered[i]]))).toEqual(
    Object.fromEntries(cases.map(([path], i) => [path, stored[i]])),
  );
  return answered;
}

/** Every counter of the tenant's list against count(*) of the rows it stands for. */
async function expectCountersExact(list: string, tenantId: string, dimensions: string[]) {
  const counters = await hr.db.$queryRawUnsafe<{ dimension: string; value: string; count: bigint }[]>(
    `SELECT dimension, value, count FROM list_counts WHERE tenant_id = $1::uuid AND list = $2 AND count <> 0`,
    tenantId,
    list,
  );
  const actual = await hr.db.$queryRawUnsafe<{ dimension: string; value: string; count: bigint }[]>(
    [
      `SELECT 'all' AS dimension, '' AS value, count(*) FROM ${list} WHERE tenant_id = $1::uuid HAVING count(*) > 0`,
      ...dimensions.map(
        (d) => `SELECT '${d}', to_jsonb(t)->>'${d}', count(*) FROM ${list} t WHERE tenant_id = $1::uuid GROUP BY 2`,
      ),
    ].join(' UNION ALL '),
    tenantId,
  );
  const key = (r: { dimension: string; value: string; count: bigint }) =>
    `${r.dimension}=${r.value}:${Number(r.count)}`;
  expect(counters.map(key).sort()).toEqual(actual.map(key).sort());
}

/**
 * The ids of a list walked by `after`: the first page, then the page after its last item, then
 * each keyset page's Link `next` (itself an `after`) until there is none.
 */
async function walkByAfter(auth: string, path: string, perPage: number): Promise<string[]> {
  const base = `${API}${path}${path.includes('?') ? '&' : '?'}per_page=${perPage}`;
  const first = await request(hr.app).get(base).set('Authorization', auth);
  expect(first.status).toBe(200);
  const ids: string[] = first.body.data.map((item: { id: string }) => item.id);
  let url: string | undefined = ids.length === perPage ? `${base}&after=${ids[ids.length - 1]}` : undefined;
  while (url) {
    const response: request.Response = await request(hr.app).get(url).set('Authorization', auth);
    expect(response.status).toBe(200);
    expect(response.body.pagination.page).toBeUndefined();
    ids.push(...response.body.data.map((item: { id: string }) => item.id));
    const next = /<([^>]+)>; rel="next"/.exec(response.headers.link as string)?.[1];
    if (next) expect(new URL(next).searchParams.get('page')).toBeNull();
    url = next ? new URL(next).pathname + new URL(next).search : undefined;
  }
  return ids;
}

/** The ids of the whole list in one page: the order `after` must keep. */
async function allIds(auth: string, path: string): Promise<string[]> {
  const response = await get(auth, `${path}${path.includes('?') ? '&' : '?'}per_page=100`);
  expect(response.status).toBe(200);
  return response.body.data.map((item: { id: string }) => item.id);
}

async function expectWalksOnce(auth: string, path: string) {
  const expected = await allIds(auth, path);
  expect(expected.length).toBeGreaterThan(1);
  for (const perPage of [1, 2, 3]) expect(await walkByAfter(auth, path, perPage)).toEqual(expected);
}

const DAY = [{ start: '08:00', end: '12:00', category: 'normal' }];

async function sheet(caller: Caller, userId: string, date: string): Promise<string> {
  const response = await send(caller.auth, 'post', '/timesheets', { user_id: userId, date, entries: DAY });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function leave(
  caller: Caller,
  userId: string,
  type: string,
  start_date: string,
  end_date: string,
): Promise<string> {
  const response = await send(caller.auth, 'post', '/leaves', { user_id: userId, type, start_date, end_date });
  expect(response.status).toBe(201);
  return response.body.id;
}

describe('GET /timesheets totals', () => {
  test('When sheets are recorded, replaced and deleted, then the total is exact without and with each filter, and rejected writes change nothing', async () => {
    const caller = await newCallerWithEmployee(hr);
    const other = await addEmployee(hr, caller.tenantId);
    const a = caller.userId;
    const cases = (): [string, string][] => [
      ['/timesheets', ''],
      [`/timesheets?user_id=${a}`, `AND user_id = '${a}'`],
      [`/timesheets?user_id=${a.toUpperCase()}`, `AND user_id = '${a}'`],
      [`/timesheets?user_id=${other}`, `AND user_id = '${other}'`],
      ['/timesheets?from=2026-10-07', `AND date >= '2026-10-07'`],
      ['/timesheets?to=2026-10-07', `AND date <= '2026-10-07'`],
      ['/timesheets?from=2026-10-06&to=2026-10-08', `AND date BETWEEN '2026-10-06' AND '2026-10-08'`],
      ['/timesheets?from=2026-10-08&to=2026-10-08', `AND date = '2026-10-08'`],
      [`/timesheets?user_id=${a}&from=2026-10-07`, `AND user_id = '${a}' AND date >= '2026-10-07'`],
    ];
    const stranger = await newCallerWithEmployee(hr);
    await sheet(stranger, stranger.userId, '2026-10-07'); // another tenant's: counted for it, not here
    const check = async () => {
      const totals = await expectTotalsExact(caller.auth, 'timesheets', caller.tenantId, cases());
      await expectCountersExact('timesheets', caller.tenantId, ['user_id', 'date']);
      return totals;
    };

    expect(await check()).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    const ids = [];
    for (const date of ['2026-10-05', '2026-10-06', '2026-10-07', '2026-10-08', '2026-10-09'])
      ids.push(await sheet(caller, a, date));
    await sheet(caller, other, '2026-10-07');
    await sheet(caller, other, '2026-10-12');
    expect(await check()).toEqual([7, 5, 5, 2, 5, 4, 4, 1, 3]);

    // Replacing a day's entries (and its neighbours' warnings) changes no total.
    const replaced = await send(caller.auth, 'patch', `/timesheets/${ids[2]}`, {
      entries: [{ start: '07:00', end: '19:00', category: 'normal' }],
    });
    expect(replaced.status).toBe(422); // over 10 h: refused
    const patched = await send(caller.auth, 'patch', `/timesheets/${ids[2]}`, {
      entries: [{ start: '22:00', end: '24:00', category: 'normal' }],
    });
    expect(patched.status).toBe(200);
    expect(await check()).toEqual([7, 5, 5, 2, 5, 4, 4, 1, 3]);

    expect((await send(caller.auth, 'delete', `/timesheets/${ids[3]}`)).status).toBe(204);
    expect(await check()).toEqual([6, 4, 4, 2, 4, 4, 3, 0, 2]);

    // Rejected: a second sheet for a day (409), a user who is no employee (422), another date (422), a deleted sheet (404).
    expect(
      (await send(caller.auth, 'post', '/timesheets', { user_id: a, date: '2026-10-05', entries: DAY })).status,
    ).toBe(409);
    expect(
      (await send(caller.auth, 'post', '/timesheets', { user_id: randomUUID(), date: '2026-10-20', entries: DAY }))
        .status,
    ).toBe(422);
    expect(
      (await send(caller.auth, 'patch', `/timesheets/${ids[0]}`, { date: '2026-10-21', entries: DAY })).status,
    ).toBe(422);
    expect((await send(caller.auth, 'delete', `/timesheets/${ids[3]}`)).status).toBe(404);
    expect(await check()).toEqual([6, 4, 4, 2, 4, 4, 3, 0, 2]);
  });
});

describe('GET /leaves totals', () => {
  test('When leaves are requested and moved, then the total is exact without and with each filter, and rejected writes change nothing', async () => {
    const caller = await newCallerWithEmployee(hr);
    const other = await addEmployee(hr, caller.tenantId);
    const a = caller.userId;
    const cases: [string, string][] = [
      ['/leaves', ''],
      [`/leaves?user_id=${a}`, `AND user_id = '${a}'`],
      [`/leaves?user_id=${other.toUpperCase()}`, `AND user_id = '${other}'`],
      ['/leaves?status=requested', `AND status = 'requested'`],
      ['/leaves?status=approved', `AND status = 'approved'`],
      ['/leaves?status=cancelled', `AND status = 'cancelled'`],
      ['/leaves?type=vacation', `AND type = 'vacation'`],
      ['/leaves?type=sick', `AND type = 'sick'`],
      ['/leaves?from=2026-10-14', `AND end_date >= '2026-10-14'`],
      ['/leaves?to=2026-10-14', `AND start_date <= '2026-10-14'`],
      ['/leaves?from=2026-10-13&to=2026-10-20', `AND end_date >= '2026-10-13' AND start_date <= '2026-10-20'`],
      ['/leaves?from=2026-10-14&to=2026-10-14', `AND end_date >= '2026-10-14' AND start_date <= '2026-10-14'`],
      ['/leaves?from=1900-01-01&to=2199-12-31', ''],
      [`/leaves?user_id=${a}&status=requested`, `AND user_id = '${a}' AND status = 'requested'`],
    ];
    const check = async () => {
      const totals = await expectTotalsExact(caller.auth, 'leaves', caller.tenantId, cases);
      await expectCountersExact('leaves', caller.tenantId, ['user_id', 'status', 'type', 'start_date', 'end_date']);
      return totals;
    };

    const first = await leave(caller, a, 'vacation', '2026-10-05', '2026-10-09');
    const second = await leave(caller, a, 'sick', '2026-10-12', '2026-10-14');
    const third = await leave(caller, other, 'vacation', '2026-10-14', '2026-10-16');
    await leave(caller, other, 'unpaid', '2026-10-21', '2026-10-23');
    const before = await check();
    expect(before).toEqual([4, 2, 2, 4, 0, 0, 2, 1, 3, 3, 2, 2, 4, 2]);

    expect((await send(caller.auth, 'patch', `/leaves/${first}`, { status: 'approved' })).status).toBe(200);
    expect((await send(caller.auth, 'patch', `/leaves/${third}`, { status: 'cancelled' })).status).toBe(200);
    expect(await check()).toEqual([4, 2, 2, 2, 1, 1, 2, 1, 3, 3, 2, 2, 4, 1]);

    // Rejected: an overlap (409), an illegal move (422), an end before the start (422), no employee (422).
    expect(
      (
        await send(caller.auth, 'post', '/leaves', {
          user_id: a,
          type: 'vacation',
          start_date: '2026-10-13',
          end_date: '2026-10-13',
        })
      ).status,
    ).toBe(409);
    expect((await send(caller.auth, 'patch', `/leaves/${third}`, { status: 'approved' })).status).toBe(422);
    expect(
      (
        await send(caller.auth, 'post', '/leaves', {
          user_id: a,
          type: 'vacation',
          start_date: '2026-12-13',
          end_date: '2026-12-12',
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await send(caller.auth, 'post', '/leaves', {
          user_id: randomUUID(),
          type: 'sick',
          start_date: '2026-12-13',
          end_date: '2026-12-14',
        })
      ).status,
    ).toBe(422);
    expect(await check()).toEqual([4, 2, 2, 2, 1, 1, 2, 1, 3, 3, 2, 2, 4, 1]);
    expect(second).toBeDefined();
  });
});

describe('GET /employees and /employees/{id}/contracts totals', () => {
  test('When employees are registered and changed, then the total is exact without and with each filter, and rejected writes change nothing', async () => {
    const caller = await newCallerWithEmployee(hr);
    const second = randomUUID();
    const created = await send(caller.auth, 'post', '/employees', {
      user_id: second,
      personnel_number: '900001',
      name: 'Max Mustermann',
    });
    expect(created.status).toBe(201);
    await addEmployee(hr, caller.tenantId);
    const cases = (number: string): [string, string][] => [
      ['/employees', ''],
      [`/employees?user_id=${second}`, `AND user_id = '${second}'`],
      [`/employees?user_id=${second.toUpperCase()}`, `AND user_id = '${second}'`],
      [`/employees?personnel_number=${number}`, `AND personnel_number = '${number}'`],
      [`/employees?user_id=${randomUUID()}`, 'AND false'],
    ];
    expect(await expectTotalsExact(caller.auth, 'employees', caller.tenantId, cases('900001'))).toEqual([
      3, 1, 1, 1, 0,
    ]);
    await expectCountersExact('employees', caller.tenantId, []);

    expect(
      (await send(caller.auth, 'patch', `/employees/${created.body.id}`, { personnel_number: '900002' })).status,
    ).toBe(200);
    expect(await expectTotalsExact(caller.auth, 'employees', caller.tenantId, cases('900002'))).toEqual([
      3, 1, 1, 1, 0,
    ]);
    expect(await totalOf(caller.auth, '/employees?personnel_number=900001')).toBe(0);

    // Rejected: the same user (409), the same number (409), an end before the start (422).
    expect(
      (await send(caller.auth, 'post', '/employees', { user_id: second, personnel_number: '900003', name: 'X' }))
        .status,
    ).toBe(409);
    expect(
      (await send(caller.auth, 'post', '/employees', { user_id: randomUUID(), personnel_number: '900002', name: 'X' }))
        .status,
    ).toBe(409);
    expect(
      (
        await send(caller.auth, 'post', '/employees', {
          user_id: randomUUID(),
          personnel_number: '900004',
          name: 'X',
          employment: { start_date: '2026-10-02', end_date: '2026-10-01' },
        })
      ).status,
    ).toBe(422);
    expect(await expectTotalsExact(caller.auth, 'employees', caller.tenantId, cases('900002'))).toEqual([
      3, 1, 1, 1, 0,
    ]);
    await expectCountersExact('employees', caller.tenantId, []);
  });

  test("When contracts are added, then the employee's total is exact, and a rejected contract changes nothing", async () => {
    const caller = await newCallerWithEmployee(hr);
    const [employee] = (await get(caller.auth, `/employees?user_id=${caller.userId}`)).body.data;
    const path = `/employees/${employee.id}/contracts`;
    const contract = (valid_from: string) => ({
      valid_from,
      weekly_minutes: 2400,
      working_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      vacation_days_per_year: 30,
      state: 'DE-BE',
    });
    for (const day of ['2024-01-01', '2025-01-01', '2026-01-01'])
      expect((await send(caller.auth, 'post', path, contract(day))).status).toBe(201);
    expect(
      await expectTotalsExact(caller.auth, 'contracts', caller.tenantId, [
        [path, `AND employee_id = '${employee.id}'`],
      ]),
    ).toEqual([3]);
    expect((await send(caller.auth, 'post', path, contract('2026-01-01'))).status).toBe(409);
    expect(
      (await send(caller.auth, 'post', path, { ...contract('2026-06-01'), vacation_days_per_year: 10 })).status,
    ).toBe(422);
    expect(
      await expectTotalsExact(caller.auth, 'contracts', caller.tenantId, [
        [path, `AND employee_id = '${employee.id}'`],
      ]),
    ).toEqual([3]);
  });
});

describe('after (keyset pages)', () => {
  /** A tenant with some of every list, ties in each list's order (sheets and leaves of two users on one day). */
  async function tenantWithLists() {
    const caller = await newCallerWithEmployee(hr);
    const other = await addEmployee(hr, caller.tenantId);
    await addEmployee(hr, caller.tenantId);
    for (const date of ['2026-10-05', '2026-10-06', '2026-10-07']) {
      await sheet(caller, caller.userId, date);
      await sheet(caller, other, date);
    }
    await leave(caller, caller.userId, 'vacation', '2026-10-05', '2026-10-06');
    await leave(caller, other, 'vacation', '2026-10-05', '2026-10-07');
    await leave(caller, caller.userId, 'sick', '2026-10-12', '2026-10-12');
    await leave(caller, other, 'sick', '2026-10-12', '2026-10-13');
    const [employee] = (await get(caller.auth, `/employees?user_id=${caller.userId}`)).body.data;
    const contract = (valid_from: string) => ({
      valid_from,
      weekly_minutes: 2400,
      working_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      vacation_days_per_year: 30,
      state: 'DE-BE',
    });
    for (const day of ['2024-01-01', '2025-01-01', '2026-01-01'])
      expect((await send(caller.auth, 'post', `/employees/${employee.id}/contracts`, contract(day))).status).toBe(201);
    return { caller, other, employeeId: employee.id as string };
  }

  test("When a list is walked by after, then every item comes exactly once, in the list's order, with and without a filter", async () => {
    const { caller, other, employeeId } = await tenantWithLists();
    for (const path of [
      '/employees',
      '/timesheets',
      `/timesheets?user_id=${other}`,
      '/timesheets?from=2026-10-06',
      '/leaves',
      '/leaves?type=vacation&from=2026-10-01',
      '/leaves?status=requested',
      `/employees/${employeeId}/contracts`,
    ]) {
      await expectWalksOnce(caller.auth, path);
    }
  });

  test('When after names the last item, then the page is empty with the exact total, and Link has no next', async () => {
    const { caller } = await tenantWithLists();
    const ids = await allIds(caller.auth, '/timesheets');
    const response = await get(caller.auth, `/timesheets?per_page=2&after=${ids[ids.length - 1]}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], pagination: { per_page: 2, total: 6, total_pages: 3 } });
    expect(response.headers.link).not.toContain('rel="next"');
    expect(response.headers.link).toMatch(/[?&]page=1[^>]*>; rel="first"/);
    expect(response.headers.link).toMatch(/[?&]page=3[^>]*>; rel="last"/);
  });

  test('When after names no item of the list, or comes with page above 1, then it answers 400 naming after', async () => {
    const { caller, employeeId } = await tenantWithLists();
    const stranger = await tenantWithLists();
    const strangers = {
      employees: (await allIds(stranger.caller.auth, '/employees'))[0],
      timesheets: (await allIds(stranger.caller.auth, '/timesheets'))[0],
      leaves: (await allIds(stranger.caller.auth, '/leaves'))[0],
      contracts: (await allIds(stranger.caller.auth, `/employees/${stranger.employeeId}/contracts`))[0],
    };
    const mine = (await allIds(caller.auth, '/timesheets'))[0];
    for (const [path, after] of [
      ['/employees', randomUUID()],
      ['/employees', strangers.employees],
      ['/timesheets', randomUUID()],
      ['/timesheets', strangers.timesheets],
      ['/timesheets', (await allIds(caller.auth, '/leaves'))[0]],
      ['/leaves', strangers.leaves],
      [`/employees/${employeeId}/contracts`, strangers.contracts],
    ] as const) {
      const response = await get(caller.auth, `${path}?after=${after}`);
      expectProblem(response, 400, 'validation-error');
      expect(response.body.errors).toEqual([
        { field: 'after', message: 'names no item of this list (deleted since, or of another list)' },
      ]);
    }
    const both = await get(caller.auth, `/timesheets?page=2&after=${mine}`);
    expectProblem(both, 400, 'validation-error');
    expect(both.body.errors).toEqual([
      { field: 'after', message: 'must not be combined with page above 1: `after` pages by keyset, `page` by number' },
    ]);
    expectProblem(await get(caller.auth, '/leaves?after=not-a-uuid'), 400, 'validation-error');
  });
});
