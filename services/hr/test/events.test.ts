import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import request from 'supertest';
import { createLogger } from '@msp/http';
import { storedEvents, whileEventsCannotBeStored } from '@msp/testkit';
import { expectProblem, newCallerWithEmployee, type CallerWithEmployee } from './support/callers';
import { hrEvents } from '../src/events/hr-events';
import { startHr, type TestHr } from './support/hr';

const TIMESHEETS = '/api/v1/timesheets';
const LEAVES = '/api/v1/leaves';
// The token's client id (`sub`): the actor every event of these tests must name.
const CLIENT = 'hr-events-test';

let hr: TestHr;
// The rolled-back writes answer 500 and log their error, as they should: read here, not printed.
let logged = '';

beforeAll(async () => {
  const stream = new PassThrough().on('data', (chunk) => (logged += chunk));
  hr = await startHr({ logger: createLogger({ service: 'hr', level: 'error', stream }) });
});
afterAll(() => hr.close());

type Caller = CallerWithEmployee;

const newCaller = () => newCallerWithEmployee(hr, 'read:hr write:hr', { sub: CLIENT });

const get = (caller: Caller, path: string) => request(hr.app).get(path).set('Authorization', caller.auth);
const post = (caller: Caller, path: string, body: object) =>
  request(hr.app).post(path).set('Authorization', caller.auth).send(body);
const patch = (caller: Caller, path: string, body: object) =>
  request(hr.app).patch(path).set('Authorization', caller.auth).send(body);
const del = (caller: Caller, path: string) => request(hr.app).delete(path).set('Authorization', caller.auth);

/** The tenant's event stream as stored, oldest first. */
const eventsOf = (tenantId: string) => storedEvents(hr.db, tenantId);

/** The event the write that answered `response` must have stored. */
function expectedEvent(
  response: request.Response,
  type: string,
  resourceId: string,
  data: { object: unknown; changes?: unknown },
) {
  return {
    type,
    resource_type: type.split('.')[0],
    resource_id: resourceId,
    actor_client_id: CLIENT,
    actor_on_behalf_of: null,
    request_id: response.headers['x-request-id'],
    changes: data.changes ?? null,
    data,
  };
}

/**
 * Runs `writes` while every insert into `events` fails, as a crash between the change and its
 * event would: the change must roll back with it.
 */
async function withFailingEvents(writes: () => Promise<void>) {
  logged = '';
  await whileEventsCannotBeStored(hr.db, writes);
  // The 500s were the trigger's doing, not something else failing.
  expect(logged).toContain('boom');
}

test('the catalogue names the ten events hr records, each with its OpenAPI payload (and webhook.test)', () => {
  const types = [
    'timesheet.created',
    'timesheet.updated',
    'timesheet.deleted',
    'leave.requested',
    'leave.approved',
    'leave.rejected',
    'leave.cancelled',
    'contract.created',
    'leave_adjustment.created',
    'leave_settings.updated',
  ];
  expect(hrEvents.names).toEqual(types);
  expect(hrEvents.webhookDocs().map((doc) => doc.name)).toEqual([...types, 'webhook.test']);
});

describe('timesheet events', () => {
  const DAY = [
    { start: '08:00', end: '12:00', category: 'normal' },
    { start: '12:30', end: '16:30', category: 'normal' },
  ];
  const sheetPath = (id: string) => `${TIMESHEETS}/${id}`;

  async function recordSheet(caller: Caller, date = '2026-10-29') {
    const response = await post(caller, TIMESHEETS, { user_id: caller.userId, date, entries: DAY });
    expect(response.status).toBe(201);
    return response;
  }

  test('When a day is recorded, then timesheet.created holds the sheet exactly as POST and GET answer it', async () => {
    const caller = await newCaller();

    const response = await recordSheet(caller);

    expect((await get(caller, sheetPath(response.body.id))).body).toEqual(response.body);
    expect(await eventsOf(caller.tenantId)).toEqual([
      expectedEvent(response, 'timesheet.created', response.body.id, { object: response.body }),
    ]);
  });

  test("When a service client records on behalf of another, then the event names both, the other as the service client's claim", async () => {
    const caller = await newCallerWithEmployee(hr, 'read:hr write:hr', { sub: CLIENT, client_kind: 'service' });

    const response = await post(caller, TIMESHEETS, { user_id: caller.userId, date: '2026-10-29', entries: DAY }).set(
      'X-On-Behalf-Of',
      'link-onboarding',
    );

    expect(response.status).toBe(201);
    expect(await eventsOf(caller.tenantId)).toEqual([
      {
        ...expectedEvent(response, 'timesheet.created', response.body.id, { object: response.body }),
        actor_on_behalf_of: 'link-onboarding',
      },
    ]);
  });

  test("When a tenant's client (not a service client) sends X-On-Behalf-Of, then it is ignored: the event names the caller only", async () => {
    const caller = await newCallerWithEmployee(hr, 'read:hr write:hr', { sub: CLIENT, client_kind: 'tenant' });
    const plain = await newCaller();

    const response = await post(caller, TIMESHEETS, { user_id: caller.userId, date: '2026-10-29', entries: DAY }).set(
      'X-On-Behalf-Of',
      'someone-else',
    );
    const unmarked = await post(plain, TIMESHEETS, { user_id: plain.userId, date: '2026-10-29', entries: DAY }).set(
      'X-On-Behalf-Of',
      'someone-else',
    );

    expect(response.status).toBe(201);
    expect(unmarked.status).toBe(201);
    expect(await eventsOf(caller.tenantId)).toEqual([
      expectedEvent(response, 'timesheet.created', response.body.id, { object: response.body }),
    ]);
    expect(await eventsOf(plain.tenantId)).toEqual([
      expectedEvent(unmarked, 'timesheet.created', unmarked.body.id, { object: unmarked.body }),
    ]);
  });

  test('When the entries are replaced, then timesheet.updated holds the new sheet and the fields that changed', async () => {
    const caller = await newCaller();
    const sheet = (await recordSheet(caller)).body;
    const entries = [
      { start: '08:00', end: '12:00', category: 'normal' },
      { start: '12:10', end: '15:10', category: 'travel' },
    ];

    const response = await patch(caller, sheetPath(sheet.id), { entries });

    expect(response.status).toBe(200);
    expect((await get(caller, sheetPath(sheet.id))).body).toEqual(response.body);
    const events = await eventsOf(caller.tenantId);
    expect(events).toHaveLength(2);
    expect(events[1]).toEqual(
      expectedEvent(response, 'timesheet.updated', sheet.id, {
        object: response.body,
        changes: {
          entries: { from: sheet.entries, to: response.body.entries },
          worked_minutes: { from: 480, to: 420 },
          break_minutes: { from: 30, to: 0 },
          warnings: { from: [], to: response.body.warnings },
        },
      }),
    );
    // A break too short (§4 sums) and 7 h 10 in a row (§4 block).
    expect(response.body.warnings.map((w: { code: string }) => w.code)).toEqual([
      'break_too_short',
      'work_block_too_long',
    ]);
  });

  test('When the entries sent are the ones the sheet has (in another order), then nothing changes, not even updated_at, and no event is recorded', async () => {
    const caller = await newCaller();
    const sheet = (await recordSheet(caller)).body;

    const response = await patch(caller, sheetPath(sheet.id), {
      user_id: caller.userId,
      date: sheet.date,
      entries: [...DAY].reverse(),
    });

    expect(response.status).toBe(200);
    expect(response.body).toEqual(sheet);
    expect((await get(caller, sheetPath(sheet.id))).body).toEqual(sheet);
    expect((await eventsOf(caller.tenantId)).map((event) => event.type)).toEqual(['timesheet.created']);
  });

  test('When the sheet is deleted, then timesheet.deleted holds it as it was', async () => {
    const caller = await newCaller();
    const sheet = (await recordSheet(caller)).body;
    const shown = (await get(caller, sheetPath(sheet.id))).body;

    const response = await del(caller, sheetPath(sheet.id));

    expect(response.status).toBe(204);
    const events = await eventsOf(caller.tenantId);
    expect(events).toHaveLength(2);
    expect(events[1]).toEqual(expectedEvent(response, 'timesheet.deleted', sheet.id, { object: shown }));
  });

  test('When a write is refused (409, 422, 404), then no event is recorded', async () => {
    const caller = await newCaller();
    const sheet = (await recordSheet(caller)).body;
    const stranger = await newCaller();

    expectProblem(
      await post(caller, TIMESHEETS, { user_id: caller.userId, date: sheet.date, entries: DAY }),
      409,
      'conflict',
    );
    expectProblem(
      await post(caller, TIMESHEETS, { user_id: randomUUID(), date: '2026-10-30', entries: DAY }),
      422,
      'unprocessable',
    );
    expectProblem(
      await patch(caller, sheetPath(sheet.id), { entries: [{ start: '06:00', end: '16:01', category: 'normal' }] }),
      422,
      'unprocessable',
    );
    expectProblem(await patch(stranger, sheetPath(sheet.id), { entries: DAY }), 404, 'not-found');
    expectProblem(await del(stranger, sheetPath(sheet.id)), 404, 'not-found');

    expect((await eventsOf(caller.tenantId)).map((event) => event.type)).toEqual(['timesheet.created']);
    expect(await eventsOf(stranger.tenantId)).toEqual([]);
  });

  test('When the event cannot be stored, then the write rolls back with it: nothing changes and no event exists', async () => {
    const caller = await newCaller();
    const sheet = (await recordSheet(caller)).body;

    await withFailingEvents(async () => {
      expect(
        (await post(caller, TIMESHEETS, { user_id: caller.userId, date: '2026-10-30', entries: DAY })).status,
      ).toBe(500);
      expect(
        (
          await patch(caller, sheetPath(sheet.id), {
            entries: [{ start: '09:00', end: '10:00', category: 'training' }],
          })
        ).status,
      ).toBe(500);
      expect((await del(caller, sheetPath(sheet.id))).status).toBe(500);
    });

    expect((await get(caller, sheetPath(sheet.id))).body).toEqual(sheet);
    expect(await hr.db.timesheet.count({ where: { tenantId: caller.tenantId } })).toBe(1);
    expect((await eventsOf(caller.tenantId)).map((event) => event.type)).toEqual(['timesheet.created']);
  });
});

describe('leave events', () => {
  const leavePath = (id: string) => `${LEAVES}/${id}`;

  async function requestLeave(caller: Caller, overrides: Record<string, unknown> = {}) {
    const response = await post(caller, LEAVES, {
      user_id: caller.userId,
      type: 'vacation',
      start_date: '2026-10-29',
      end_date: '2026-11-03',
      ...overrides,
    });
    expect(response.status).toBe(201);
    return response;
  }

  test('When a leave is requested, then leave.requested holds it exactly as POST and GET answer it', async () => {
    const caller = await newCaller();

    const response = await requestLeave(caller, { note: 'Autumn holidays' });

    expect((await get(caller, leavePath(response.body.id))).body).toEqual(response.body);
    expect(await eventsOf(caller.tenantId)).toEqual([
      expectedEvent(response, 'leave.requested', response.body.id, { object: response.body }),
    ]);
  });

  describe.each([
    ['requested', 'approved'],
    ['requested', 'rejected'],
    ['requested', 'cancelled'],
    ['approved', 'cancelled'],
  ])('When a %s leave is moved to %s', (from, to) => {
    test(`then leave.${to} holds the leave as PATCH and GET answer it, and changes.status is {from, to}`, async () => {
      const caller = await newCaller();
      const leave = (await requestLeave(caller)).body;
      if (from === 'approved')
        expect((await patch(caller, leavePath(leave.id), { status: 'approved' })).status).toBe(200);

      const response = await patch(caller, leavePath(leave.id), { status: to });

      expect(response.status).toBe(200);
      expect((await get(caller, leavePath(leave.id))).body).toEqual(response.body);
      const events = await eventsOf(caller.tenantId);
      expect(events).toHaveLength(from === 'approved' ? 3 : 2);
      expect(events.at(-1)).toEqual(
        expectedEvent(response, `leave.${to}`, leave.id, { object: response.body, changes: { status: { from, to } } }),
      );
    });
  });

  test('When the status asked for is the current one, or the move is illegal, or the leave overlaps, then no event is recorded', async () => {
    const caller = await newCaller();
    const leave = (await requestLeave(caller)).body;
    const rejected = (await requestLeave(caller, { start_date: '2026-12-01', end_date: '2026-12-02' })).body;
    expect((await patch(caller, leavePath(rejected.id), { status: 'rejected' })).status).toBe(200);
    const before = await eventsOf(caller.tenantId);

    const same = await patch(caller, leavePath(leave.id), { status: 'requested' });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(leave);
    expectProblem(await patch(caller, leavePath(rejected.id), { status: 'approved' }), 422, 'illegal-transition');
    expectProblem(
      await post(caller, LEAVES, {
        user_id: caller.userId,
        type: 'sick',
        start_date: '2026-10-30',
        end_date: '2026-10-30',
      }),
      409,
      'conflict',
    );

    expect(before.map((event) => event.type)).toEqual(['leave.requested', 'leave.requested', 'leave.rejected']);
    expect(await eventsOf(caller.tenantId)).toEqual(before);
  });

  test('When a leave is approved and rejected concurrently, then only the move that won is recorded', async () => {
    const caller = await newCaller();
    const leave = (await requestLeave(caller)).body;

    const responses = await Promise.all([
      patch(caller, leavePath(leave.id), { status: 'approved' }),
      patch(caller, leavePath(leave.id), { status: 'rejected' }),
    ]);

    const winner = responses.find((response) => response.status === 200)!;
    expect(responses.map((response) => response.status).sort()).toEqual([200, 422]);
    const events = await eventsOf(caller.tenantId);
    expect(events.map((event) => event.type)).toEqual(['leave.requested', `leave.${winner.body.status}`]);
    expect(events[1]).toEqual(
      expectedEvent(winner, `leave.${winner.body.status}`, leave.id, {
        object: winner.body,
        changes: { status: { from: 'requested', to: winner.body.status } },
      }),
    );
  });

  test('When the event cannot be stored, then the write rolls back with it: nothing changes and no event exists', async () => {
    const caller = await newCaller();
    const leave = (await requestLeave(caller)).body;

    await withFailingEvents(async () => {
      expect(
        (
          await post(caller, LEAVES, {
            user_id: caller.userId,
            type: 'vacation',
            start_date: '2026-12-01',
            end_date: '2026-12-02',
          })
        ).status,
      ).toBe(500);
      expect((await patch(caller, leavePath(leave.id), { status: 'approved' })).status).toBe(500);
    });

    expect((await get(caller, leavePath(leave.id))).body).toEqual(leave);
    expect(await hr.db.leave.count({ where: { tenantId: caller.tenantId } })).toBe(1);
    expect((await eventsOf(caller.tenantId)).map((event) => event.type)).toEqual(['leave.requested']);
  });
});
