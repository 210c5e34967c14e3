import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { addEmployee as addEmployeeTo, expectProblem, newCallerWithEmployee } from './support/callers';
import { startHr, type TestHr } from './support/hr';
import { employeeWith, fullTime, type TestEmployee } from './support/employees';
import { YEARS_PATTERN } from '../src/day.schemas';

const TIMESHEETS = '/api/v1/timesheets';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

const newCaller = (scope?: string) => newCallerWithEmployee(hr, scope);
const addEmployee = (tenantId: string) => addEmployeeTo(hr, tenantId);

type Entry = { start: string; end: string; category: string };
type TimesheetJson = {
  id: string;
  user_id: string;
  date: string;
  entries: (Entry & { minutes: number })[];
  worked_minutes: number;
  break_minutes: number;
  warnings: { code: string; message: string }[];
  created_at: string;
  updated_at: string;
};

const DAY: Entry[] = [
  { start: '08:00', end: '12:00', category: 'normal' },
  { start: '12:30', end: '16:30', category: 'normal' },
];

const post = (auth: string, body: unknown) =>
  request(hr.app)
    .post(TIMESHEETS)
    .set('Authorization', auth)
    .send(body as object);

async function record(
  caller: { auth: string; userId: string },
  date: string,
  entries: Entry[] = DAY,
): Promise<TimesheetJson> {
  const response = await post(caller.auth, { user_id: caller.userId, date, entries });
  expect(response.status).toBe(201);
  return response.body;
}

/** What the database holds for the tenant: sheets with their entries, in a comparable shape. */
async function storedSheets(tenantId: string) {
  const rows = await hr.db.timesheet.findMany({
    where: { tenantId },
    include: { entries: { orderBy: { position: 'asc' } } },
    orderBy: { date: 'asc' },
  });
  return rows.map((row) => ({
    id: row.id,
    userId: row.userId,
    date: row.date.toISOString().slice(0, 10),
    workedMinutes: row.workedMinutes,
    breakMinutes: row.breakMinutes,
    warnings: row.warnings,
    updatedAt: row.updatedAt.toISOString(),
    entries: row.entries.map((e) => [e.position, e.startMinute, e.endMinute, e.minutes, e.category]),
  }));
}

describe('POST /timesheets', () => {
  test('When a valid day is recorded, then it answers 201 with Location and the sheet with its totals, and stores it', async () => {
    const caller = await newCaller();

    const response = await post(caller.auth, {
      user_id: caller.userId,
      date: '2026-10-29',
      // Sent out of order: stored and answered sorted by start.
      entries: [
        { start: '13:00', end: '17:00', category: 'overtime' },
        { start: '08:00', end: '12:30', category: 'normal' },
      ],
    });

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${TIMESHEETS}/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: caller.userId,
      date: '2026-10-29',
      entries: [
        { start: '08:00', end: '12:30', category: 'normal', minutes: 270 },
        { start: '13:00', end: '17:00', category: 'overtime', minutes: 240 },
      ],
      worked_minutes: 510,
      break_minutes: 30,
      warnings: [],
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(Math.abs(Date.parse(response.body.created_at) - Date.now())).toBeLessThan(60_000);
    expect(await storedSheets(caller.tenantId)).toEqual([
      {
        id: response.body.id,
        userId: caller.userId,
        date: '2026-10-29',
        workedMinutes: 510,
        breakMinutes: 30,
        warnings: [],
        updatedAt: response.body.updated_at,
        entries: [
          [0, 480, 750, 270, 'normal'],
          [1, 780, 1020, 240, 'overtime'],
        ],
      },
    ]);
  });

  test.each(['normal', 'overtime', 'on_call', 'travel', 'training'])(
    'When the category is %s, then it is accepted',
    async (category) => {
      const caller = await newCaller();
      const sheet = await record(caller, '2026-10-29', [{ start: '09:00', end: '10:00', category }]);
      expect(sheet.entries).toEqual([{ start: '09:00', end: '10:00', category, minutes: 60 }]);
    },
  );

  test('When an entry ends at 24:00, then it is accepted as the end of the day', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29', [{ start: '22:00', end: '24:00', category: 'on_call' }]);
    expect(sheet).toMatchObject({
      entries: [{ start: '22:00', end: '24:00', category: 'on_call', minutes: 120 }],
      worked_minutes: 120,
    });
    expect((await storedSheets(caller.tenantId))[0]!.entries).toEqual([[0, 1320, 1440, 120, 'on_call']]);
  });

  test('When a day runs from 00:00 to 23:59 in entries of at most 10 h, then boundary times are accepted', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29', [
      { start: '00:00', end: '01:00', category: 'on_call' },
      { start: '23:00', end: '23:59', category: 'on_call' },
    ]);
    expect(sheet).toMatchObject({ worked_minutes: 119, break_minutes: 1320, warnings: [] });
  });

  test.each(['2028-02-29', '1900-01-01', '2199-12-31'])(
    'When the day is %s, then it is a real day and stored as such',
    async (day) => {
      const caller = await newCaller();
      expect((await record(caller, day)).date).toBe(day);
      expect((await storedSheets(caller.tenantId))[0]!.date).toBe(day);
    },
  );

  test.each([
    ['an unknown field', { note: 'x' }, 'note', 'is not a known field'],
    ['a user_id that is not a UUID', { user_id: 'erika' }, 'user_id', 'must be a valid uuid'],
    ['a date that does not exist', { date: '2026-02-30' }, 'date', 'must be a valid date (YYYY-MM-DD)'],
    ['29 February of a common year', { date: '2026-02-29' }, 'date', 'must be a valid date (YYYY-MM-DD)'],
    ['a year before 1900', { date: '1899-12-31' }, 'date', `must match pattern "${YEARS_PATTERN}"`],
    ['a date in another format', { date: '29.10.2026' }, 'date', 'must be a valid date (YYYY-MM-DD)'],
    ['a date with a time', { date: '2026-10-29T08:00:00Z' }, 'date', 'must be a valid date (YYYY-MM-DD)'],
    ['no entries', { entries: [] }, 'entries', 'must NOT have fewer than 1 items'],
    ['entries that are not a list', { entries: { start: '08:00' } }, 'entries', 'must be of type array'],
    [
      'a start of 24:00',
      { entries: [{ start: '24:00', end: '24:00', category: 'normal' }] },
      'entries[0].start',
      'must be a valid time of day (HH:MM, 00:00–23:59)',
    ],
    [
      'a start of 25:00',
      { entries: [{ start: '25:00', end: '23:00', category: 'normal' }] },
      'entries[0].start',
      'must be a valid time of day (HH:MM, 00:00–23:59)',
    ],
    [
      'an end of 24:01',
      { entries: [{ start: '08:00', end: '24:01', category: 'normal' }] },
      'entries[0].end',
      'must be a valid time of day (HH:MM)',
    ],
    [
      'a time without a leading zero',
      { entries: [{ start: '8:00', end: '12:00', category: 'normal' }] },
      'entries[0].start',
      'must be a valid time of day (HH:MM, 00:00–23:59)',
    ],
    [
      'a time with seconds',
      { entries: [{ start: '08:00', end: '12:00:00', category: 'normal' }] },
      'entries[0].end',
      'must be a valid time of day (HH:MM)',
    ],
    [
      'minutes of 60',
      { entries: [{ start: '08:60', end: '12:00', category: 'normal' }] },
      'entries[0].start',
      'must be a valid time of day (HH:MM, 00:00–23:59)',
    ],
    [
      'an unknown category',
      { entries: [{ start: '08:00', end: '12:00', category: 'meeting' }] },
      'entries[0].category',
      'must be one of: normal, overtime, on_call, travel, training, standby',
    ],
    ['an entry without end', { entries: [{ start: '08:00', category: 'normal' }] }, 'entries[0].end', 'is required'],
    [
      'an entry with an unknown field',
      { entries: [{ start: '08:00', end: '09:00', category: 'normal', minutes: 60 }] },
      'entries[0].minutes',
      'is not a known field',
    ],
  ])(
    'When the body has %s, then it answers 400 naming the field and stores nothing',
    async (_case, overrides, field, message) => {
      const caller = await newCaller();
      const response = await post(caller.auth, {
        user_id: caller.userId,
        date: '2026-10-29',
        entries: DAY,
        ...overrides,
      });

      expectProblem(response, 400, 'validation-error');
      expect(response.body.errors).toEqual([{ field, message }]);
      expect(await storedSheets(caller.tenantId)).toEqual([]);
    },
  );

  test('When required fields are missing, then it answers 400 listing each of them', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, {});
    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual([
      { field: 'user_id', message: 'is required' },
      { field: 'date', message: 'is required' },
      { field: 'entries', message: 'is required' },
    ]);
  });

  test('When the body is malformed JSON, then it answers 400 and stores nothing', async () => {
    const caller = await newCaller();
    const response = await request(hr.app)
      .post(TIMESHEETS)
      .set('Authorization', caller.auth)
      .set('Content-Type', 'application/json')
      .send('{"date":');
    expectProblem(response, 400, 'malformed-body');
    expect(await storedSheets(caller.tenantId)).toEqual([]);
  });

  test('When the user_id is no employee of the tenant, then it answers 422 naming user_id and stores nothing', async () => {
    const caller = await newCaller();
    const otherTenantsUser = await addEmployee(randomUUID());

    for (const userId of [randomUUID(), otherTenantsUser]) {
      const response = await post(caller.auth, { user_id: userId, date: '2026-10-29', entries: DAY });
      expectProblem(response, 422, 'unprocessable');
      expect(response.body.errors).toEqual([
        { field: 'user_id', message: 'is not the user_id of an employee of your tenant' },
      ]);
    }
    expect(await storedSheets(caller.tenantId)).toEqual([]);
  });

  test.each([
    ['before', '12:00', '08:00'],
    ['equal to', '08:00', '08:00'],
  ])(
    'When an end is %s its start, then it answers 422 naming entries[i].end and stores nothing',
    async (_case, start, end) => {
      const caller = await newCaller();
      const response = await post(caller.auth, {
        user_id: caller.userId,
        date: '2026-10-29',
        entries: [
          { start: '06:00', end: '07:00', category: 'normal' },
          { start, end, category: 'normal' },
        ],
      });

      expectProblem(response, 422, 'unprocessable');
      expect(response.body.errors).toEqual([{ field: 'entries[1].end', message: `must be after start (${start})` }]);
      expect(response.body.detail).toBe(`entries[1].end must be after start (${start}).`);
      expect(await storedSheets(caller.tenantId)).toEqual([]);
    },
  );

  test('When two entries overlap, then it answers 422 naming both and stores nothing', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, {
      user_id: caller.userId,
      date: '2026-10-29',
      entries: [
        { start: '08:00', end: '12:00', category: 'normal' },
        { start: '13:00', end: '14:00', category: 'normal' },
        { start: '11:30', end: '12:30', category: 'travel' },
      ],
    });

    expectProblem(response, 422, 'unprocessable');
    expect(response.body.errors).toEqual([
      { field: 'entries[0]', message: 'overlaps entries[2] (11:30–12:30)' },
      { field: 'entries[2]', message: 'overlaps entries[0] (08:00–12:00)' },
    ]);
    expect(await storedSheets(caller.tenantId)).toEqual([]);
  });

  test('When an entry lies inside another or two are the same, then each pair is named', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, {
      user_id: caller.userId,
      date: '2026-10-29',
      entries: [
        { start: '08:00', end: '12:00', category: 'normal' },
        { start: '09:00', end: '10:00', category: 'training' },
      ],
    });
    expectProblem(response, 422, 'unprocessable');
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual(['entries[0]', 'entries[1]']);
  });

  test('When one entry ends exactly when the next starts, then they do not overlap', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29', [
      { start: '08:00', end: '10:00', category: 'normal' },
      { start: '10:00', end: '11:00', category: 'travel' },
    ]);
    expect(sheet).toMatchObject({ worked_minutes: 180, break_minutes: 0, warnings: [] });
  });

  test('When the day has exactly 600 minutes of work, then it is accepted', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29', [
      { start: '07:00', end: '12:00', category: 'normal' },
      { start: '12:45', end: '17:45', category: 'overtime' },
    ]);
    expect(sheet).toMatchObject({ worked_minutes: 600, break_minutes: 45, warnings: [] });
  });

  test('When the day has 601 minutes of work, then it answers 422 (§3 ArbZG) and stores nothing', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, {
      user_id: caller.userId,
      date: '2026-10-29',
      entries: [
        { start: '07:00', end: '12:00', category: 'normal' },
        { start: '12:45', end: '17:46', category: 'overtime' },
      ],
    });

    expectProblem(response, 422, 'unprocessable');
    expect(response.body.errors).toEqual([
      {
        field: 'entries',
        message: 'add up to 601 min (10 h 01) of work; at most 600 min (10 h) a day are allowed (§3 ArbZG)',
      },
    ]);
    expect(await storedSheets(caller.tenantId)).toEqual([]);
  });

  test('When several rules break at once, then the 422 lists every one of them', async () => {
    const caller = await newCaller();
    const response = await post(caller.auth, {
      user_id: randomUUID(),
      date: '2026-10-29',
      entries: [
        { start: '10:00', end: '09:00', category: 'normal' },
        { start: '11:00', end: '12:00', category: 'normal' },
        { start: '11:30', end: '12:30', category: 'normal' },
      ],
    });
    expectProblem(response, 422, 'unprocessable');
    expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'user_id',
      'entries[0].end',
      'entries[1]',
      'entries[2]',
    ]);
    expect(response.body.detail).toBe('The timesheet breaks 4 rules; see errors.');
  });

  test('When the user already has a sheet for the day, then it answers 409 naming the existing sheet and stores nothing', async () => {
    const caller = await newCaller();
    const first = await record(caller, '2026-10-29');
    const before = await storedSheets(caller.tenantId);

    const response = await post(caller.auth, {
      user_id: caller.userId,
      date: '2026-10-29',
      entries: [{ start: '18:00', end: '19:00', category: 'overtime' }],
    });

    expectProblem(response, 409, 'conflict');
    expect(response.body.detail).toContain(first.id);
    expect(response.body).toMatchObject({
      existing_id: first.id,
      existing_url: `${TIMESHEETS}/${first.id}`,
      errors: [{ field: 'date', message: 'already has a timesheet for this user' }],
    });
    expect(await storedSheets(caller.tenantId)).toEqual(before);
  });

  test('When another user or another day is recorded, then it is no conflict', async () => {
    const caller = await newCaller();
    const colleague = { ...caller, userId: await addEmployee(caller.tenantId) };
    await record(caller, '2026-10-29');
    await record(caller, '2026-10-30');
    await record(colleague, '2026-10-29');
    expect(await storedSheets(caller.tenantId)).toHaveLength(3);
  });

  test('When the same day is recorded by several concurrent requests, then exactly one answers 201 and the others 409 naming it', async () => {
    const caller = await newCaller();

    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(caller.auth, {
          user_id: caller.userId,
          date: '2026-11-02',
          entries: [{ start: `0${i}:00`, end: `0${i}:30`, category: 'normal' }],
        }),
      ),
    );

    const created = responses.filter((r) => r.status === 201);
    const conflicts = responses.filter((r) => r.status === 409);
    expect(created).toHaveLength(1);
    expect(conflicts).toHaveLength(7);
    for (const response of conflicts) expect(response.body.existing_id).toBe(created[0]!.body.id);
    const stored = await storedSheets(caller.tenantId);
    expect(stored).toHaveLength(1);
    // The stored entries are the winner's, nobody else's.
    const hour = Number(created[0]!.body.entries[0].start.slice(0, 2));
    expect(stored[0]).toMatchObject({
      id: created[0]!.body.id,
      entries: [[0, hour * 60, hour * 60 + 30, 30, 'normal']],
    });
  });

  test('When the token has read:hr only, then it answers 403 and stores nothing', async () => {
    const caller = await newCaller('read:hr');
    const response = await post(caller.auth, { user_id: caller.userId, date: '2026-10-29', entries: DAY });
    expectProblem(response, 403, 'insufficient-scope');
    expect(await storedSheets(caller.tenantId)).toEqual([]);
  });

  test('When there is no token, then it answers 401', async () => {
    const response = await request(hr.app)
      .post(TIMESHEETS)
      .send({ user_id: randomUUID(), date: '2026-10-29', entries: DAY });
    expect(response.status).toBe(401);
  });
});

describe('breaks (§4 ArbZG)', () => {
  const at = (minute: number) =>
    `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
  /** Work from 07:00 in two stretches with a gap of `gap` minutes between them. */
  const split = (workMinutes: number, gap: number): Entry[] => {
    const first = Math.floor(workMinutes / 2);
    const start = 7 * 60;
    return [
      { start: at(start), end: at(start + first), category: 'normal' },
      { start: at(start + first + gap), end: at(start + workMinutes + gap), category: 'normal' },
    ];
  };

  test.each([
    ['exactly 6 h without a break', [{ start: '08:00', end: '14:00', category: 'normal' }], 360, 0, null],
    [
      '6 h 01 with a 29-minute break',
      split(361, 29),
      361,
      29,
      'Over 6 h of work needs 30 min of break (§4 ArbZG, counting only breaks of at least 15 min); 29 min recorded, 1 min missing.',
    ],
    ['6 h 01 with a 30-minute break', split(361, 30), 361, 30, null],
    [
      '6 h 01 without any break',
      [{ start: '08:00', end: '14:01', category: 'normal' }],
      361,
      0,
      'Over 6 h of work needs 30 min of break (§4 ArbZG, counting only breaks of at least 15 min); 0 min recorded, 30 min missing.',
    ],
    [
      '8 h with three 14-minute gaps (none of them counts)',
      [
        { start: '07:00', end: '09:00', category: 'normal' },
        { start: '09:14', end: '11:14', category: 'normal' },
        { start: '11:28', end: '13:28', category: 'travel' },
        { start: '13:42', end: '15:42', category: 'normal' },
      ],
      480,
      0,
      'Over 6 h of work needs 30 min of break (§4 ArbZG, counting only breaks of at least 15 min); 0 min recorded, 30 min missing.',
    ],
    [
      '8 h with a 15-minute and a 14-minute gap (only the first counts)',
      [
        { start: '07:00', end: '10:00', category: 'normal' },
        { start: '10:15', end: '13:00', category: 'normal' },
        { start: '13:14', end: '15:29', category: 'normal' },
      ],
      480,
      15,
      'Over 6 h of work needs 30 min of break (§4 ArbZG, counting only breaks of at least 15 min); 15 min recorded, 15 min missing.',
    ],
    [
      '8 h with two 15-minute breaks',
      [
        { start: '07:00', end: '10:00', category: 'normal' },
        { start: '10:15', end: '13:00', category: 'normal' },
        { start: '13:15', end: '15:30', category: 'normal' },
      ],
      480,
      30,
      null,
    ],
    ['exactly 9 h with a 30-minute break', split(540, 30), 540, 30, null],
    [
      '9 h 01 with a 30-minute break',
      split(541, 30),
      541,
      30,
      'Over 9 h of work needs 45 min of break (§4 ArbZG, counting only breaks of at least 15 min); 30 min recorded, 15 min missing.',
    ],
    [
      '9 h 01 with a 44-minute break',
      split(541, 44),
      541,
      44,
      'Over 9 h of work needs 45 min of break (§4 ArbZG, counting only breaks of at least 15 min); 44 min recorded, 1 min missing.',
    ],
    ['9 h 01 with a 45-minute break', split(541, 45), 541, 45, null],
    [
      '10 h with 20 minutes of break',
      split(600, 20),
      600,
      20,
      'Over 9 h of work needs 45 min of break (§4 ArbZG, counting only breaks of at least 15 min); 20 min recorded, 25 min missing.',
    ],
  ])(
    'When the day has %s, then it is stored with the right break and warning',
    async (_case, entries, worked, breaks, warning) => {
      const caller = await newCaller();
      const response = await post(caller.auth, { user_id: caller.userId, date: '2026-10-29', entries });

      expect(response.status).toBe(201);
      const warnings = warning ? [{ code: 'break_too_short', message: warning }] : [];
      // The break sums only: the six hours in a row of §4 (work_block_too_long) have their own tests.
      const sums = (all: { code: string }[]) => all.filter((w) => w.code === 'break_too_short');
      expect(response.body).toMatchObject({ worked_minutes: worked, break_minutes: breaks });
      expect(sums(response.body.warnings)).toEqual(warnings);
      const [stored] = await storedSheets(caller.tenantId);
      expect(stored).toMatchObject({ workedMinutes: worked, breakMinutes: breaks });
      expect(sums(stored!.warnings as { code: string }[])).toEqual(warnings);
    },
  );
});

describe('GET /timesheets/:id', () => {
  test('When the caller asks for its sheet, then it answers 200 with it as it was created', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');
    const response = await request(hr.app).get(`${TIMESHEETS}/${sheet.id}`).set('Authorization', caller.auth);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(sheet);
  });

  test('When the token has only read:hr, then it may read', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');
    const reader = `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'read:hr' })}`;
    expect((await request(hr.app).get(`${TIMESHEETS}/${sheet.id}`).set('Authorization', reader)).status).toBe(200);
  });

  test('When the sheet belongs to another tenant, is unknown or the id is no UUID, then it answers 404', async () => {
    const owner = await newCaller();
    const sheet = await record(owner, '2026-10-29');
    const stranger = await newCaller();
    for (const id of [sheet.id, randomUUID(), 'nope']) {
      expectProblem(
        await request(hr.app).get(`${TIMESHEETS}/${id}`).set('Authorization', stranger.auth),
        404,
        'not-found',
      );
    }
  });

  test('When the token lacks read:hr, then it answers 403', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');
    const writer = `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'write:hr' })}`;
    expectProblem(
      await request(hr.app).get(`${TIMESHEETS}/${sheet.id}`).set('Authorization', writer),
      403,
      'insufficient-scope',
    );
  });
});

describe('PATCH /timesheets/:id', () => {
  const patch = (auth: string, id: string, body: unknown) =>
    request(hr.app)
      .patch(`${TIMESHEETS}/${id}`)
      .set('Authorization', auth)
      .send(body as object);

  test('When the entries are replaced, then it answers 200 with the new entries and totals, stored, and a later updated_at', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');

    const response = await patch(caller.auth, sheet.id, {
      entries: [
        { start: '08:00', end: '12:00', category: 'normal' },
        { start: '12:10', end: '15:10', category: 'travel' },
      ],
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...sheet,
      entries: [
        { start: '08:00', end: '12:00', category: 'normal', minutes: 240 },
        { start: '12:10', end: '15:10', category: 'travel', minutes: 180 },
      ],
      worked_minutes: 420,
      break_minutes: 0,
      warnings: [
        {
          code: 'break_too_short',
          message:
            'Over 6 h of work needs 30 min of break (§4 ArbZG, counting only breaks of at least 15 min); 0 min recorded, 30 min missing.',
        },
        {
          code: 'work_block_too_long',
          message:
            '7 h 10 of work in a row without a break of at least 15 min (08:00–15:10); §4 ArbZG allows at most 6 h in a row.',
        },
      ],
      updated_at: expect.any(String),
    });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(sheet.updated_at));
    const [stored] = await storedSheets(caller.tenantId);
    expect(stored).toMatchObject({
      workedMinutes: 420,
      breakMinutes: 0,
      updatedAt: response.body.updated_at,
      entries: [
        [0, 480, 720, 240, 'normal'],
        [1, 730, 910, 180, 'travel'],
      ],
    });
    expect((await request(hr.app).get(`${TIMESHEETS}/${sheet.id}`).set('Authorization', caller.auth)).body).toEqual(
      response.body,
    );
  });

  test.each([
    ['an end before its start', [{ start: '12:00', end: '08:00', category: 'normal' }], 'entries[0].end'],
    [
      'overlapping entries',
      [
        { start: '08:00', end: '12:00', category: 'normal' },
        { start: '11:00', end: '13:00', category: 'normal' },
      ],
      'entries[0]',
    ],
    ['more than 10 h', [{ start: '06:00', end: '16:01', category: 'normal' }], 'entries'],
  ])(
    'When the new entries have %s, then it answers 422 as for a new sheet and changes nothing',
    async (_case, entries, field) => {
      const caller = await newCaller();
      const sheet = await record(caller, '2026-10-29');
      const before = await storedSheets(caller.tenantId);

      const response = await patch(caller.auth, sheet.id, { entries });

      expectProblem(response, 422, 'unprocessable');
      expect(response.body.errors[0].field).toBe(field);
      expect(await storedSheets(caller.tenantId)).toEqual(before);
    },
  );

  test.each([
    ['an unknown field', { note: 'x', entries: DAY }, 'note', 'is not a known field'],
    ['a date that does not exist', { date: '2026-02-30', entries: DAY }, 'date', 'must be a valid date (YYYY-MM-DD)'],
    ['no entries', { entries: [] }, 'entries', 'must NOT have fewer than 1 items'],
    ['nothing', {}, 'entries', 'is required'],
    [
      'a start of 24:00',
      { entries: [{ start: '24:00', end: '24:00', category: 'normal' }] },
      'entries[0].start',
      'must be a valid time of day (HH:MM, 00:00–23:59)',
    ],
  ])('When the body sends %s, then it answers 400 and changes nothing', async (_case, body, field, message) => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');
    const before = await storedSheets(caller.tenantId);

    const response = await patch(caller.auth, sheet.id, body);

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual([{ field, message }]);
    expect(await storedSheets(caller.tenantId)).toEqual(before);
  });

  test('When user_id and date are sent back unchanged (user_id in capitals), then the entries are replaced', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');
    const entries = [{ start: '09:00', end: '10:00', category: 'training' }];

    const response = await patch(caller.auth, sheet.id, {
      user_id: caller.userId.toUpperCase(),
      date: '2026-10-29',
      entries,
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      user_id: caller.userId,
      date: '2026-10-29',
      entries: [{ ...entries[0], minutes: 60 }],
      worked_minutes: 60,
    });
  });

  test('When user_id or date would change, then it answers 422 naming them and changes nothing', async () => {
    const caller = await newCaller();
    const colleague = await addEmployee(caller.tenantId);
    const sheet = await record(caller, '2026-10-29');
    const before = await storedSheets(caller.tenantId);

    const response = await patch(caller.auth, sheet.id, { user_id: colleague, date: '2026-10-30', entries: DAY });

    expectProblem(response, 422, 'unprocessable');
    expect(response.body.errors).toEqual([
      {
        field: 'user_id',
        message: `cannot change (the sheet is ${caller.userId}'s); delete it and record the other user's day`,
      },
      { field: 'date', message: 'cannot change (the sheet is for 2026-10-29); delete it and record the other day' },
    ]);
    expect(await storedSheets(caller.tenantId)).toEqual(before);
  });

  test('When the sheet belongs to another tenant or is unknown, then it answers 404 and changes nothing', async () => {
    const owner = await newCaller();
    const sheet = await record(owner, '2026-10-29');
    const before = await storedSheets(owner.tenantId);
    const stranger = await newCaller();
    for (const id of [sheet.id, randomUUID()])
      expectProblem(await patch(stranger.auth, id, { entries: DAY }), 404, 'not-found');
    expect(await storedSheets(owner.tenantId)).toEqual(before);
  });

  test('When the token has read:hr only, then it answers 403 and changes nothing', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');
    const before = await storedSheets(caller.tenantId);
    const reader = `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'read:hr' })}`;
    expectProblem(
      await patch(reader, sheet.id, { entries: [{ start: '09:00', end: '10:00', category: 'normal' }] }),
      403,
      'insufficient-scope',
    );
    expect(await storedSheets(caller.tenantId)).toEqual(before);
  });

  test('When one sheet is replaced by concurrent requests, then one of them wins whole (no mixed entries)', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');
    const versions = Array.from({ length: 5 }, (_, i) => [
      { start: `0${i}:00`, end: `0${i}:20`, category: 'normal' },
      { start: `1${i}:00`, end: `1${i}:40`, category: 'travel' },
    ]);

    const responses = await Promise.all(versions.map((entries) => patch(caller.auth, sheet.id, { entries })));

    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const final = (await request(hr.app).get(`${TIMESHEETS}/${sheet.id}`).set('Authorization', caller.auth)).body;
    expect(versions.map((entries) => entries.map((e) => `${e.start}-${e.end}`))).toContainEqual(
      final.entries.map((e: Entry) => `${e.start}-${e.end}`),
    );
    expect(await hr.db.timesheetEntry.count({ where: { timesheetId: sheet.id } })).toBe(2);
  });
});

describe('DELETE /timesheets/:id', () => {
  test('When the sheet is deleted, then it answers 204, it and its entries are gone, and the day can be recorded again', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');

    const response = await request(hr.app).delete(`${TIMESHEETS}/${sheet.id}`).set('Authorization', caller.auth);

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(await storedSheets(caller.tenantId)).toEqual([]);
    expect(await hr.db.timesheetEntry.count({ where: { timesheetId: sheet.id } })).toBe(0);
    expectProblem(
      await request(hr.app).get(`${TIMESHEETS}/${sheet.id}`).set('Authorization', caller.auth),
      404,
      'not-found',
    );
    await record(caller, '2026-10-29');
  });

  test('When the sheet belongs to another tenant, then it answers 404 and deletes nothing; a second delete is 404 too', async () => {
    const owner = await newCaller();
    const sheet = await record(owner, '2026-10-29');
    const stranger = await newCaller();
    expectProblem(
      await request(hr.app).delete(`${TIMESHEETS}/${sheet.id}`).set('Authorization', stranger.auth),
      404,
      'not-found',
    );
    expect(await storedSheets(owner.tenantId)).toHaveLength(1);

    expect((await request(hr.app).delete(`${TIMESHEETS}/${sheet.id}`).set('Authorization', owner.auth)).status).toBe(
      204,
    );
    expectProblem(
      await request(hr.app).delete(`${TIMESHEETS}/${sheet.id}`).set('Authorization', owner.auth),
      404,
      'not-found',
    );
  });

  test('When the token has read:hr only, then it answers 403 and deletes nothing', async () => {
    const caller = await newCaller();
    const sheet = await record(caller, '2026-10-29');
    const reader = `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'read:hr' })}`;
    expectProblem(
      await request(hr.app).delete(`${TIMESHEETS}/${sheet.id}`).set('Authorization', reader),
      403,
      'insufficient-scope',
    );
    expect(await storedSheets(caller.tenantId)).toHaveLength(1);
  });
});

describe('GET /timesheets', () => {
  const list = (auth: string, query = '') => request(hr.app).get(`${TIMESHEETS}${query}`).set('Authorization', auth);

  test('When the tenant has sheets, then it lists only its own, newest day first', async () => {
    const caller = await newCaller();
    const colleague = { ...caller, userId: await addEmployee(caller.tenantId) };
    const oct28 = await record(caller, '2026-10-28');
    const oct30 = await record(caller, '2026-10-30');
    const oct29 = await record(colleague, '2026-10-29');
    await record(await newCaller(), '2026-10-31'); // another tenant's

    const response = await list(caller.auth);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [oct30, oct29, oct28],
      pagination: { page: 1, per_page: 25, total: 3, total_pages: 1 },
    });
  });

  test('When filtered by user_id, from and to, then only the matching sheets are listed (both ends included)', async () => {
    const caller = await newCaller();
    const colleague = { ...caller, userId: await addEmployee(caller.tenantId) };
    const days = ['2026-09-30', '2026-10-01', '2026-10-15', '2026-10-31', '2026-11-01'];
    const sheets = [];
    for (const day of days) sheets.push(await record(caller, day));
    await record(colleague, '2026-10-15');

    const response = await list(caller.auth, `?user_id=${caller.userId}&from=2026-10-01&to=2026-10-31`);

    expect(response.status).toBe(200);
    expect(response.body.data.map((s: TimesheetJson) => s.date)).toEqual(['2026-10-31', '2026-10-15', '2026-10-01']);
    expect(response.body.pagination.total).toBe(3);
    expect((await list(caller.auth, '?from=2026-10-31')).body.data.map((s: TimesheetJson) => s.date)).toEqual([
      '2026-11-01',
      '2026-10-31',
    ]);
    expect((await list(caller.auth, '?to=2026-10-01')).body.data.map((s: TimesheetJson) => s.date)).toEqual([
      '2026-10-01',
      '2026-09-30',
    ]);
    expect(
      (await list(caller.auth, `?user_id=${colleague.userId}`)).body.data.map((s: TimesheetJson) => s.user_id),
    ).toEqual([colleague.userId]);
  });

  test('When the list spans pages, then each page carries its slice, pagination and Link header', async () => {
    const caller = await newCaller();
    for (const day of ['2026-10-01', '2026-10-02', '2026-10-03', '2026-10-04', '2026-10-05']) await record(caller, day);

    const response = await list(caller.auth, '?page=2&per_page=2');

    expect(response.status).toBe(200);
    expect(response.body.data.map((s: TimesheetJson) => s.date)).toEqual(['2026-10-03', '2026-10-02']);
    expect(response.body.pagination).toEqual({ page: 2, per_page: 2, total: 5, total_pages: 3 });
    const link = response.headers.link as string;
    expect(link).toMatch(/[?&]page=1[^>]*>; rel="first"/);
    expect(link).toMatch(/[?&]page=1[^>]*>; rel="prev"/);
    expect(link).toMatch(/[?&]page=3[^>]*>; rel="next"/);
    expect(link).toMatch(/[?&]page=3[^>]*>; rel="last"/);
  });

  test.each([
    ['from', '?from=2026-02-30', 'from', 'must be a valid date (YYYY-MM-DD)'],
    ['from before 1900', '?from=1899-12-31', 'from', `must match pattern "${YEARS_PATTERN}"`],
    ['to', '?to=yesterday', 'to', 'must be a valid date (YYYY-MM-DD)'],
    ['user_id', '?user_id=erika', 'user_id', 'must be a valid uuid'],
    ['to before from', '?from=2026-10-02&to=2026-10-01', 'to', 'must not be before from'],
    ['per_page', '?per_page=101', 'per_page', 'must be <= 100'],
    ['an unknown parameter', '?date=2026-10-01', 'date', 'is not a known field'],
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

describe('ArbZG beyond §3 and the §4 break sums', () => {
  const patch = (auth: string, id: string, body: unknown) =>
    request(hr.app)
      .patch(`${TIMESHEETS}/${id}`)
      .set('Authorization', auth)
      .send(body as object);
  const show = async (auth: string, id: string): Promise<TimesheetJson> =>
    (await request(hr.app).get(`${TIMESHEETS}/${id}`).set('Authorization', auth)).body;
  const codes = (sheet: { warnings: { code: string }[] }) => sheet.warnings.map((w) => w.code);
  const warningOf = (sheet: TimesheetJson, code: string) => sheet.warnings.find((w) => w.code === code);

  describe('§4: no more than 6 h of work in a row without a break of at least 15 minutes', () => {
    test.each([
      ['06:00–12:01 (one minute over 6 h)', [{ start: '06:00', end: '12:01', category: 'normal' }], true],
      ['06:00–12:00 (exactly 6 h)', [{ start: '06:00', end: '12:00', category: 'normal' }], false],
      [
        '06:00–09:00 and 09:15–12:01 (a 15-minute gap is a break and starts a new block)',
        [
          { start: '06:00', end: '09:00', category: 'normal' },
          { start: '09:15', end: '12:01', category: 'normal' },
        ],
        false,
      ],
      [
        '06:00–09:00 and 09:14–12:01 (a 14-minute gap is no break: one block of 6 h 01)',
        [
          { start: '06:00', end: '09:00', category: 'overtime' },
          { start: '09:14', end: '12:01', category: 'travel' },
        ],
        true,
      ],
      [
        '06:00–12:00 of work and 12:00–18:00 of standby (standby is not working time)',
        [
          { start: '06:00', end: '12:00', category: 'normal' },
          { start: '12:00', end: '18:00', category: 'standby' },
        ],
        false,
      ],
      [
        '06:00–12:01 of on_call (on-call duty is working time)',
        [{ start: '06:00', end: '12:01', category: 'on_call' }],
        true,
      ],
    ])(
      'When a day has %s, then work_block_too_long is given accordingly, answered and stored',
      async (_case, entries, expected) => {
        const caller = await newCaller();
        const sheet = await record(caller, '2026-10-29', entries);

        expect(codes(sheet).includes('work_block_too_long')).toBe(expected);
        if (expected) {
          expect(warningOf(sheet, 'work_block_too_long')).toEqual({
            code: 'work_block_too_long',
            message: expect.stringMatching(
              /^6 h 01 of work in a row without a break of at least 15 min \(06:00–12:01\); §4 ArbZG allows at most 6 h in a row\.$/,
            ),
          });
        }
        const [stored] = await storedSheets(caller.tenantId);
        expect(stored!.warnings).toEqual(sheet.warnings);
      },
    );

    test.each([
      ['the evening first', 'previous'],
      ['the morning first', 'next'],
    ])(
      'When 23:00–24:00 is followed by 00:00–05:30 the next day (%s), then both days hold one block of 6.5 h and name each other',
      async (_case, first) => {
        const caller = await newCaller();
        const evening = [{ start: '23:00', end: '24:00', category: 'normal' }];
        const morning = [{ start: '00:00', end: '05:30', category: 'normal' }];
        const [a, b] =
          first === 'previous'
            ? [await record(caller, '2026-10-29', evening), await record(caller, '2026-10-30', morning)]
            : await (async () => {
                const m = await record(caller, '2026-10-30', morning);
                return [await record(caller, '2026-10-29', evening), m];
              })();
        const message =
          '6 h 30 of work in a row without a break of at least 15 min (2026-10-29 23:00 – 2026-10-30 05:30); §4 ArbZG allows at most 6 h in a row.';

        const day1 = await show(caller.auth, a!.id);
        const day2 = await show(caller.auth, b!.id);

        // One shift over midnight: no rest between the days, so no §5 warning either.
        expect(day1.warnings).toEqual([{ code: 'work_block_too_long', message, other_date: '2026-10-30' }]);
        expect(day2.warnings).toEqual([{ code: 'work_block_too_long', message, other_date: '2026-10-29' }]);
        expect((await storedSheets(caller.tenantId)).map((s) => s.warnings)).toEqual([day1.warnings, day2.warnings]);
      },
    );

    test('When the morning after 23:00–24:00 starts at 00:15, then the 15 minutes are a break and neither day has a block too long', async () => {
      const caller = await newCaller();
      const day1 = await record(caller, '2026-10-29', [{ start: '23:00', end: '24:00', category: 'normal' }]);
      const day2 = await record(caller, '2026-10-30', [{ start: '00:15', end: '05:45', category: 'normal' }]);

      expect(codes(day2)).toEqual(['rest_period_too_short']);
      expect(codes(await show(caller.auth, day1.id))).toEqual(['rest_period_too_short']);
    });
  });

  describe("§5: at least 11 hours of rest between one day's work and the next", () => {
    test.each([
      ['the late day first', 'previous'],
      ['the early day first', 'next'],
    ])(
      'When 22:00–24:00 is followed by 08:00 the next day (%s), then both sheets hold rest_period_too_short naming the other day',
      async (_case, first) => {
        const caller = await newCaller();
        const late = [{ start: '22:00', end: '24:00', category: 'normal' }];
        const early = [{ start: '08:00', end: '12:00', category: 'normal' }];
        let day1: TimesheetJson;
        let day2: TimesheetJson;
        if (first === 'previous') {
          day1 = await record(caller, '2026-10-29', late);
          day2 = await record(caller, '2026-10-30', early);
        } else {
          day2 = await record(caller, '2026-10-30', early);
          day1 = await record(caller, '2026-10-29', late);
        }
        const message =
          'Only 8 h of rest between the end of work on 2026-10-29 (24:00) and its start on 2026-10-30 (08:00); §5 ArbZG requires at least 11 h.';
        const expected1 = [{ code: 'rest_period_too_short', message, other_date: '2026-10-30' }];
        const expected2 = [{ code: 'rest_period_too_short', message, other_date: '2026-10-29' }];

        // The sheet written second answers with it at once; the first one's stored warnings were updated.
        expect((first === 'previous' ? day2 : day1).warnings).toEqual(first === 'previous' ? expected2 : expected1);
        expect((await show(caller.auth, day1.id)).warnings).toEqual(expected1);
        expect((await show(caller.auth, day2.id)).warnings).toEqual(expected2);
        expect((await storedSheets(caller.tenantId)).map((s) => s.warnings)).toEqual([expected1, expected2]);
        const listed = (
          await request(hr.app).get(`${TIMESHEETS}?user_id=${caller.userId}`).set('Authorization', caller.auth)
        ).body.data as TimesheetJson[];
        expect(listed.map((s) => [s.date, s.warnings])).toEqual([
          ['2026-10-30', expected2],
          ['2026-10-29', expected1],
        ]);
      },
    );

    test.each([
      ['10:59 (10 h 59 of rest)', '10:59', true],
      ['11:00 (exactly 11 h of rest)', '11:00', false],
    ])(
      'When work ending at 24:00 is followed by work at %s the next day, then rest_period_too_short is given accordingly',
      async (_case, start, expected) => {
        const caller = await newCaller();
        await record(caller, '2026-10-29', [{ start: '20:00', end: '24:00', category: 'normal' }]);
        const next = await record(caller, '2026-10-30', [{ start, end: '15:00', category: 'normal' }]);

        expect(codes(next).includes('rest_period_too_short')).toBe(expected);
      },
    );

    test(
      "When the next day is changed to start later, or deleted, then the other day's " +
        'warning goes too, and each change is a timesheet.updated event',
      async () => {
        const caller = await newCaller();
        const day1 = await record(caller, '2026-10-29', [{ start: '20:00', end: '23:00', category: 'normal' }]);
        const day2 = await record(caller, '2026-10-30', [{ start: '07:00', end: '12:00', category: 'normal' }]);
        expect(codes(await show(caller.auth, day1.id))).toEqual(['rest_period_too_short']);

        const moved = await patch(caller.auth, day2.id, {
          entries: [{ start: '10:00', end: '15:00', category: 'normal' }],
        });
        expect(moved.status).toBe(200);
        expect(moved.body.warnings).toEqual([]);
        const unwarned = await show(caller.auth, day1.id);
        expect(unwarned.warnings).toEqual([]);
        // Its entries did not change: neither does updated_at.
        expect(unwarned.updated_at).toBe(day1.updated_at);

        await patch(caller.auth, day2.id, { entries: [{ start: '07:00', end: '12:00', category: 'normal' }] });
        expect(codes(await show(caller.auth, day1.id))).toEqual(['rest_period_too_short']);
        expect(
          (await request(hr.app).delete(`${TIMESHEETS}/${day2.id}`).set('Authorization', caller.auth)).status,
        ).toBe(204);
        expect((await show(caller.auth, day1.id)).warnings).toEqual([]);

        const events = await hr.db.outboxEvent.findMany({
          where: { tenantId: caller.tenantId },
          orderBy: { seq: 'asc' },
        });
        expect(events.map((e) => [e.type, e.resourceId])).toEqual([
          ['timesheet.created', day1.id],
          ['timesheet.created', day2.id],
          ['timesheet.updated', day1.id], // the warning arrives with day 2
          ['timesheet.updated', day2.id],
          ['timesheet.updated', day1.id], // gone with the later start
          ['timesheet.updated', day2.id],
          ['timesheet.updated', day1.id], // back with the early start
          ['timesheet.deleted', day2.id],
          ['timesheet.updated', day1.id], // gone with day 2
        ]);
        expect((events[2]!.data as { changes: unknown }).changes).toEqual({
          warnings: {
            from: [],
            to: [expect.objectContaining({ code: 'rest_period_too_short', other_date: '2026-10-30' })],
          },
        });
      },
    );

    test('When another user works the next morning, then the rest of this user is not judged against it', async () => {
      const caller = await newCaller();
      const other = await addEmployee(caller.tenantId);
      await record(caller, '2026-10-29', [{ start: '22:00', end: '24:00', category: 'normal' }]);
      const theirs = await record({ auth: caller.auth, userId: other }, '2026-10-30', [
        { start: '06:00', end: '10:00', category: 'normal' },
      ]);

      expect(theirs.warnings).toEqual([]);
    });
  });

  describe('standby (Rufbereitschaft): paid, not working time', () => {
    test('When a day has 10 h of work and 5 h of standby, then it is recorded (§3 counts work only) with 600 worked minutes and no warning', async () => {
      const caller = await newCaller();
      const sheet = await record(caller, '2026-10-29', [
        { start: '07:00', end: '12:00', category: 'normal' },
        { start: '12:45', end: '17:45', category: 'normal' },
        { start: '17:45', end: '22:45', category: 'standby' },
      ]);

      expect(sheet).toMatchObject({ worked_minutes: 600, break_minutes: 45, warnings: [] });
      expect(sheet.entries[2]).toEqual({ start: '17:45', end: '22:45', category: 'standby', minutes: 300 });
      const [stored] = await storedSheets(caller.tenantId);
      expect(stored).toMatchObject({
        workedMinutes: 600,
        entries: expect.arrayContaining([[2, 1065, 1365, 300, 'standby']]),
      });
    });

    test('When 10 h 01 of work are recorded with standby beside them, then §3 still refuses them', async () => {
      const caller = await newCaller();
      const response = await post(caller.auth, {
        user_id: caller.userId,
        date: '2026-10-29',
        entries: [
          { start: '06:00', end: '16:01', category: 'normal' },
          { start: '16:01', end: '18:00', category: 'standby' },
        ],
      });

      expectProblem(response, 422, 'unprocessable');
      expect(response.body.errors).toEqual([{ field: 'entries', message: expect.stringContaining('601 min') }]);
    });

    test(
      'When standby runs 22:00–24:00 and work starts at 06:00 the next day, then there is ' +
        'no §5 warning (standby is rest), nor a block over midnight',
      async () => {
        const caller = await newCaller();
        const day1 = await record(caller, '2026-10-29', [
          { start: '14:00', end: '19:00', category: 'normal' },
          { start: '19:00', end: '24:00', category: 'standby' },
        ]);
        const day2 = await record(caller, '2026-10-30', [
          { start: '00:00', end: '06:00', category: 'standby' },
          { start: '06:00', end: '12:00', category: 'normal' },
        ]);

        expect(day2.warnings).toEqual([]);
        expect(day2.worked_minutes).toBe(360);
        expect((await show(caller.auth, day1.id)).warnings).toEqual([]);
      },
    );
  });

  describe('§9–§10: Sundays', () => {
    test('When work is recorded on a Sunday, then the sheet is stored with sunday_work (a warning: §10 allows exceptions)', async () => {
      const caller = await newCaller();
      const sheet = await record(caller, '2026-11-01', [{ start: '10:00', end: '14:00', category: 'normal' }]);

      expect(sheet.warnings).toEqual([
        {
          code: 'sunday_work',
          message:
            '2026-11-01 is a Sunday: work on Sundays is allowed only under the exceptions of §10 ArbZG (§9 ArbZG).',
        },
      ]);
      expect((await storedSheets(caller.tenantId))[0]!.warnings).toEqual(sheet.warnings);
    });

    test.each([
      ['a Saturday', '2026-10-31', [{ start: '10:00', end: '14:00', category: 'normal' }]],
      ['a Sunday with standby only', '2026-11-01', [{ start: '10:00', end: '14:00', category: 'standby' }]],
    ])('When the day is %s, then there is no sunday_work', async (_case, date, entries) => {
      const caller = await newCaller();
      expect((await record(caller, date, entries)).warnings).toEqual([]);
    });
  });

  describe('§9–§10: public holidays of the state of the contract valid that day', () => {
    /** A caller whose employee has a contract in `state` from 2027-01-01. */
    async function callerIn(state: string) {
      const caller = await newCaller();
      const employee = await hr.db.employee.findFirstOrThrow({
        where: { tenantId: caller.tenantId, userId: caller.userId },
      });
      const contract = await request(hr.app)
        .post(`/api/v1/employees/${employee.id}/contracts`)
        .set('Authorization', caller.auth)
        .send({
          valid_from: '2027-01-01',
          weekly_minutes: 2400,
          working_days: ['mon', 'tue', 'wed', 'thu', 'fri'],
          vacation_days_per_year: 30,
          state,
        });
      expect(contract.status).toBe(201);
      return caller;
    }
    const work = [{ start: '10:00', end: '14:00', category: 'normal' }];

    test('When work is recorded on 8 March 2027 in Berlin (Frauentag), then the sheet is stored with holiday_work', async () => {
      const caller = await callerIn('DE-BE');
      const sheet = await record(caller, '2027-03-08', work);

      expect(sheet.warnings).toEqual([
        {
          code: 'holiday_work',
          message:
            '2027-03-08 is a public holiday (Internationaler Frauentag): work on public holidays is allowed only under the exceptions of §10 ArbZG (§9 ArbZG).',
        },
      ]);
      expect((await storedSheets(caller.tenantId))[0]!.warnings).toEqual(sheet.warnings);
    });

    test.each([
      ['in Bavaria (no holiday there)', 'DE-BY', '2027-03-08'],
      ['before the first contract (no state known)', 'DE-BE', '2026-03-08'],
    ])('When work is recorded on 8 March %s, then there is no holiday_work', async (_case, state, date) => {
      const caller = await callerIn(state);
      expect((await record(caller, date, work)).warnings.filter((w) => w.code === 'holiday_work')).toEqual([]);
    });
  });
});

describe('neighbouring days written at the same time', () => {
  test('When the two days of a short rest are recorded concurrently, then both end up holding rest_period_too_short', async () => {
    for (let round = 0; round < 3; round++) {
      const caller = await newCaller();
      const [late, early] = await Promise.all([
        post(caller.auth, {
          user_id: caller.userId,
          date: '2026-10-29',
          entries: [{ start: '22:00', end: '24:00', category: 'normal' }],
        }),
        post(caller.auth, {
          user_id: caller.userId,
          date: '2026-10-30',
          entries: [{ start: '08:00', end: '12:00', category: 'normal' }],
        }),
      ]);
      expect([late.status, early.status]).toEqual([201, 201]);

      const stored = await storedSheets(caller.tenantId);
      expect(
        stored.map((sheet) =>
          (sheet.warnings as { code: string; other_date: string }[]).map((w) => [w.code, w.other_date]),
        ),
      ).toEqual([[['rest_period_too_short', '2026-10-30']], [['rest_period_too_short', '2026-10-29']]]);
    }
  });
});

describe("Local times in the contract's time zone", () => {
  // Berlin (the default, and every contract's zone before contracts had one): summer time begins at
  // 02:00 on 29 March 2026 (clocks jump to 03:00) and ends at 03:00 on 25 October 2026 (back to 02:00).
  const standby = (start: string, end: string) => ({ start, end, category: 'standby' });
  const work = (start: string, end: string) => ({ start, end, category: 'normal' });

  test(
    "When a whole day of standby is recorded on the days Berlin's clocks change, then it " +
      'counts 1,380 and 1,500 minutes, and the payroll export pays those hours',
    async () => {
      const caller = await newCaller('read:hr write:hr read:payroll');

      const spring = await record(caller, '2026-03-29', [standby('00:00', '24:00')]);
      const autumn = await record(caller, '2026-10-25', [standby('00:00', '24:00')]);
      const ordinary = await record(caller, '2026-10-26', [standby('00:00', '24:00')]);

      expect(spring.entries).toEqual([{ start: '00:00', end: '24:00', category: 'standby', minutes: 1380 }]);
      expect(autumn.entries).toEqual([{ start: '00:00', end: '24:00', category: 'standby', minutes: 1500 }]);
      expect(ordinary.entries[0]!.minutes).toBe(1440);
      expect((await storedSheets(caller.tenantId)).map((sheet) => sheet.entries[0]![3])).toEqual([1380, 1500, 1440]);
      const march = await request(hr.app)
        .get('/api/v1/exports/payroll?period=2026-03')
        .set('Authorization', caller.auth);
      expect(march.text).toMatch(/,2026-03,\d+,standby,23\.00,hours\r\n/);
    },
  );

  test.each([
    ['a start the clocks skip', [work('02:30', '06:00')], 'entries[0].start', '02:30'],
    ['an end the clocks skip', [work('00:00', '02:15')], 'entries[0].end', '02:15'],
  ])(
    'When an entry has %s (29 March 2026 in Berlin), then it answers 422 naming it and stores nothing',
    async (_case, entries, field, time) => {
      const caller = await newCaller();
      const response = await post(caller.auth, { user_id: caller.userId, date: '2026-03-29', entries });

      expectProblem(response, 422, 'unprocessable');
      expect(response.body.errors).toEqual([
        {
          field,
          message: `does not exist on 2026-03-29 in Europe/Berlin: the clocks skip ${time} that day (summer time begins)`,
        },
      ]);
      expect(await storedSheets(caller.tenantId)).toEqual([]);
    },
  );

  test('When the clocks show a time twice (02:30 on 25 October 2026), then it is the first of the two, and 03:00 the only one', async () => {
    const caller = await newCaller();
    // 02:30 summer time to 03:00 winter time: 90 real minutes.
    expect((await record(caller, '2026-10-25', [work('02:30', '03:00')])).worked_minutes).toBe(90);
  });

  test('When the day maximum of §3 ArbZG is judged on the days the clocks change, then it counts real minutes', async () => {
    const caller = await newCaller();
    // 00:00–10:30 is 9 h 30 of real time on 29 March (an hour is skipped): within 10 h.
    expect((await record(caller, '2026-03-29', [work('00:00', '10:30')])).worked_minutes).toBe(570);
    // 00:00–09:30 is 10 h 30 of real time on 25 October (an hour is repeated): over 10 h.
    const autumn = await post(caller.auth, {
      user_id: caller.userId,
      date: '2026-10-25',
      entries: [work('00:00', '09:30')],
    });
    expectProblem(autumn, 422, 'unprocessable');
    expect(autumn.body.errors).toEqual([
      {
        field: 'entries',
        message: 'add up to 630 min (10 h 30) of work; at most 600 min (10 h) a day are allowed (§3 ArbZG)',
      },
    ]);
    // The same times on an ordinary day: 9 h 30.
    expect((await record(caller, '2026-10-27', [work('00:00', '09:30')])).worked_minutes).toBe(570);
  });

  test('When the breaks of §4 ArbZG lie across a change of the clocks, then they count real minutes', async () => {
    const caller = await newCaller();
    // 00:00–01:50 (winter time) then 03:00–08:00 (summer time): the clocks jump from 02:00 to 03:00, so the gap is 10 real minutes, no break.
    const sheet = await record(caller, '2026-03-29', [work('00:00', '01:50'), work('03:00', '08:00')]);
    expect(sheet).toMatchObject({ worked_minutes: 110 + 300, break_minutes: 0 });
    // 6 h 50 of work with no break: too little break, too long a block (and a Sunday).
    expect(sheet.warnings.map((warning) => warning.code)).toEqual([
      'break_too_short',
      'work_block_too_long',
      'sunday_work',
    ]);
    expect(sheet.warnings[0]!.message).toMatch(/0 min recorded, 30 min missing/);
  });

  test('When the rest between two days spans a change of the clocks, then §5 ArbZG counts its real hours', async () => {
    const caller = await newCaller();
    // 22:00 on 28 March to 09:30 on 29 March: 11 h 30 on the clock, 10 h 30 of real rest.
    await record(caller, '2026-03-28', [work('18:00', '22:00')]);
    const spring = await record(caller, '2026-03-29', [work('09:30', '12:00')]);
    expect(spring.warnings).toEqual([
      expect.objectContaining({
        code: 'rest_period_too_short',
        message: expect.stringMatching(
          /^Only 10 h 30 of rest between the end of work on 2026-03-28 \(22:00\) and its start on 2026-03-29 \(09:30\)/,
        ),
      }),
      expect.objectContaining({ code: 'sunday_work' }),
    ]);
    // 22:00 on 24 October to 08:30 on 25 October: 10 h 30 on the clock, 11 h 30 of real rest.
    await record(caller, '2026-10-24', [work('18:00', '22:00')]);
    expect((await record(caller, '2026-10-25', [work('08:30', '12:00')])).warnings).toEqual([
      expect.objectContaining({ code: 'sunday_work' }),
    ]);
  });

  test('When work runs over the night the clocks go back, then the block of §4 ArbZG is its real length', async () => {
    const caller = await newCaller();
    await record(caller, '2026-10-24', [work('20:00', '24:00')]);
    const sheet = await record(caller, '2026-10-25', [work('00:00', '03:00')]);
    // 20:00–03:00 on the clock is 8 h of work.
    expect(sheet.warnings).toContainEqual({
      code: 'work_block_too_long',
      message:
        '8 h of work in a row without a break of at least 15 min (2026-10-24 20:00 – 2026-10-25 03:00); §4 ArbZG allows at most 6 h in a row.',
      other_date: '2026-10-24',
    });
  });

  test('When the contract is in another zone, then its days are read in that zone: New York changes its clocks on 8 March 2026, not on 29 March', async () => {
    const e = await employeeWith(hr, null, [{ ...fullTime('DE-BE', '2026-01-01'), time_zone: 'America/New_York' }]);
    const caller = { auth: e.auth, userId: e.userId };

    expect((await record(caller, '2026-03-08', [standby('00:00', '24:00')])).entries[0]!.minutes).toBe(1380);
    expect((await record(caller, '2026-03-29', [standby('00:00', '24:00')])).entries[0]!.minutes).toBe(1440);
    expect((await record(caller, '2026-03-30', [work('02:30', '06:00')])).worked_minutes).toBe(210);
  });
});

describe("A contract's time zone", () => {
  const add = (e: TestEmployee, body: object) =>
    request(hr.app).post(`/api/v1/employees/${e.id}/contracts`).set('Authorization', e.auth).send(body);

  test('When a contract names no zone, then it is Europe/Berlin; a zone in other letter case is stored as the tz database spells it', async () => {
    const e = await employeeWith(hr, null, []);
    expect((await add(e, fullTime('DE-BE', '2026-01-01'))).body.time_zone).toBe('Europe/Berlin');
    const lower = await add(e, { ...fullTime('DE-BE', '2026-02-01'), time_zone: 'america/new_york' });
    expect(lower.status).toBe(201);
    expect(lower.body.time_zone).toBe('America/New_York');
    const stored = await hr.db.contract.findMany({ where: { employeeId: e.id }, orderBy: { validFrom: 'asc' } });
    expect(stored.map((contract) => contract.timeZone)).toEqual(['Europe/Berlin', 'America/New_York']);
  });

  test.each([['Mars/Olympus_Mons'], ['+01:00'], ['CET-1CEST'], ['Europe/']])(
    'When the zone is %s, then it answers 400 naming time_zone and stores nothing',
    async (zone) => {
      const e = await employeeWith(hr, null, []);
      const response = await add(e, { ...fullTime('DE-BE', '2026-01-01'), time_zone: zone });
      expectProblem(response, 400, 'validation-error');
      expect(response.body.errors).toEqual([
        { field: 'time_zone', message: 'is not a known IANA time zone (such as Europe/Berlin)' },
      ]);
      expect(await hr.db.contract.count({ where: { employeeId: e.id } })).toBe(0);
    },
  );
});
