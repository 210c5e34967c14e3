import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { expectProblem } from './support/callers';
import { startHr, type TestHr } from './support/hr';
import { employeeWith, fullTime, type TestEmployee } from './support/employees';
import { YEARS_PATTERN } from '../src/day.schemas';

// Every day, month and year hr takes lies in 1900–2199, on every route alike, and the OpenAPI
// document says so. Both edges work end to end; a day outside is a 400 naming the field, never a
// 500 from a year the calendar, PostgreSQL or Date handle otherwise.

const API = '/api/v1';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

const as = (e: TestEmployee, method: 'get' | 'post' | 'patch', path: string, body?: object) => {
  const call = request(hr.app)[method](`${API}${path}`).set('Authorization', e.auth);
  return body === undefined ? call : call.send(body);
};

const withPayroll = (e: TestEmployee): TestEmployee => ({
  ...e,
  auth: `Bearer ${hr.token({ tenant_id: e.tenantId, scope: 'read:hr write:hr read:payroll' })}`,
});

async function expectRefused(response: request.Response, fields: string[]) {
  expectProblem(response, 400, 'validation-error');
  expect([...new Set(response.body.errors.map((error: { field: string }) => error.field))].sort()).toEqual(
    [...fields].sort(),
  );
  // The year is what is wrong, not the format of the day.
  const bound =
    fields[0] === 'year'
      ? expect.stringMatching(/^must be [<>]= (1900|2199)$/)
      : `must match pattern "${YEARS_PATTERN}"`;
  expect(response.body.errors).toEqual(expect.arrayContaining([{ field: fields[0], message: bound }]));
}

describe('A day, month or year outside 1900–2199', () => {
  const cases: [string, (e: TestEmployee) => request.Test, string[]][] = [
    [
      'an employment that starts in year 201',
      (e) => as(e, 'patch', `/employees/${e.id}`, { employment: { start_date: '0201-03-01' } }),
      ['employment.start_date'],
    ],
    [
      'an employment that ends in 2200',
      (e) => as(e, 'patch', `/employees/${e.id}`, { employment: { end_date: '2200-01-01' } }),
      ['employment.end_date'],
    ],
    [
      'a new employee employed from 1899',
      (e) =>
        as(e, 'post', '/employees', {
          user_id: randomUUID(),
          personnel_number: '77',
          name: 'A',
          employment: { start_date: '1899-12-31' },
        }),
      ['employment.start_date'],
    ],
    [
      'a contract from 1899',
      (e) => as(e, 'post', `/employees/${e.id}/contracts`, fullTime('DE-BE', '1899-12-31')),
      ['valid_from'],
    ],
    [
      'a contract from 2200',
      (e) => as(e, 'post', `/employees/${e.id}/contracts`, fullTime('DE-BE', '2200-01-01')),
      ['valid_from'],
    ],
    [
      'a timesheet in 0999',
      (e) =>
        as(e, 'post', '/timesheets', {
          user_id: e.userId,
          date: '0999-05-03',
          entries: [{ start: '08:00', end: '12:00', category: 'normal' }],
        }),
      ['date'],
    ],
    [
      'a timesheet in 2200',
      (e) =>
        as(e, 'post', '/timesheets', {
          user_id: e.userId,
          date: '2200-01-01',
          entries: [{ start: '08:00', end: '12:00', category: 'normal' }],
        }),
      ['date'],
    ],
    [
      'a leave from 1899',
      (e) =>
        as(e, 'post', '/leaves', { user_id: e.userId, type: 'sick', start_date: '1899-12-31', end_date: '1900-01-02' }),
      ['start_date'],
    ],
    [
      'a leave until 2200',
      (e) =>
        as(e, 'post', '/leaves', { user_id: e.userId, type: 'sick', start_date: '2199-12-31', end_date: '2200-01-01' }),
      ['end_date'],
    ],
    ['timesheets listed from 1899', (e) => as(e, 'get', '/timesheets?from=1899-12-31'), ['from']],
    ['leaves listed to 2200', (e) => as(e, 'get', '/leaves?to=2200-01-01'), ['to']],
    [
      'a working-time record from 0001',
      (e) => as(e, 'get', `/employees/${e.id}/working-time?from=0001-01-01&to=0001-06-30`),
      ['from', 'to'],
    ],
    ['a working-time record to 2200', (e) => as(e, 'get', `/employees/${e.id}/working-time?to=2200-01-01`), ['to']],
    ['a time account of 9999-12', (e) => as(e, 'get', `/employees/${e.id}/time-account?period=9999-12`), ['period']],
    ['a time account of 1899-12', (e) => as(e, 'get', `/employees/${e.id}/time-account?period=1899-12`), ['period']],
    ['a payroll export of 2200-01', (e) => as(withPayroll(e), 'get', '/exports/payroll?period=2200-01'), ['period']],
    ['a leave account of 1899', (e) => as(e, 'get', `/employees/${e.id}/leave-account?year=1899`), ['year']],
    ['a leave account of 2200', (e) => as(e, 'get', `/employees/${e.id}/leave-account?year=2200`), ['year']],
    [
      'a leave adjustment of 2200',
      (e) => as(e, 'post', `/employees/${e.id}/leave-adjustments`, { year: 2200, days: 1, reason: 'x' }),
      ['year'],
    ],
  ];

  test.each(cases)(
    'When the request has %s, then it answers 400 naming the field and stores nothing',
    async (_case, send, fields) => {
      const e = await employeeWith(hr, { start_date: '2026-01-01' }, [fullTime('DE-BE', '2026-01-01')]);
      const before = await hr.db.$queryRaw<{ rows: string }[]>`
      SELECT (SELECT count(*) FROM employees WHERE tenant_id = ${e.tenantId}::uuid) + (SELECT count(*) FROM contracts WHERE tenant_id = ${e.tenantId}::uuid)
           + (SELECT count(*) FROM timesheets WHERE tenant_id = ${e.tenantId}::uuid) + (SELECT count(*) FROM leaves WHERE tenant_id = ${e.tenantId}::uuid)
           + (SELECT count(*) FROM leave_adjustments WHERE tenant_id = ${e.tenantId}::uuid) AS rows`;

      await expectRefused(await send(e), fields);

      const employee = (await as(e, 'get', `/employees/${e.id}`)).body;
      expect(employee.employment).toEqual({ start_date: '2026-01-01', end_date: null });
      const after = await hr.db.$queryRaw<{ rows: string }[]>`
      SELECT (SELECT count(*) FROM employees WHERE tenant_id = ${e.tenantId}::uuid) + (SELECT count(*) FROM contracts WHERE tenant_id = ${e.tenantId}::uuid)
           + (SELECT count(*) FROM timesheets WHERE tenant_id = ${e.tenantId}::uuid) + (SELECT count(*) FROM leaves WHERE tenant_id = ${e.tenantId}::uuid)
           + (SELECT count(*) FROM leave_adjustments WHERE tenant_id = ${e.tenantId}::uuid) AS rows`;
      expect(after).toEqual(before);
    },
  );
});

describe('The first and the last day hr takes', () => {
  test('When an employee is employed from 1900-01-01 and works and takes leave on the first and the last days, then every route answers for them', async () => {
    const e = withPayroll(await employeeWith(hr, { start_date: '1900-01-01' }, [fullTime('DE-BE', '1900-01-01')]));
    const day = { start: '08:00', end: '12:00', category: 'normal' };

    const first = await as(e, 'post', '/timesheets', { user_id: e.userId, date: '1900-01-02', entries: [day] });
    expect(first.status).toBe(201);
    const last = await as(e, 'post', '/timesheets', { user_id: e.userId, date: '2199-12-31', entries: [day] });
    expect(last.status).toBe(201);
    expect((await as(e, 'post', '/timesheets', { user_id: e.userId, date: '1900-01-01', entries: [day] })).status).toBe(
      201,
    );
    expect(
      (
        await as(e, 'post', '/leaves', {
          user_id: e.userId,
          type: 'vacation',
          start_date: '1900-01-03',
          end_date: '1900-01-05',
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await as(e, 'post', '/leaves', {
          user_id: e.userId,
          type: 'sick',
          start_date: '2199-12-30',
          end_date: '2199-12-31',
        })
      ).status,
    ).toBe(201);
    expect((await as(e, 'post', `/employees/${e.id}/contracts`, fullTime('DE-BY', '2199-12-31'))).status).toBe(201);
    for (const year of [1900, 2199]) {
      expect(
        (await as(e, 'post', `/employees/${e.id}/leave-adjustments`, { year, days: 1, reason: 'edge' })).status,
      ).toBe(201);
      const account = await as(e, 'get', `/employees/${e.id}/leave-account?year=${year}`);
      expect(account.status).toBe(200);
      expect(account.body.year).toBe(year);
    }
    expect((await as(e, 'get', `/employees/${e.id}/time-account?period=1900-01`)).body).toMatchObject({
      period: '1900-01',
      worked_minutes: 480,
    });
    expect((await as(e, 'get', `/employees/${e.id}/time-account?period=2199-12`)).body).toMatchObject({
      period: '2199-12',
      worked_minutes: 240,
    });
    expect(
      (await as(e, 'get', `/employees/${e.id}/working-time?from=1900-01-01&to=1900-12-31`)).body.days,
    ).toHaveLength(2);
    expect((await as(e, 'get', `/employees/${e.id}/working-time?to=2199-12-31`)).body.days).toHaveLength(1);
    expect((await as(e, 'get', '/timesheets?from=1900-01-01&to=2199-12-31')).body.pagination.total).toBe(3);
    expect((await as(e, 'get', '/leaves?from=1900-01-01&to=2199-12-31')).body.pagination.total).toBe(2);
    for (const period of ['1900-01', '2199-12']) {
      const file = await as(e, 'get', `/exports/payroll?period=${period}`);
      expect(file.status).toBe(200);
      expect(file.text.split('\r\n').length).toBeGreaterThan(2);
    }
  });
});

describe('The OpenAPI document', () => {
  type Json = Record<string, any>;

  /** Every schema a request can carry (parameters and bodies), `$ref`s followed, with the path to it. */
  function requestSchemas(document: Json): [string, Json][] {
    const found: [string, Json][] = [];
    const seen = new Set<Json>();
    const walk = (where: string, schema: Json | undefined) => {
      if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
      seen.add(schema);
      if (typeof schema.$ref === 'string')
        return walk(where, document.components.schemas[schema.$ref.split('/').pop() as string]);
      found.push([where, schema]);
      for (const [name, property] of Object.entries<Json>(schema.properties ?? {})) walk(`${where}.${name}`, property);
      for (const key of ['items', 'not']) walk(`${where}[]`, schema[key]);
      for (const key of ['anyOf', 'oneOf', 'allOf']) for (const branch of schema[key] ?? []) walk(where, branch);
    };
    for (const [path, methods] of Object.entries<Json>(document.paths)) {
      for (const [method, operation] of Object.entries<Json>(methods)) {
        // A parameter's description is the parameter's, beside its schema.
        for (const parameter of operation.parameters ?? [])
          walk(`${method} ${path} ${parameter.name}`, { ...parameter.schema, description: parameter.description });
        for (const media of Object.values<Json>(operation.requestBody?.content ?? {}))
          walk(`${method} ${path} body`, media.schema);
      }
    }
    return found;
  }

  test('When it is read, then every day, month and year a request takes is bounded to 1900–2199, by pattern or minimum and maximum, and says so', async () => {
    const document = (await request(hr.app).get(`${API}/openapi.json`).expect(200)).body;
    const schemas = requestSchemas(document);
    const days = schemas.filter(([, schema]) => schema.format === 'date' || schema.format === 'year-month');
    const years = schemas.filter(([where]) => /\byear$/.test(where));
    expect(days.length).toBeGreaterThan(15);
    expect(years.length).toBeGreaterThanOrEqual(2);
    for (const [where, schema] of days) {
      expect({ where, pattern: schema.pattern, says: /1900–2199/.test(schema.description ?? '') }).toEqual({
        where,
        pattern: YEARS_PATTERN,
        says: true,
      });
    }
    for (const [where, schema] of years)
      expect({ where, minimum: schema.minimum, maximum: schema.maximum }).toEqual({
        where,
        minimum: 1900,
        maximum: 2199,
      });
  });
});
