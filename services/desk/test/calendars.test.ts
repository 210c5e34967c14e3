import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, TARGETS, bearer, newTenant, snapshot, startHelpdesk, unique } from './support/helpdesk';

let desk: TestDesk;
let http: Api;
let token: string;

beforeAll(async () => ({ desk, http, token } = await startHelpdesk()));
afterAll(() => desk.close());

const OFFICE = [{ start: '08:00', end: '17:00' }];
const WEEKDAYS = { mon: OFFICE, tue: OFFICE, wed: OFFICE, thu: OFFICE, fri: OFFICE, sat: [], sun: [] };
const ALL_DAY = [{ start: '00:00', end: '24:00' }];

async function createCalendar(body: Record<string, unknown> = {}) {
  const response = await http
    .post(`${BASE}/calendars`)
    .set(bearer(token))
    .send({
      name: unique('Office'),
      time_zone: 'Europe/Berlin',
      hours: WEEKDAYS,
      holidays: { country: 'DE', region: 'DE-BY' },
      closed_days: [],
      ...body,
    })
    .expect(201);
  return response.body as { id: string; name: string };
}

async function dueAt(calendarId: string, from: string, minutes: number) {
  const response = await http
    .get(`${BASE}/calendars/${calendarId}/business-time`)
    .query({ from, minutes })
    .set(bearer(token))
    .expect(200);
  return response.body.due_at as string;
}

async function minutesBetween(calendarId: string, from: string, to: string) {
  const response = await http
    .get(`${BASE}/calendars/${calendarId}/business-time`)
    .query({ from, to })
    .set(bearer(token))
    .expect(200);
  return response.body.business_minutes as number;
}

async function holidayDates(calendarId: string, year: number) {
  const response = await http
    .get(`${BASE}/calendars/${calendarId}/holidays`)
    .query({ year })
    .set(bearer(token))
    .expect(200);
  return (response.body.data as { date: string }[]).map((day) => day.date);
}

describe('/calendars', () => {
  test('When a calendar is created, read, listed, changed and deleted, then each answer shows it as stored, with every weekday listed', async () => {
    const created = await http
      .post(`${BASE}/calendars`)
      .set(bearer(token))
      .send({
        name: 'Munich office',
        time_zone: 'Europe/Berlin',
        hours: {
          mon: OFFICE,
          fri: [
            { start: '08:00', end: '12:00' },
            { start: '13:00', end: '17:00' },
          ],
        },
        holidays: { country: 'DE', region: 'DE-BY' },
        closed_days: ['2026-12-31', '2026-12-24'],
      })
      .expect(201);
    expect(created.headers.location).toBe(`${BASE}/calendars/${created.body.id}`);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Munich office',
      time_zone: 'Europe/Berlin',
      hours: {
        mon: OFFICE,
        tue: [],
        wed: [],
        thu: [],
        fri: [
          { start: '08:00', end: '12:00' },
          { start: '13:00', end: '17:00' },
        ],
        sat: [],
        sun: [],
      },
      holidays: { country: 'DE', region: 'DE-BY' },
      closed_days: ['2026-12-24', '2026-12-31'],
      created_at: expect.any(String),
      updated_at: created.body.created_at,
    });
    expect((await http.get(`${BASE}/calendars/${created.body.id}`).set(bearer(token)).expect(200)).body).toEqual(
      created.body,
    );
    const list = await http.get(`${BASE}/calendars`).set(bearer(token)).expect(200);
    expect(list.body.data).toContainEqual(created.body);

    const changed = await http
      .patch(`${BASE}/calendars/${created.body.id}`)
      .set(bearer(token))
      .send({ holidays: null, closed_days: [] })
      .expect(200);
    expect(changed.body).toMatchObject({ holidays: null, closed_days: [], hours: created.body.hours });

    await http.delete(`${BASE}/calendars/${created.body.id}`).set(bearer(token)).expect(204);
    await http.get(`${BASE}/calendars/${created.body.id}`).set(bearer(token)).expect(404);
    await http.delete(`${BASE}/calendars/${created.body.id}`).set(bearer(token)).expect(404);
  });

  test.each([
    ['an unknown time zone', { time_zone: 'Europe/Munich' }, 'time_zone'],
    ['a region that is no German state', { holidays: { country: 'DE', region: 'DE-XX' } }, 'holidays.region'],
    ['another country', { holidays: { country: 'FR', region: null } }, 'holidays.country'],
    ['an end before its start', { hours: { mon: [{ start: '17:00', end: '08:00' }] } }, 'hours.mon[0].end'],
    ['an end equal to its start', { hours: { mon: [{ start: '08:00', end: '08:00' }] } }, 'hours.mon[0].end'],
    [
      'overlapping intervals',
      {
        hours: {
          mon: [
            { start: '08:00', end: '12:00' },
            { start: '11:00', end: '13:00' },
          ],
        },
      },
      'hours.mon[1]',
    ],
    ['no hours at all', { hours: { mon: [] } }, 'hours'],
    ['a time that is no HH:MM', { hours: { mon: [{ start: '8:00', end: '17:00' }] } }, 'hours.mon[0].start'],
    ['24:00 as a start', { hours: { mon: [{ start: '24:00', end: '24:00' }] } }, 'hours.mon[0].start'],
    ['an unknown weekday', { hours: { monday: OFFICE } }, 'hours.monday'],
    ['a closed day that is no date', { closed_days: ['2026-02-30'] }, 'closed_days[0]'],
  ])('When a calendar has %s, then it answers 400 naming the field and stores nothing', async (_, change, field) => {
    const before = await snapshot(desk);
    const body = { name: unique('Bad'), time_zone: 'Europe/Berlin', hours: WEEKDAYS, holidays: null, ...change };
    const response = await http.post(`${BASE}/calendars`).set(bearer(token)).send(body).expect(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.errors).toContainEqual({ field, message: expect.any(String) });
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When a change makes a calendar invalid, then it answers 400 and the calendar stays as it was', async () => {
    const calendar = await createCalendar();
    const response = await http
      .patch(`${BASE}/calendars/${calendar.id}`)
      .set(bearer(token))
      .send({ time_zone: 'Mars/Olympus' })
      .expect(400);
    expect(response.body.errors).toContainEqual({ field: 'time_zone', message: expect.any(String) });
    expect((await http.get(`${BASE}/calendars/${calendar.id}`).set(bearer(token)).expect(200)).body.time_zone).toBe(
      'Europe/Berlin',
    );
  });

  test('When a second calendar takes a name the tenant uses (in other case), then it answers 409', async () => {
    const calendar = await createCalendar();
    const response = await http
      .post(`${BASE}/calendars`)
      .set(bearer(token))
      .send({ name: calendar.name.toUpperCase(), time_zone: 'UTC', hours: WEEKDAYS })
      .expect(409);
    expect(response.body.status).toBe(409);
  });

  test('When an SLA policy counts on a calendar, then deleting the calendar answers 409 until the policy lets go of it', async () => {
    const calendar = await createCalendar();
    const policy = await http
      .post(`${BASE}/sla-policies`)
      .set(bearer(token))
      .send({ name: unique('Gold'), calendar_id: calendar.id, targets: TARGETS })
      .expect(201);

    const response = await http.delete(`${BASE}/calendars/${calendar.id}`).set(bearer(token)).expect(409);
    expect(response.body.type).toBe('urn:msp:problem:calendar-in-use');
    await http.get(`${BASE}/calendars/${calendar.id}`).set(bearer(token)).expect(200);

    await http
      .patch(`${BASE}/sla-policies/${policy.body.id}`)
      .set(bearer(token))
      .send({ calendar_id: null })
      .expect(200);
    await http.delete(`${BASE}/calendars/${calendar.id}`).set(bearer(token)).expect(204);
  });

  test('When a token holds only read:tickets and write:tickets, then calendars answer 403', async () => {
    const client = await desk.createClient({ scopes: ['read:tickets', 'write:tickets'] });
    const limited = await desk.token(client);
    await http.get(`${BASE}/calendars`).set(bearer(limited)).expect(403);
    await http
      .post(`${BASE}/calendars`)
      .set(bearer(limited))
      .send({ name: 'x', time_zone: 'UTC', hours: WEEKDAYS })
      .expect(403);
  });

  test('When another tenant asks for a calendar, then it answers 404', async () => {
    const calendar = await createCalendar();
    const other = await newTenant(desk);
    await http.get(`${BASE}/calendars/${calendar.id}`).set(bearer(other.token)).expect(404);
    await http
      .get(`${BASE}/calendars/${calendar.id}/business-time`)
      .query({ from: '2026-11-20T15:30:00Z', minutes: 1 })
      .set(bearer(other.token))
      .expect(404);
    await http.delete(`${BASE}/calendars/${calendar.id}`).set(bearer(other.token)).expect(404);
  });
});

describe('GET /calendars/:id/business-time', () => {
  test(
    'When 60 business minutes start on a Friday at 16:30 in Munich, then they are due ' +
      'on Monday at 08:30, and that span is 60 business minutes',
    async () => {
      const munich = await createCalendar();
      expect(await dueAt(munich.id, '2026-11-20T16:30:00+01:00', 60)).toBe('2026-11-23T07:30:00.000Z');
      expect(await minutesBetween(munich.id, '2026-11-20T16:30:00+01:00', '2026-11-23T08:30:00+01:00')).toBe(60);
      expect(await minutesBetween(munich.id, '2026-11-23T08:30:00+01:00', '2026-11-20T16:30:00+01:00')).toBe(-60);
    },
  );

  test("When from and to carry their offsets' + unencoded, as typed into a URL, then they still mean +01:00", async () => {
    const munich = await createCalendar();
    const due = await http
      .get(`${BASE}/calendars/${munich.id}/business-time?from=2026-11-20T16:30:00+01:00&minutes=60`)
      .set(bearer(token))
      .expect(200);
    expect(due.body).toEqual({ due_at: '2026-11-23T07:30:00.000Z' });
    const span = await http
      .get(`${BASE}/calendars/${munich.id}/business-time?from=2026-11-20T16:30:00+01:00&to=2026-11-23T08:30:00+01:00`)
      .set(bearer(token))
      .expect(200);
    expect(span.body).toEqual({ business_minutes: 60 });
  });

  test('When the count runs out exactly at closing time, or starts at night, then it is due at closing time, and counting from the next opening', async () => {
    const munich = await createCalendar();
    expect(await dueAt(munich.id, '2026-11-23T16:00:00+01:00', 60)).toBe('2026-11-23T16:00:00.000Z');
    expect(await dueAt(munich.id, '2026-11-23T03:00:00+01:00', 30)).toBe('2026-11-23T07:30:00.000Z');
    expect(await dueAt(munich.id, '2026-11-23T10:00:00+01:00', 0)).toBe('2026-11-23T09:00:00.000Z');
  });

  test('When summer time begins (29 March 2026) or ends (25 October 2026) over the weekend, then Friday 16:30 + 60 is Monday 08:30 local time', async () => {
    const munich = await createCalendar();
    expect(await dueAt(munich.id, '2026-03-27T16:30:00+01:00', 60)).toBe('2026-03-30T06:30:00.000Z');
    expect(await dueAt(munich.id, '2026-10-23T16:30:00+02:00', 60)).toBe('2026-10-26T07:30:00.000Z');
  });

  test('When a round-the-clock calendar spans the day summer time begins or ends, then the day has 23 or 25 hours of business time', async () => {
    const allDay = await createCalendar({
      hours: { mon: ALL_DAY, tue: ALL_DAY, wed: ALL_DAY, thu: ALL_DAY, fri: ALL_DAY, sat: ALL_DAY, sun: ALL_DAY },
      holidays: null,
    });
    expect(await minutesBetween(allDay.id, '2026-03-29T00:00:00+01:00', '2026-03-30T00:00:00+02:00')).toBe(23 * 60);
    expect(await minutesBetween(allDay.id, '2026-10-25T00:00:00+02:00', '2026-10-26T00:00:00+01:00')).toBe(25 * 60);
    // Local midnight + 3 h of real time across the skipped hour: 04:00 summer time.
    expect(await dueAt(allDay.id, '2026-03-29T00:00:00+01:00', 180)).toBe('2026-03-29T02:00:00.000Z');
  });

  test("When hours run over midnight, then the count carries on from 24:00 into the next day's 00:00", async () => {
    const night = await createCalendar({
      hours: { mon: [{ start: '22:00', end: '24:00' }], tue: [{ start: '00:00', end: '06:00' }] },
      holidays: null,
    });
    expect(await dueAt(night.id, '2026-11-23T23:30:00+01:00', 60)).toBe('2026-11-23T23:30:00.000Z');
    expect(await minutesBetween(night.id, '2026-11-23T21:00:00+01:00', '2026-11-24T07:00:00+01:00')).toBe(8 * 60);
  });

  test('When closed days and holidays follow each other (24, 25, 26 December), then the count skips them all', async () => {
    const munich = await createCalendar({ closed_days: ['2026-12-24'] });
    expect(await dueAt(munich.id, '2026-12-23T16:30:00+01:00', 60)).toBe('2026-12-28T07:30:00.000Z');
  });

  test('When 6 January starts the count, then Munich (Heilige Drei Könige) is a day later than Berlin', async () => {
    const munich = await createCalendar();
    const berlin = await createCalendar({ holidays: { country: 'DE', region: 'DE-BE' } });
    expect(await dueAt(munich.id, '2026-01-05T16:30:00+01:00', 60)).toBe('2026-01-07T07:30:00.000Z');
    expect(await dueAt(berlin.id, '2026-01-05T16:30:00+01:00', 60)).toBe('2026-01-06T07:30:00.000Z');
  });

  test('When both or neither of minutes and to are given, or from is no RFC 3339 time, then it answers 400', async () => {
    const munich = await createCalendar();
    const url = `${BASE}/calendars/${munich.id}/business-time`;
    await http
      .get(url)
      .query({ from: '2026-11-20T16:30:00Z', minutes: 60, to: '2026-11-21T16:30:00Z' })
      .set(bearer(token))
      .expect(400);
    await http.get(url).query({ from: '2026-11-20T16:30:00Z' }).set(bearer(token)).expect(400);
    await http.get(url).query({ from: 'Friday', minutes: 60 }).set(bearer(token)).expect(400);
    await http.get(url).query({ from: '2026-11-20T16:30:00Z', minutes: -1 }).set(bearer(token)).expect(400);
  });
});

describe('GET /calendars/:id/business-time, far apart and out of reach', () => {
  const businessTime = (calendarId: string, query: Record<string, string | number>) =>
    http.get(`${BASE}/calendars/${calendarId}/business-time`).query(query).set(bearer(token));

  test(
    'When from and to are a century apart, then the business minutes are counted (the ' +
      'sum of its years); two centuries apart is a 400 naming to',
    async () => {
      const munich = await createCalendar();
      let years = 0;
      for (const decade of [1930, 1940, 1950, 1960, 1970, 1980, 1990, 2000, 2010, 2020]) {
        years += await minutesBetween(munich.id, `${decade}-01-01T00:00:00Z`, `${decade + 10}-01-01T00:00:00Z`);
      }
      expect(await minutesBetween(munich.id, '1930-01-01T00:00:00Z', '2030-01-01T00:00:00Z')).toBe(years);

      for (const [from, to] of [
        ['1826-01-01T00:00:00Z', '2026-01-01T00:00:00Z'],
        ['9999-12-31T00:00:00Z', '0001-01-01T00:00:00Z'],
      ] as const) {
        const response = await businessTime(munich.id, { from, to }).expect(400);
        expect(response.body.errors).toEqual([{ field: 'to', message: expect.stringContaining('100 years') }]);
      }
    },
  );

  test(
    "When minutes near the schema's maximum cannot be reached within 100 years, or the due time passes the year " +
      '9999, then it answers 422 naming the limit; otherwise due_at stays in the years 0001-9999',
    async () => {
      const sparse = await createCalendar({ hours: { wed: [{ start: '10:00', end: '10:01' }] } });
      const roundTheClock = await createCalendar({
        hours: Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => [day, ALL_DAY])),
        holidays: null,
      });
      const maximum = (await http.get(`${BASE}/openapi.json`).set(bearer(token)).expect(200)).body.paths[
        '/calendars/{id}/business-time'
      ].get.parameters.find((parameter: { name: string }) => parameter.name === 'minutes').schema.maximum as number;

      const beyond = await businessTime(sparse.id, { from: '2026-11-20T10:00:00Z', minutes: maximum }).expect(422);
      expect(beyond.body).toMatchObject({
        type: 'urn:msp:problem:business-time-out-of-range',
        limit: expect.stringContaining('100 years'),
        errors: [{ field: 'minutes', message: expect.any(String) }],
      });

      const late = await businessTime(roundTheClock.id, { from: '9999-06-01T00:00:00Z', minutes: maximum }).expect(422);
      expect(late.body).toMatchObject({ type: 'urn:msp:problem:business-time-out-of-range', limit: 'the year 9999' });

      const reached = await businessTime(roundTheClock.id, { from: '2026-01-01T00:00:00Z', minutes: maximum }).expect(
        200,
      );
      expect(reached.body.due_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(await minutesBetween(roundTheClock.id, '2026-01-01T00:00:00Z', reached.body.due_at)).toBe(maximum);
    },
  );
});

describe('GET /calendars/:id/holidays', () => {
  test('When Bavaria and Berlin are asked for 2026, then 6 January and 1 November are Bavarian holidays only and 8 March a Berlin one only', async () => {
    const munich = await createCalendar({ closed_days: ['2026-12-24', '2027-12-24'] });
    const berlin = await createCalendar({ holidays: { country: 'DE', region: 'DE-BE' } });

    const bavarian = await holidayDates(munich.id, 2026);
    expect(bavarian).toEqual(
      expect.arrayContaining(['2026-01-01', '2026-01-06', '2026-11-01', '2026-10-03', '2026-12-24']),
    );
    expect(bavarian).not.toContain('2026-03-08');
    expect(bavarian).not.toContain('2027-12-24');
    const berliner = await holidayDates(berlin.id, 2026);
    expect(berliner).toEqual(expect.arrayContaining(['2026-01-01', '2026-03-08', '2026-10-03']));
    expect(berliner).not.toContain('2026-01-06');
    expect(berliner).not.toContain('2026-11-01');
    expect([...bavarian].sort()).toEqual(bavarian);

    const response = await http
      .get(`${BASE}/calendars/${munich.id}/holidays`)
      .query({ year: 2026 })
      .set(bearer(token))
      .expect(200);
    expect(response.body.data).toContainEqual({
      date: '2026-01-06',
      name: 'Heilige Drei Könige',
      kind: 'public_holiday',
    });
    expect(response.body.data).toContainEqual({ date: '2026-12-24', name: 'Closed day', kind: 'closed_day' });
    expect(response.body.pagination).toMatchObject({ page: 1, total: bavarian.length });
  });

  test(
    'When holidays and closed days are listed, then they are ordered without a locale-aware ' +
      "comparison (its first use brings ICU's collator into memory for good)",
    async () => {
      const munich = await createCalendar({ closed_days: ['2026-12-25', '2026-03-02'] });
      const original = String.prototype.localeCompare;
      let calls = 0;
      String.prototype.localeCompare = function (this: string, ...args: Parameters<typeof original>) {
        calls += 1;
        return original.apply(this, args);
      };
      try {
        const response = await http
          .get(`${BASE}/calendars/${munich.id}/holidays`)
          .query({ year: 2026 })
          .set(bearer(token))
          .expect(200);
        const days = response.body.data as { date: string; kind: string }[];
        expect(days.map((day) => `${day.date} ${day.kind}`)).toEqual(
          days.map((day) => `${day.date} ${day.kind}`).sort(),
        );
        // A closed day on a public holiday: both, the kinds in code-unit order.
        expect(days.filter((day) => day.date === '2026-12-25').map((day) => day.kind)).toEqual([
          'closed_day',
          'public_holiday',
        ]);
      } finally {
        String.prototype.localeCompare = original;
      }
      expect(calls).toBe(0);
    },
  );

  test('When the year is no year in range, then it answers 400', async () => {
    const munich = await createCalendar();
    await http.get(`${BASE}/calendars/${munich.id}/holidays`).query({ year: 'soon' }).set(bearer(token)).expect(400);
    await http.get(`${BASE}/calendars/${munich.id}/holidays`).query({ year: 1800 }).set(bearer(token)).expect(400);
  });
});
