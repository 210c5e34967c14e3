import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  addEmployee as addEmployeeTo,
  expectProblem,
  newCallerWithEmployee,
  type CallerWithEmployee,
} from './support/callers';
import { startHr, type TestHr } from './support/hr';
import { employeeWith, fullTime } from './support/employees';
import { YEARS_PATTERN } from '../src/day.schemas';

const LEAVES = '/api/v1/leaves';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

const newCaller = (scope?: string) => newCallerWithEmployee(hr, scope);
const addEmployee = (tenantId: string) => addEmployeeTo(hr, tenantId);

type LeaveJson = {
  id: string;
  user_id: string;
  type: string;
  status: string;
  start_date: string;
  end_date: string;
  working_days: number;
  note: string | null;
  created_at: string;
  updated_at: string;
};

type Caller = CallerWithEmployee;

const post = (auth: string, body: unknown) =>
  request(hr.app)
    .post(LEAVES)
    .set('Authorization', auth)
    .send(body as object);
const patch = (auth: string, id: string, body: unknown) =>
  request(hr.app)
    .patch(`${LEAVES}/${id}`)
    .set('Authorization', auth)
    .send(body as object);

function leaveInput(caller: Caller, overrides: Record<string, unknown> = {}) {
  return { user_id: caller.userId, type: 'vacation', start_date: '2026-10-29', end_date: '2026-11-03', ...overrides };
}

async function requestLeave(caller: Caller, overrides: Record<string, unknown> = {}): Promise<LeaveJson> {
  const response = await post(caller.auth, leaveInput(caller, overrides));
  expect(response.status).toBe(201);
  return response.body;
}

/** What the database holds for the tenant, in a comparable shape. */
async function storedLeaves(tenantId: string) {
  const rows = await hr.db.leave.findMany({ where: { tenantId }, orderBy: [{ startDate: 'asc' }, { id: 'asc' }] });
  return rows.map((row) => ({
    id: row.id,
    userId: row.userId,
    type: row.type,
    status: row.status,
    startDate: row.startDate.toISOString().slice(0, 10),
    endDate: row.endDate.toISOString().slice(0, 10),
    workingDays: row.workingDays,
    note: row.note,
    updatedAt: row.updatedAt.toISOString(),
  }));
}

describe('POST /leaves', () => {
  test('When a valid leave is requested, then it answers 201 with Location and the leave, requested, and stores it', async () => {
    const caller = await newCaller();

    const response = await post(caller.auth, leaveInput(caller, { note: 'Herbstferien' }));

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${LEAVES}/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: caller.userId,
      type: 'vacation',
      status: 'requested',
      start_date: '2026-10-29',
      end_date: '2026-11-03',
      // Thu 29, Fri 30 October, Mon 2, Tue 3 November.
      working_days: 4,
      returned_days: 0,
      note: 'Herbstferien',
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(Math.abs(Date.parse(response.body.created_at) - Date.now())).toBeLessThan(60_000);
    expect(await storedLeaves(caller.tenantId)).toEqual([
      {
        id: response.body.id,
        userId: caller.userId,
        type: 'vacation',
        status: 'requested',
        startDate: '2026-10-29',
        endDate: '2026-11-03',
        workingDays: 4,
        note: 'Herbstferien',
        updatedAt: response.body.updated_at,
      },
    ]);
  });

  test('When no note is sent, then note is null', async () => {
    const caller = await newCaller();
    expect((await requestLeave(caller)).note).toBeNull();
  });

  test.each([
    ['a single Monday', '2026-11-02', '2026-11-02', 1],
    ['a single Saturday', '2026-10-31', '2026-10-31', 0],
    ['a weekend', '2026-10-31', '2026-11-01', 0],
    ['Monday to Sunday', '2026-11-02', '2026-11-08', 5],
    ['Saturday to Friday', '2026-10-31', '2026-11-06', 5],
    ['two full weeks and a day', '2026-11-02', '2026-11-16', 11],
    ['across a leap day', '2028-02-28', '2028-03-01', 3],
    ['a whole year', '2026-01-01', '2026-12-31', 261],
    ['three whole years', '2026-01-01', '2028-12-31', 782],
  ])(
    'When the leave spans %s, then working_days counts Monday to Friday inclusive',
    async (_case, start, end, days) => {
      const caller = await newCaller();
      expect((await requestLeave(caller, { start_date: start, end_date: end })).working_days).toBe(days);
    },
  );

  test.each(['vacation', 'sick', 'unpaid', 'parental', 'special'])(
    'When the type is %s, then it is accepted',
    async (type) => {
      const caller = await newCaller();
      expect((await requestLeave(caller, { type })).type).toBe(type);
    },
  );

  test.each([
    ['an unknown type', { type: 'holiday' }, 'type', 'must be one of: vacation, sick, unpaid, parental, special'],
    ['a status', { status: 'approved' }, 'status', 'is not a known field'],
    ['an unknown field', { days: 3 }, 'days', 'is not a known field'],
    [
      'a start_date that does not exist',
      { start_date: '2026-02-30' },
      'start_date',
      'must be a valid date (YYYY-MM-DD)',
    ],
    ['a start_date before 1900', { start_date: '1899-12-31' }, 'start_date', `must match pattern "${YEARS_PATTERN}"`],
    ['an end_date in another format', { end_date: '03.11.2026' }, 'end_date', 'must be a valid date (YYYY-MM-DD)'],
    ['a user_id that is not a UUID', { user_id: 'erika' }, 'user_id', 'must be a valid uuid'],
    ['a note that is not text', { note: 42 }, 'note', 'must be of type string'],
    ['a note over 2000 characters', { note: 'x'.repeat(2001) }, 'note', 'must NOT have more than 2000 characters'],
  ])(
    'When the body has %s, then it answers 400 naming the field and stores nothing',
    async (_case, overrides, field, message) => {
      const caller = await newCaller();
      const response = await post(caller.auth, leaveInput(caller, overrides));

      expectProblem(response, 400, 'validation-error');
      expect(response.body.errors).toEqual([{ field, message }]);
      expect(await storedLeaves(caller.tenantId)).toEqual([]);
    },
  );

  test('When required fields are missing, then it answers 400 listing each of them', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, {});
    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual([
      { field: 'user_id', message: 'is required' },
      { field: 'type', message: 'is required' },
      { field: 'start_date', message: 'is required' },
      { field: 'end_date', message: 'is required' },
    ]);
  });

  test('When start_date is after end_date, then it answers 422 naming end_date and stores nothing', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, leaveInput(caller, { start_date: '2026-11-04', end_date: '2026-11-03' }));

    expectProblem(response, 422, 'unprocessable');
    expect(response.body.errors).toEqual([
      { field: 'end_date', message: 'must not be before start_date (2026-11-04)' },
    ]);
    expect(response.body.detail).toBe('end_date must not be before start_date (2026-11-04).');
    expect(await storedLeaves(caller.tenantId)).toEqual([]);
  });

  test('When the user_id is no employee of the tenant, then it answers 422 naming user_id and stores nothing', async () => {
    const caller = await newCaller();
    const otherTenantsUser = await addEmployee(randomUUID());

    for (const userId of [randomUUID(), otherTenantsUser]) {
      const response = await post(caller.auth, leaveInput(caller, { user_id: userId }));
      expectProblem(response, 422, 'unprocessable');
      expect(response.body.errors).toEqual([
        { field: 'user_id', message: 'is not the user_id of an employee of your tenant' },
      ]);
    }
    expect(await storedLeaves(caller.tenantId)).toEqual([]);
    expect(await hr.db.leave.count({ where: { userId: otherTenantsUser } })).toBe(0);
  });

  test(
    'When a leave spans a century of working days under a contract, then it answers 422 ' +
      'naming end_date and the last day it may end on, and stores nothing',
    async () => {
      const caller = await employeeWith(hr, { start_date: '1926-01-01' }, [fullTime('DE-BE', '1926-01-01')]);
      const response = await post(caller.auth, {
        user_id: caller.userId,
        type: 'unpaid',
        start_date: '1926-01-01',
        end_date: '2025-12-31',
      });

      expectProblem(response, 422, 'unprocessable');
      expect(response.body.errors).toEqual([
        { field: 'end_date', message: 'must be on or before 1928-12-31 (at most 3 years after start_date)' },
      ]);
      expect(response.body.latest_end_date).toBe('1928-12-31');
      expect(response.body.detail).toMatch(
        /^A leave spans at most 3 years .*§15 \(2\) BEEG.*end_date must be on or before 1928-12-31\.$/,
      );
      expect(await storedLeaves(caller.tenantId)).toEqual([]);
      expect(await hr.db.leaveDay.count({ where: { tenantId: caller.tenantId } })).toBe(0);
    },
  );

  test.each([
    ['three years to the day before', 201, '2026-01-01', '2028-12-31'],
    ['three years and a day', 422, '2026-01-01', '2029-01-01'],
    ['three years from 29 February, to 28 February', 201, '2028-02-29', '2031-02-28'],
    ['three years from 29 February, to 1 March', 422, '2028-02-29', '2031-03-01'],
  ])('When a parental leave spans %s, then it answers %s', async (_case, status, start, end) => {
    const caller = await newCaller();
    const response = await post(
      caller.auth,
      leaveInput(caller, { type: 'parental', start_date: start, end_date: end }),
    );
    expect(response.status).toBe(status);
    if (status === 201)
      expect(await hr.db.leaveDay.count({ where: { leaveId: response.body.id } })).toBe(0); // no contract: counted, not booked
    else
      expect(response.body.errors).toEqual([
        { field: 'end_date', message: expect.stringMatching(/^must be on or before /) },
      ]);
  });

  test('When both rules break, then the 422 names both fields', async () => {
    const caller = await newCaller();
    const response = await post(
      caller.auth,
      leaveInput(caller, { user_id: randomUUID(), start_date: '2026-11-04', end_date: '2026-11-03' }),
    );
    expectProblem(response, 422, 'unprocessable');
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual(['user_id', 'end_date']);
  });

  test.each([
    ['the same days', '2026-10-29', '2026-11-03'],
    ['its last day', '2026-11-03', '2026-11-10'],
    ['its first day', '2026-10-20', '2026-10-29'],
    ['days inside it', '2026-10-30', '2026-11-02'],
    ['it whole and more', '2026-10-01', '2026-11-30'],
  ])(
    'When a new leave overlaps %s of a requested or approved one, then it answers 409 naming it and stores nothing',
    async (_case, start, end) => {
      for (const status of ['requested', 'approved']) {
        const caller = await newCaller();
        const existing = await requestLeave(caller);
        if (status === 'approved') expect((await patch(caller.auth, existing.id, { status })).status).toBe(200);
        const before = await storedLeaves(caller.tenantId);

        // Not `sick`: a sick leave may overlap an approved vacation (§9 BUrlG, leave-accounts.test.ts).
        const response = await post(
          caller.auth,
          leaveInput(caller, { type: 'unpaid', start_date: start, end_date: end }),
        );

        expectProblem(response, 409, 'conflict');
        expect(response.body.detail).toContain(existing.id);
        expect(response.body).toMatchObject({
          existing_id: existing.id,
          existing_url: `${LEAVES}/${existing.id}`,
          errors: [
            { field: 'start_date', message: `overlaps leave ${existing.id} (2026-10-29 to 2026-11-03, ${status})` },
          ],
        });
        expect(await storedLeaves(caller.tenantId)).toEqual(before);
      }
    },
  );

  test('When the overlapping leave was rejected or cancelled, then it does not block', async () => {
    const caller = await newCaller();
    const rejected = await requestLeave(caller);
    expect((await patch(caller.auth, rejected.id, { status: 'rejected' })).status).toBe(200);
    const cancelled = await requestLeave(caller);
    expect((await patch(caller.auth, cancelled.id, { status: 'cancelled' })).status).toBe(200);

    const response = await post(caller.auth, leaveInput(caller));

    expect(response.status).toBe(201);
    expect((await storedLeaves(caller.tenantId)).map((l) => l.status).sort()).toEqual([
      'cancelled',
      'rejected',
      'requested',
    ]);
  });

  test('When the leaves touch but do not overlap, or belong to another user or tenant, then neither blocks', async () => {
    const caller = await newCaller();
    await requestLeave(caller, { start_date: '2026-10-29', end_date: '2026-11-03' });
    await requestLeave(caller, { start_date: '2026-11-04', end_date: '2026-11-04' });
    await requestLeave(caller, { start_date: '2026-10-28', end_date: '2026-10-28' });
    await requestLeave({ ...caller, userId: await addEmployee(caller.tenantId) });
    const other = await newCaller();
    await requestLeave(other);
    expect(await storedLeaves(caller.tenantId)).toHaveLength(4);
  });

  test('When overlapping leaves of one user are requested concurrently, then no two of the stored ones overlap and the others answer 409', async () => {
    const caller = await newCaller();
    const ranges = [
      ['2026-12-01', '2026-12-10'],
      ['2026-12-05', '2026-12-15'],
      ['2026-12-10', '2026-12-20'],
      ['2026-11-25', '2026-12-01'],
      ['2026-12-03', '2026-12-04'],
      ['2026-12-01', '2026-12-31'],
    ];

    const responses = await Promise.all(
      ranges.map(([start, end]) => post(caller.auth, leaveInput(caller, { start_date: start, end_date: end }))),
    );

    // Not every pair of these ranges overlaps, so which ones win depends on the order: whatever
    // was stored must be free of overlaps, and every other request must have been a 409.
    const created = responses.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(responses.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const stored = await storedLeaves(caller.tenantId);
    expect(stored.map((l) => l.id).sort()).toEqual(created.map((r) => r.body.id).sort());
    for (const a of stored) {
      for (const b of stored) if (a.id !== b.id) expect(a.startDate > b.endDate || b.startDate > a.endDate).toBe(true);
    }
  });

  test('When the same leave is requested by several concurrent requests, then exactly one answers 201 and the rest 409', async () => {
    const caller = await newCaller();
    // Half of them name the user in capitals: the same user all the same.
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post(caller.auth, leaveInput(caller, { user_id: i % 2 ? caller.userId.toUpperCase() : caller.userId })),
      ),
    );
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(5);
    for (const r of responses.filter((r) => r.status === 409)) expect(r.body.existing_id).toBe(created[0]!.body.id);
    expect((await storedLeaves(caller.tenantId)).map((l) => l.id)).toEqual([created[0]!.body.id]);
  });

  test('When the token has read:hr only, then it answers 403 and stores nothing', async () => {
    const caller = await newCaller('read:hr');
    expectProblem(await post(caller.auth, leaveInput(caller)), 403, 'insufficient-scope');
    expect(await storedLeaves(caller.tenantId)).toEqual([]);
  });
});

const STATUSES = ['requested', 'approved', 'rejected', 'cancelled'] as const;
const ALLOWED: Record<string, string[]> = {
  requested: ['approved', 'rejected', 'cancelled'],
  approved: ['cancelled'],
  rejected: [],
  cancelled: [],
};
const pairs = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as const));
const legal = pairs.filter(([from, to]) => ALLOWED[from]!.includes(to));
const same = pairs.filter(([from, to]) => from === to);
const illegal = pairs.filter(([from, to]) => from !== to && !ALLOWED[from]!.includes(to));

/** A leave brought into `status` by the legal moves. */
async function leaveIn(caller: Caller, status: string): Promise<LeaveJson> {
  const leave = await requestLeave(caller);
  if (status === 'requested') return leave;
  const response = await patch(caller.auth, leave.id, { status });
  expect(response.status).toBe(200);
  return response.body;
}

describe('PATCH /leaves/:id', () => {
  test('the pairs cover every (from, to) of the four states', () => {
    expect(legal.length + same.length + illegal.length).toBe(16);
    expect(legal).toHaveLength(4);
  });

  describe.each(legal)('When a %s leave is moved to %s', (from, to) => {
    test('then it answers 200 with the new status, stored, and a later updated_at', async () => {
      const caller = await newCaller();
      const leave = await leaveIn(caller, from);

      const response = await patch(caller.auth, leave.id, { status: to });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ ...leave, status: to, updated_at: expect.any(String) });
      expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(leave.updated_at));
      const [stored] = await storedLeaves(caller.tenantId);
      expect(stored).toMatchObject({ status: to, updatedAt: response.body.updated_at });
    });
  });

  describe.each(same)('When a %s leave is set to %s again', (from) => {
    test('then it answers 200 and nothing changes, not even updated_at', async () => {
      const caller = await newCaller();
      const leave = await leaveIn(caller, from);
      const before = await storedLeaves(caller.tenantId);

      const response = await patch(caller.auth, leave.id, { status: from });

      expect(response.status).toBe(200);
      expect(response.body).toEqual(leave);
      expect(await storedLeaves(caller.tenantId)).toEqual(before);
    });
  });

  describe.each(illegal)('When a %s leave is moved to %s', (from, to) => {
    test('then it answers 422 listing the allowed next states and the leave is unchanged', async () => {
      const caller = await newCaller();
      const leave = await leaveIn(caller, from);
      const before = await storedLeaves(caller.tenantId);

      const response = await patch(caller.auth, leave.id, { status: to });

      expectProblem(response, 422, 'illegal-transition');
      expect(response.body).toMatchObject({ current_status: from, allowed_transitions: ALLOWED[from] });
      expect(response.body.detail).toBe(
        ALLOWED[from]!.length === 0
          ? `A ${from} leave is final and cannot move to ${to}; request a new leave instead.`
          : `A leave cannot move from ${from} to ${to}; allowed: ${ALLOWED[from]!.join(', ')}.`,
      );
      expect(await storedLeaves(caller.tenantId)).toEqual(before);
    });
  });

  test.each([
    ['an unknown status', { status: 'pending' }, 'status', 'must be one of: requested, approved, rejected, cancelled'],
    ['another field', { status: 'approved', end_date: '2026-11-04' }, 'end_date', 'is not a known field'],
    ['nothing', {}, 'status', 'is required'],
  ])('When the body has %s, then it answers 400 and changes nothing', async (_case, body, field, message) => {
    const caller = await newCaller();
    const leave = await requestLeave(caller);
    const before = await storedLeaves(caller.tenantId);

    const response = await patch(caller.auth, leave.id, body);

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual([{ field, message }]);
    expect(await storedLeaves(caller.tenantId)).toEqual(before);
  });

  test('When the leave belongs to another tenant or is unknown, then it answers 404 and changes nothing', async () => {
    const owner = await newCaller();
    const leave = await requestLeave(owner);
    const before = await storedLeaves(owner.tenantId);
    const stranger = await newCaller();
    for (const id of [leave.id, randomUUID(), 'nope'])
      expectProblem(await patch(stranger.auth, id, { status: 'approved' }), 404, 'not-found');
    expect(await storedLeaves(owner.tenantId)).toEqual(before);
  });

  test('When the token has read:hr only, then it answers 403 and changes nothing', async () => {
    const caller = await newCaller();
    const leave = await requestLeave(caller);
    const before = await storedLeaves(caller.tenantId);
    const reader = `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'read:hr' })}`;
    expectProblem(await patch(reader, leave.id, { status: 'approved' }), 403, 'insufficient-scope');
    expect(await storedLeaves(caller.tenantId)).toEqual(before);
  });

  test('When a requested leave is approved and rejected concurrently, then exactly one move wins and the other is judged against it', async () => {
    const caller = await newCaller();
    const leave = await requestLeave(caller);

    const [approve, reject] = await Promise.all([
      patch(caller.auth, leave.id, { status: 'approved' }),
      patch(caller.auth, leave.id, { status: 'rejected' }),
    ]);

    const statuses = [approve.status, reject.status].sort();
    expect(statuses).toEqual([200, 422]);
    const winner = approve.status === 200 ? 'approved' : 'rejected';
    expect((await storedLeaves(caller.tenantId))[0]!.status).toBe(winner);
    const loser = approve.status === 200 ? reject : approve;
    expect(loser.body).toMatchObject({ current_status: winner, allowed_transitions: ALLOWED[winner] });
  });

  test('When a cancelled leave frees its days, then the same days can be requested again', async () => {
    const caller = await newCaller();
    const leave = await leaveIn(caller, 'approved');
    expectProblem(await post(caller.auth, leaveInput(caller)), 409, 'conflict');
    expect((await patch(caller.auth, leave.id, { status: 'cancelled' })).status).toBe(200);
    expect((await post(caller.auth, leaveInput(caller))).status).toBe(201);
  });
});

describe('GET /leaves/:id', () => {
  test('When the caller asks for its leave, then it answers 200 with it', async () => {
    const caller = await newCaller();
    const leave = await requestLeave(caller, { note: 'Ärztlicher Termin' });
    const reader = `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'read:hr' })}`;
    const response = await request(hr.app).get(`${LEAVES}/${leave.id}`).set('Authorization', reader);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(leave);
  });

  test('When the leave belongs to another tenant, is unknown or the id is no UUID, then it answers 404', async () => {
    const owner = await newCaller();
    const leave = await requestLeave(owner);
    const stranger = await newCaller();
    for (const id of [leave.id, randomUUID(), 'nope']) {
      expectProblem(await request(hr.app).get(`${LEAVES}/${id}`).set('Authorization', stranger.auth), 404, 'not-found');
    }
  });

  test('When the token lacks read:hr, then it answers 403', async () => {
    const caller = await newCaller();
    const leave = await requestLeave(caller);
    const writer = `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'write:hr' })}`;
    expectProblem(
      await request(hr.app).get(`${LEAVES}/${leave.id}`).set('Authorization', writer),
      403,
      'insufficient-scope',
    );
  });
});

describe('GET /leaves', () => {
  const list = (auth: string, query = '') => request(hr.app).get(`${LEAVES}${query}`).set('Authorization', auth);
  const ids = (response: request.Response) => response.body.data.map((l: LeaveJson) => l.id);

  /** Four leaves of two users in one tenant, in known states. */
  async function someLeaves() {
    const caller = await newCaller();
    const colleague = { ...caller, userId: await addEmployee(caller.tenantId) };
    const september = await requestLeave(caller, { type: 'sick', start_date: '2026-09-28', end_date: '2026-10-02' });
    const october = await leaveIn(caller, 'approved');
    const november = await requestLeave(caller, { type: 'unpaid', start_date: '2026-11-16', end_date: '2026-11-20' });
    const colleagues = await requestLeave(colleague, {
      type: 'vacation',
      start_date: '2026-10-12',
      end_date: '2026-10-16',
    });
    expect((await patch(caller.auth, colleagues.id, { status: 'rejected' })).status).toBe(200);
    await requestLeave(await newCaller()); // another tenant's
    return { caller, colleague, september, october, november, colleagues };
  }

  test('When the tenant has leaves, then it lists only its own, latest start first', async () => {
    const { caller, september, october, november, colleagues } = await someLeaves();

    const response = await list(caller.auth);

    expect(response.status).toBe(200);
    expect(ids(response)).toEqual([november.id, october.id, colleagues.id, september.id]);
    expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total: 4, total_pages: 1 });
    expect(response.body.data[1]).toEqual(october);
  });

  test('When filtered by user_id, status, type, from and to, then only the matching leaves are listed', async () => {
    const { caller, colleague, september, october, november, colleagues } = await someLeaves();

    expect(ids(await list(caller.auth, `?user_id=${colleague.userId}`))).toEqual([colleagues.id]);
    expect(ids(await list(caller.auth, '?status=requested'))).toEqual([november.id, september.id]);
    expect(ids(await list(caller.auth, '?status=approved'))).toEqual([october.id]);
    expect(ids(await list(caller.auth, '?type=sick'))).toEqual([september.id]);
    // from/to select the leaves touching the range: the September leave ends on 2 October.
    expect(ids(await list(caller.auth, '?from=2026-10-01&to=2026-10-31'))).toEqual([
      october.id,
      colleagues.id,
      september.id,
    ]);
    expect(ids(await list(caller.auth, '?from=2026-10-03&to=2026-10-28'))).toEqual([colleagues.id]);
    expect(ids(await list(caller.auth, '?from=2026-11-03'))).toEqual([november.id, october.id]);
    expect(ids(await list(caller.auth, '?to=2026-09-28'))).toEqual([september.id]);
    expect(
      ids(await list(caller.auth, `?user_id=${caller.userId}&status=requested&type=unpaid&from=2026-11-01`)),
    ).toEqual([november.id]);
  });

  test('When the list spans pages, then each page carries its slice, pagination and Link header', async () => {
    const { caller, september, october, colleagues } = await someLeaves();

    const response = await list(caller.auth, '?page=2&per_page=2');

    expect(response.status).toBe(200);
    expect(ids(response)).toEqual([colleagues.id, september.id]);
    expect(ids(response)).not.toContain(october.id);
    expect(response.body.pagination).toEqual({ page: 2, per_page: 2, total: 4, total_pages: 2 });
    const link = response.headers.link as string;
    expect(link).toMatch(/[?&]page=1[^>]*>; rel="first"/);
    expect(link).toMatch(/[?&]page=1[^>]*>; rel="prev"/);
    expect(link).not.toContain('rel="next"');
    expect(link).toMatch(/[?&]page=2[^>]*>; rel="last"/);
  });

  test.each([
    ['status', '?status=pending', 'status', 'must be one of: requested, approved, rejected, cancelled'],
    ['type', '?type=holiday', 'type', 'must be one of: vacation, sick, unpaid, parental, special'],
    ['from', '?from=2026-02-30', 'from', 'must be a valid date (YYYY-MM-DD)'],
    ['to before from', '?from=2026-10-02&to=2026-10-01', 'to', 'must not be before from'],
    ['page', '?page=0', 'page', 'must be >= 1'],
  ])('When the query has a bad %s, then it answers 400 naming it', async (_case, query, field, message) => {
    const caller = await newCaller();
    const response = await list(caller.auth, query);
    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual([{ field, message }]);
  });

  test('When the token lacks read:hr, then it answers 403', async () => {
    const caller = await newCaller('write:hr');
    expectProblem(await list(caller.auth), 403, 'insufficient-scope');
  });
});
