import { randomInt, randomUUID } from 'node:crypto';
import request from 'supertest';
import { startHr, type TestHr } from './support/hr';

const EMPLOYEES = '/api/v1/employees';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

/** A caller of its own: a fresh tenant. */
function newCaller(scope = 'read:hr write:hr') {
  const tenantId = randomUUID();
  return { tenantId, auth: `Bearer ${hr.token({ tenant_id: tenantId, scope })}` };
}

// Unique within the run, so no two employees of a test collide by chance.
let nextPersonnelNumber = randomInt(10_000, 90_000);
const personnelNumber = () => String(nextPersonnelNumber++);

function employeeInput(overrides: Record<string, unknown> = {}) {
  return { user_id: randomUUID(), personnel_number: personnelNumber(), name: 'Erika Mustermann', ...overrides };
}

type EmployeeJson = {
  id: string;
  user_id: string;
  personnel_number: string;
  name: string;
  created_at: string;
  updated_at: string;
};

const storedCount = (tenantId: string) => hr.db.employee.count({ where: { tenantId } });
const stored = (id: string) => hr.db.employee.findUniqueOrThrow({ where: { id } });

async function register(auth: string, overrides: Record<string, unknown> = {}): Promise<EmployeeJson> {
  const response = await request(hr.app).post(EMPLOYEES).set('Authorization', auth).send(employeeInput(overrides));
  expect(response.status).toBe(201);
  return response.body;
}

function expectProblem(response: request.Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    status,
    type: `urn:msp:problem:${type}`,
    request_id: response.headers['x-request-id'],
  });
}

describe('POST /employees', () => {
  test("When a valid employee is registered, then it answers 201 with Location and the employee, and stores it in the caller's tenant", async () => {
    const caller = newCaller();
    const input = employeeInput({ personnel_number: '00042' });

    const response = await request(hr.app).post(EMPLOYEES).set('Authorization', caller.auth).send(input);

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${EMPLOYEES}/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: input.user_id,
      personnel_number: '00042',
      name: input.name,
      employment: { start_date: null, end_date: null },
      current_contract: null,
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(Math.abs(Date.parse(response.body.created_at) - Date.now())).toBeLessThan(60_000);
    expect(await stored(response.body.id)).toMatchObject({
      tenantId: caller.tenantId,
      userId: input.user_id,
      personnelNumber: '00042',
      name: input.name,
    });
  });

  test('When the personnel number has 20 digits, then it is accepted', async () => {
    const response = await request(hr.app)
      .post(EMPLOYEES)
      .set('Authorization', newCaller().auth)
      .send(employeeInput({ personnel_number: '12345678901234567890' }));
    expect(response.status).toBe(201);
  });

  test('When the user already has an employee record in the tenant, then it answers 409 naming user_id and stores nothing', async () => {
    const caller = newCaller();
    const first = await register(caller.auth);

    const response = await request(hr.app)
      .post(EMPLOYEES)
      .set('Authorization', caller.auth)
      .send(employeeInput({ user_id: first.user_id }));

    expectProblem(response, 409, 'conflict');
    expect(response.body.errors).toEqual([{ field: 'user_id', message: 'already has an employee record' }]);
    expect(await storedCount(caller.tenantId)).toBe(1);
  });

  test('When the personnel number is taken in the tenant, then it answers 409 naming personnel_number and stores nothing', async () => {
    const caller = newCaller();
    const first = await register(caller.auth);

    const response = await request(hr.app)
      .post(EMPLOYEES)
      .set('Authorization', caller.auth)
      .send(employeeInput({ personnel_number: first.personnel_number }));

    expectProblem(response, 409, 'conflict');
    expect(response.body.detail).toContain(first.personnel_number);
    expect(response.body.errors).toEqual([{ field: 'personnel_number', message: 'is already taken' }]);
    expect(await storedCount(caller.tenantId)).toBe(1);
  });

  test('When another tenant uses the same user and personnel number, then both records stand', async () => {
    const input = employeeInput();
    const one = newCaller();
    const other = newCaller();

    await register(one.auth, input);
    await register(other.auth, input);

    expect(
      await hr.db.employee.count({ where: { userId: input.user_id, personnelNumber: input.personnel_number } }),
    ).toBe(2);
  });

  test.each([
    ['an unknown field', { tenant_id: randomUUID() }, 'tenant_id', 'is not a known field'],
    [
      'a personnel number with letters',
      { personnel_number: 'A-1001' },
      'personnel_number',
      'must match pattern "^[0-9]{1,20}$"',
    ],
    [
      'a personnel number of 21 digits',
      { personnel_number: '123456789012345678901' },
      'personnel_number',
      'must NOT have more than 20 characters',
    ],
    [
      'an empty personnel number',
      { personnel_number: '' },
      'personnel_number',
      'must NOT have fewer than 1 characters',
    ],
    ['a personnel number sent as a number', { personnel_number: 10042 }, 'personnel_number', 'must be of type string'],
    ['a user_id that is not a UUID', { user_id: 'erika' }, 'user_id', 'must be a valid uuid'],
    ['a name of the wrong type', { name: ['Erika'] }, 'name', 'must be of type string'],
    ['a name longer than 200 characters', { name: 'x'.repeat(201) }, 'name', 'must NOT have more than 200 characters'],
  ])(
    'When the body has %s, then it answers 400 naming the field and stores nothing',
    async (_case, overrides, field, message) => {
      const caller = newCaller();
      const response = await request(hr.app)
        .post(EMPLOYEES)
        .set('Authorization', caller.auth)
        .send(employeeInput(overrides));

      expectProblem(response, 400, 'validation-error');
      expect(response.body.errors).toEqual(expect.arrayContaining([{ field, message }]));
      expect(response.body.errors.every((e: { field: string }) => e.field === field)).toBe(true);
      expect(await storedCount(caller.tenantId)).toBe(0);
    },
  );

  test('When required fields are missing, then it answers 400 listing each of them', async () => {
    const caller = newCaller();
    const response = await request(hr.app).post(EMPLOYEES).set('Authorization', caller.auth).send({});

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual(
      expect.arrayContaining([
        { field: 'user_id', message: 'is required' },
        { field: 'personnel_number', message: 'is required' },
        { field: 'name', message: 'is required' },
      ]),
    );
    expect(response.body.errors).toHaveLength(3);
  });

  test('When the body is malformed JSON, then it answers 400 and stores nothing', async () => {
    const caller = newCaller();
    const response = await request(hr.app)
      .post(EMPLOYEES)
      .set('Authorization', caller.auth)
      .set('Content-Type', 'application/json')
      .send('{"name":');

    expectProblem(response, 400, 'malformed-body');
    expect(await storedCount(caller.tenantId)).toBe(0);
  });

  test('When the body is not JSON, then it answers 415 and stores nothing', async () => {
    const caller = newCaller();
    const response = await request(hr.app)
      .post(EMPLOYEES)
      .set('Authorization', caller.auth)
      .type('form')
      .send(employeeInput());

    expectProblem(response, 415, 'unsupported-media-type');
    expect(await storedCount(caller.tenantId)).toBe(0);
  });
});

describe('GET /employees/:id', () => {
  test('When the caller asks for its employee, then it answers 200 with it', async () => {
    const caller = newCaller();
    const created = await register(caller.auth);

    const response = await request(hr.app).get(`${EMPLOYEES}/${created.id}`).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.body).toEqual(created);
  });

  test('When the id belongs to another tenant, then it answers 404 as if it did not exist', async () => {
    const created = await register(newCaller().auth);

    const response = await request(hr.app).get(`${EMPLOYEES}/${created.id}`).set('Authorization', newCaller().auth);

    expectProblem(response, 404, 'not-found');
    expect(response.body.detail).toBe(`No employee ${created.id}.`);
  });

  test('When the id is unknown or not a UUID, then it answers 404', async () => {
    const caller = newCaller();
    expectProblem(
      await request(hr.app).get(`${EMPLOYEES}/${randomUUID()}`).set('Authorization', caller.auth),
      404,
      'not-found',
    );
    expectProblem(await request(hr.app).get(`${EMPLOYEES}/12345`).set('Authorization', caller.auth), 404, 'not-found');
  });
});

describe('PATCH /employees/:id', () => {
  test('When name and personnel number are changed, then it answers 200 with the change, stored, and a later updated_at', async () => {
    const caller = newCaller();
    const created = await register(caller.auth);
    const number = personnelNumber();

    const response = await request(hr.app)
      .patch(`${EMPLOYEES}/${created.id}`)
      .set('Authorization', caller.auth)
      .send({ name: 'Erika Musterfrau', personnel_number: number });

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      ...created,
      name: 'Erika Musterfrau',
      personnel_number: number,
      updated_at: expect.any(String),
    });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    expect(await stored(created.id)).toMatchObject({
      name: 'Erika Musterfrau',
      personnelNumber: number,
      userId: created.user_id,
    });
  });

  test('When only the name is sent, then the personnel number keeps its value', async () => {
    const caller = newCaller();
    const created = await register(caller.auth);

    const response = await request(hr.app)
      .patch(`${EMPLOYEES}/${created.id}`)
      .set('Authorization', caller.auth)
      .send({ name: 'E. Mustermann' });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: 'E. Mustermann', personnel_number: created.personnel_number });
  });

  test('When the personnel number is set to its own value, then it is no conflict', async () => {
    const caller = newCaller();
    const created = await register(caller.auth);

    const response = await request(hr.app)
      .patch(`${EMPLOYEES}/${created.id}`)
      .set('Authorization', caller.auth)
      .send({ personnel_number: created.personnel_number });

    expect(response.status).toBe(200);
  });

  test("When the personnel number is another employee's, then it answers 409 and changes nothing", async () => {
    const caller = newCaller();
    const taken = await register(caller.auth);
    const created = await register(caller.auth);

    const response = await request(hr.app)
      .patch(`${EMPLOYEES}/${created.id}`)
      .set('Authorization', caller.auth)
      .send({ name: 'Changed', personnel_number: taken.personnel_number });

    expectProblem(response, 409, 'conflict');
    expect(response.body.errors).toEqual([{ field: 'personnel_number', message: 'is already taken' }]);
    expect(await stored(created.id)).toMatchObject({ name: created.name, personnelNumber: created.personnel_number });
  });

  test.each([
    ['an empty body', {}, '(body)', 'must NOT have fewer than 1 properties'],
    ['user_id', { user_id: randomUUID() }, 'user_id', 'is not a known field'],
    [
      'a personnel number with letters',
      { personnel_number: '12a' },
      'personnel_number',
      'must match pattern "^[0-9]{1,20}$"',
    ],
    ['a null name', { name: null }, 'name', 'must be of type string'],
  ])('When the body has %s, then it answers 400 and changes nothing', async (_case, body, field, message) => {
    const caller = newCaller();
    const created = await register(caller.auth);

    const response = await request(hr.app)
      .patch(`${EMPLOYEES}/${created.id}`)
      .set('Authorization', caller.auth)
      .send(body);

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual([{ field, message }]);
    expect((await stored(created.id)).updatedAt.toISOString()).toBe(created.updated_at);
  });

  test('When the id belongs to another tenant, then it answers 404 and changes nothing', async () => {
    const created = await register(newCaller().auth);

    const response = await request(hr.app)
      .patch(`${EMPLOYEES}/${created.id}`)
      .set('Authorization', newCaller().auth)
      .send({ name: 'Hijacked' });

    expectProblem(response, 404, 'not-found');
    expect((await stored(created.id)).name).toBe(created.name);
  });

  test('When the id is unknown, then it answers 404', async () => {
    const response = await request(hr.app)
      .patch(`${EMPLOYEES}/${randomUUID()}`)
      .set('Authorization', newCaller().auth)
      .send({ name: 'Nobody' });
    expectProblem(response, 404, 'not-found');
  });

  test('When the token has read:hr only, then it answers 403 and changes nothing', async () => {
    const caller = newCaller();
    const created = await register(caller.auth);
    const reader = `Bearer ${hr.token({ tenant_id: caller.tenantId, scope: 'read:hr' })}`;

    const response = await request(hr.app)
      .patch(`${EMPLOYEES}/${created.id}`)
      .set('Authorization', reader)
      .send({ name: 'Changed' });

    expectProblem(response, 403, 'insufficient-scope');
    expect((await stored(created.id)).name).toBe(created.name);
  });
});

describe('GET /employees', () => {
  test('When the tenant has employees, then it lists only its own, newest first', async () => {
    const caller = newCaller();
    await register(newCaller().auth);
    const a = await register(caller.auth);
    const b = await register(caller.auth);
    const c = await register(caller.auth);

    const response = await request(hr.app).get(EMPLOYEES).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([c, b, a]);
    expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total: 3, total_pages: 1 });
  });

  test('When employees share a creation time, then the order is still stable (by id)', async () => {
    const caller = newCaller();
    const createdAt = new Date('2030-01-01T00:00:00.000Z');
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      await hr.db.employee.create({
        data: {
          id,
          tenantId: caller.tenantId,
          userId: randomUUID(),
          personnelNumber: personnelNumber(),
          name: 'Same time',
          createdAt,
        },
      });
    }

    const first = await request(hr.app).get(EMPLOYEES).query({ per_page: 2 }).set('Authorization', caller.auth);
    const second = await request(hr.app)
      .get(EMPLOYEES)
      .query({ per_page: 2, page: 2 })
      .set('Authorization', caller.auth);

    expect([...first.body.data, ...second.body.data].map((e: EmployeeJson) => e.id)).toEqual([...ids].sort().reverse());
  });

  test('When the list spans pages, then each page carries its slice, pagination and Link header', async () => {
    const caller = newCaller();
    const created: EmployeeJson[] = [];
    for (let i = 0; i < 5; i += 1) created.push(await register(caller.auth));
    const newestFirst = created.reverse().map((e) => e.id);

    const page2 = await request(hr.app)
      .get(EMPLOYEES)
      .query({ page: 2, per_page: 2 })
      .set('Authorization', caller.auth);

    expect(page2.status).toBe(200);
    expect(page2.body.data.map((e: EmployeeJson) => e.id)).toEqual(newestFirst.slice(2, 4));
    expect(page2.body.pagination).toEqual({ page: 2, per_page: 2, total: 5, total_pages: 3 });
    const links = page2.headers.link as string;
    expect(links).toMatch(/[?&]page=1[^>]*>; rel="first"/);
    expect(links).toMatch(/[?&]page=1[^>]*>; rel="prev"/);
    expect(links).toMatch(/[?&]page=3[^>]*>; rel="next"/);
    expect(links).toMatch(/[?&]page=3[^>]*>; rel="last"/);

    const first = await request(hr.app).get(EMPLOYEES).query({ per_page: 2 }).set('Authorization', caller.auth);
    expect(first.headers.link).not.toContain('rel="prev"');
  });

  test('When the page is past the end, then it answers 200 with no data and the real totals', async () => {
    const caller = newCaller();
    await register(caller.auth);

    const response = await request(hr.app)
      .get(EMPLOYEES)
      .query({ page: 3, per_page: 1 })
      .set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], pagination: { page: 3, per_page: 1, total: 1, total_pages: 1 } });
  });

  test.each([
    [{ page: 0 }, 'page', 'must be >= 1'],
    [{ page: '1.5' }, 'page', 'must be an integer'],
    [{ per_page: 0 }, 'per_page', 'must be >= 1'],
    [{ per_page: 101 }, 'per_page', 'must be <= 100'],
    [{ user_id: 'erika' }, 'user_id', 'must be a valid uuid'],
    [{ personnel_number: 'A1' }, 'personnel_number', 'must match pattern "^[0-9]{1,20}$"'],
    [{ department: 'IT' }, 'department', 'is not a known field'],
  ])('When the query is %o, then it answers 400 naming the parameter', async (query, field, message) => {
    const response = await request(hr.app).get(EMPLOYEES).query(query).set('Authorization', newCaller().auth);

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual([{ field, message }]);
  });

  test('When filtered by user_id or personnel_number, then only that employee is listed', async () => {
    const caller = newCaller();
    const wanted = await register(caller.auth);
    await register(caller.auth);

    const byUser = await request(hr.app)
      .get(EMPLOYEES)
      .query({ user_id: wanted.user_id })
      .set('Authorization', caller.auth);
    const byNumber = await request(hr.app)
      .get(EMPLOYEES)
      .query({ personnel_number: wanted.personnel_number })
      .set('Authorization', caller.auth);

    expect(byUser.body.data).toEqual([wanted]);
    expect(byNumber.body.data).toEqual([wanted]);
    expect(byNumber.body.pagination.total).toBe(1);
  });
});
