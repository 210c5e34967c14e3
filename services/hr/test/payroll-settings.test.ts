import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { startHr, type TestHr } from './support/hr';

const SETTINGS = '/api/v1/payroll/settings';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

/** The documented defaults (GET /payroll/settings before any PUT), written out by hand. */
const DEFAULT_WAGE_TYPES: Record<string, string> = JSON.parse(
  readFileSync(path.join(__dirname, 'fixtures', 'default-wage-types.json'), 'utf8'),
);
/** The documented default Bearbeitungsschlüssel: 1 (hours) for the timesheet categories, 2 (days) for the leave types. */
const DEFAULT_BS_NR = {
  normal: 1,
  overtime: 1,
  on_call: 1,
  travel: 1,
  training: 1,
  standby: 1,
  vacation: 2,
  sick: 2,
  unpaid: 2,
  parental: 2,
  special: 2,
};

/** A caller of its own: a fresh tenant, with read and write rights on payroll by default. */
function newCaller(scope = 'read:payroll write:hr') {
  const tenantId = randomUUID();
  return { tenantId, auth: `Bearer ${hr.token({ tenant_id: tenantId, scope })}` };
}

function settingsInput(
  overrides: {
    datev?: Record<string, unknown>;
    wage_types?: Record<string, unknown>;
    bs_nr?: Record<string, unknown>;
  } = {},
) {
  return {
    datev: { consultant_number: '1234567', client_number: '12345', ...overrides.datev },
    wage_types: { ...DEFAULT_WAGE_TYPES, overtime: '200', sick: '3', ...overrides.wage_types },
    bs_nr: { ...DEFAULT_BS_NR, ...overrides.bs_nr },
  };
}

const stored = (tenantId: string) => hr.db.payrollSettings.findUnique({ where: { tenantId } });

function expectProblem(response: request.Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    status,
    type: `urn:msp:problem:${type}`,
    request_id: response.headers['x-request-id'],
  });
}

describe('GET /payroll/settings', () => {
  test('When the tenant never saved settings, then it answers the documented default wage types and no DATEV numbers', async () => {
    const caller = newCaller('read:payroll');

    const response = await request(hr.app).get(SETTINGS).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      datev: { consultant_number: null, client_number: null },
      wage_types: DEFAULT_WAGE_TYPES,
      bs_nr: DEFAULT_BS_NR,
    });
    expect(await stored(caller.tenantId)).toBeNull();
  });

  test('When the tenant saved settings, then it answers them, and another tenant still sees the defaults', async () => {
    const caller = newCaller();
    await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(settingsInput()).expect(200);

    const own = await request(hr.app).get(SETTINGS).set('Authorization', caller.auth);
    const other = await request(hr.app).get(SETTINGS).set('Authorization', newCaller('read:payroll').auth);

    expect(own.status).toBe(200);
    expect(own.body).toEqual(settingsInput());
    expect(other.body).toEqual({
      datev: { consultant_number: null, client_number: null },
      wage_types: DEFAULT_WAGE_TYPES,
      bs_nr: DEFAULT_BS_NR,
    });
  });

  test.each([
    ['read:hr', 'read:payroll'],
    ['write:hr', 'read:payroll'],
  ])('When the token has %s only, then it answers 403 naming %s', async (scope, needed) => {
    const response = await request(hr.app).get(SETTINGS).set('Authorization', newCaller(scope).auth);

    expectProblem(response, 403, 'insufficient-scope');
    expect(response.headers['www-authenticate']).toBe(
      `Bearer realm="msp", error="insufficient_scope", scope="${needed}"`,
    );
  });

  test('When there is no token, then it answers 401', async () => {
    const response = await request(hr.app).get(SETTINGS);
    expectProblem(response, 401, 'invalid-token');
  });
});

describe('PUT /payroll/settings', () => {
  test("When complete settings are sent, then it answers 200 with them and stores them for the caller's tenant", async () => {
    const caller = newCaller();

    const response = await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(settingsInput());

    expect(response.status).toBe(200);
    expect(response.body).toEqual(settingsInput());
    expect(await stored(caller.tenantId)).toMatchObject({
      consultantNumber: '1234567',
      clientNumber: '12345',
      wageTypes: settingsInput().wage_types,
    });
  });

  test('When settings are sent again, then they replace the earlier ones as a whole', async () => {
    const caller = newCaller();
    await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(settingsInput()).expect(200);
    const second = settingsInput({
      datev: { consultant_number: '4321', client_number: '1' },
      wage_types: { overtime: '9999', sick: '0' },
    });

    const response = await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(second);

    expect(response.status).toBe(200);
    expect(response.body).toEqual(second);
    expect(await stored(caller.tenantId)).toMatchObject({
      consultantNumber: '4321',
      clientNumber: '1',
      wageTypes: second.wage_types,
    });
    expect(await hr.db.payrollSettings.count({ where: { tenantId: caller.tenantId } })).toBe(1);
  });

  test('When the DATEV numbers are null, then they are cleared and the wage types stored', async () => {
    const caller = newCaller();
    await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(settingsInput()).expect(200);

    const response = await request(hr.app)
      .put(SETTINGS)
      .set('Authorization', caller.auth)
      .send(settingsInput({ datev: { consultant_number: null, client_number: null } }));

    expect(response.status).toBe(200);
    expect(response.body.datev).toEqual({ consultant_number: null, client_number: null });
    expect(await stored(caller.tenantId)).toMatchObject({ consultantNumber: null, clientNumber: null });
  });

  test('When the consultant number has 4 digits and the client number 1, or 7 and 5, then both are accepted', async () => {
    const caller = newCaller();
    for (const datev of [
      { consultant_number: '1000', client_number: '1' },
      { consultant_number: '9999999', client_number: '99999' },
    ]) {
      const response = await request(hr.app)
        .put(SETTINGS)
        .set('Authorization', caller.auth)
        .send(settingsInput({ datev }));
      expect(response.status).toBe(200);
      expect(response.body.datev).toEqual(datev);
    }
  });

  const withoutNormal: Record<string, string> = { ...DEFAULT_WAGE_TYPES };
  delete withoutNormal.normal;
  test.each([
    [
      'a consultant number of 3 digits',
      { datev: { consultant_number: '123', client_number: '1' }, wage_types: DEFAULT_WAGE_TYPES },
      'datev.consultant_number',
    ],
    [
      'a consultant number of 8 digits',
      { datev: { consultant_number: '12345678', client_number: '1' }, wage_types: DEFAULT_WAGE_TYPES },
      'datev.consultant_number',
    ],
    [
      'a consultant number with a letter',
      { datev: { consultant_number: '12a45', client_number: '1' }, wage_types: DEFAULT_WAGE_TYPES },
      'datev.consultant_number',
    ],
    [
      'a client number of 6 digits',
      { datev: { consultant_number: '1234', client_number: '123456' }, wage_types: DEFAULT_WAGE_TYPES },
      'datev.client_number',
    ],
    [
      'an empty client number',
      { datev: { consultant_number: '1234', client_number: '' }, wage_types: DEFAULT_WAGE_TYPES },
      'datev.client_number',
    ],
    [
      'a numeric client number',
      { datev: { consultant_number: '1234', client_number: 12 }, wage_types: DEFAULT_WAGE_TYPES },
      'datev.client_number',
    ],
    [
      'a wage type of 5 digits',
      {
        datev: { consultant_number: '1234', client_number: '1' },
        wage_types: { ...DEFAULT_WAGE_TYPES, travel: '12345' },
      },
      'wage_types.travel',
    ],
    [
      'an empty wage type',
      { datev: { consultant_number: '1234', client_number: '1' }, wage_types: { ...DEFAULT_WAGE_TYPES, sick: '' } },
      'wage_types.sick',
    ],
    [
      'a wage type with a sign',
      { datev: { consultant_number: '1234', client_number: '1' }, wage_types: { ...DEFAULT_WAGE_TYPES, unpaid: '-1' } },
      'wage_types.unpaid',
    ],
    [
      'a missing wage type',
      { datev: { consultant_number: '1234', client_number: '1' }, wage_types: withoutNormal },
      'wage_types.normal',
    ],
    [
      'an unknown wage type',
      { datev: { consultant_number: '1234', client_number: '1' }, wage_types: { ...DEFAULT_WAGE_TYPES, bonus: '1' } },
      'wage_types.bonus',
    ],
    [
      'a missing client number',
      { datev: { consultant_number: '1234' }, wage_types: DEFAULT_WAGE_TYPES },
      'datev.client_number',
    ],
    ['a missing datev', { wage_types: DEFAULT_WAGE_TYPES }, 'datev'],
    ['missing wage_types', { datev: { consultant_number: '1234', client_number: '1' } }, 'wage_types'],
    ['an unknown field', { ...settingsInput(), tenant_id: randomUUID() }, 'tenant_id'],
  ])('When the body has %s, then it answers 400 naming the field and changes nothing', async (_case, body, field) => {
    const caller = newCaller();
    await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(settingsInput()).expect(200);

    const response = await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(body);

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    expect(await stored(caller.tenantId)).toMatchObject({
      consultantNumber: '1234567',
      clientNumber: '12345',
      wageTypes: settingsInput().wage_types,
    });
  });

  test('When bs_nr names some categories, then they are stored and the others keep their defaults; without bs_nr all are defaults', async () => {
    const caller = newCaller();
    const body = {
      datev: settingsInput().datev,
      wage_types: settingsInput().wage_types,
      bs_nr: { normal: 7, vacation: 30, standby: 4 },
    };

    const response = await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(body);

    expect(response.status).toBe(200);
    expect(response.body.bs_nr).toEqual({ ...DEFAULT_BS_NR, normal: 7, vacation: 30, standby: 4 });
    expect((await stored(caller.tenantId))!.bsNumbers).toEqual({
      ...DEFAULT_BS_NR,
      normal: 7,
      vacation: 30,
      standby: 4,
    });
    expect((await request(hr.app).get(SETTINGS).set('Authorization', caller.auth)).body.bs_nr).toEqual(
      response.body.bs_nr,
    );

    const again = await request(hr.app)
      .put(SETTINGS)
      .set('Authorization', caller.auth)
      .send({ datev: body.datev, wage_types: body.wage_types });
    expect(again.body.bs_nr).toEqual(DEFAULT_BS_NR);
  });

  test("When wage_types leaves out standby (a client of the ten earlier categories), then it is accepted with standby's default 1250", async () => {
    const caller = newCaller();
    const tenTypes: Record<string, string> = { ...settingsInput().wage_types };
    delete tenTypes.standby;

    const response = await request(hr.app)
      .put(SETTINGS)
      .set('Authorization', caller.auth)
      .send({ datev: settingsInput().datev, wage_types: tenTypes });

    expect(response.status).toBe(200);
    expect(response.body.wage_types).toEqual({ ...tenTypes, standby: '1250' });
  });

  test.each([
    ['zero', 0],
    ['negative', -1],
    ['a fraction', 1.5],
    ['a string', '1'],
    ['null', null],
    ['over 9999', 10000],
  ])('When a bs_nr is %s, then it answers 400 naming it and changes nothing', async (_case, value) => {
    const caller = newCaller();
    await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(settingsInput()).expect(200);

    const response = await request(hr.app)
      .put(SETTINGS)
      .set('Authorization', caller.auth)
      .send(settingsInput({ bs_nr: { sick: value } }));

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain('bs_nr.sick');
    expect((await stored(caller.tenantId))!.bsNumbers).toEqual(DEFAULT_BS_NR);
  });

  test('When bs_nr names an unknown category, then it answers 400 naming it', async () => {
    const caller = newCaller();
    const response = await request(hr.app)
      .put(SETTINGS)
      .set('Authorization', caller.auth)
      .send(settingsInput({ bs_nr: { bonus: 1 } }));
    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain('bs_nr.bonus');
    expect(await stored(caller.tenantId)).toBeNull();
  });

  test('When the body is not JSON, then it answers 400 and stores nothing', async () => {
    const caller = newCaller();
    const response = await request(hr.app)
      .put(SETTINGS)
      .set('Authorization', caller.auth)
      .set('Content-Type', 'application/json')
      .send('{"datev":');
    expect(response.status).toBe(400);
    expect(await stored(caller.tenantId)).toBeNull();
  });

  test.each([
    ['write:hr', 'write:hr read:payroll'],
    ['read:payroll', 'write:hr read:payroll'],
    ['read:hr read:payroll', 'write:hr read:payroll'],
  ])('When the token has %s only, then it answers 403 naming both scopes and stores nothing', async (scope, needed) => {
    const caller = newCaller(scope);

    const response = await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(settingsInput());

    expectProblem(response, 403, 'insufficient-scope');
    expect(response.headers['www-authenticate']).toBe(
      `Bearer realm="msp", error="insufficient_scope", scope="${needed}"`,
    );
    expect(response.body.detail).toBe('The access token lacks the scopes "write:hr" and "read:payroll".');
    expect(await stored(caller.tenantId)).toBeNull();
  });

  test('When the token has admin:tenant, then it may write the settings', async () => {
    const caller = newCaller('admin:tenant');

    const response = await request(hr.app).put(SETTINGS).set('Authorization', caller.auth).send(settingsInput());

    expect(response.status).toBe(200);
    expect(await stored(caller.tenantId)).not.toBeNull();
  });
});

describe('API description', () => {
  test('When the OpenAPI document is read, then the settings routes name their scopes and the full-replace body', async () => {
    const doc = (await request(hr.app).get('/api/v1/openapi.json').expect(200)).body;

    expect(doc.paths['/payroll/settings'].get.security).toEqual([{ oauth2: ['read:payroll'] }]);
    expect(doc.paths['/payroll/settings'].put.security).toEqual([{ oauth2: ['write:hr', 'read:payroll'] }]);
    expect(doc.paths['/payroll/settings'].put.description).toContain(
      'Requires scopes `write:hr` and `read:payroll` (or `admin:tenant`).',
    );
    const body = doc.components.schemas.PutPayrollSettingsRequest;
    expect(body.required.sort()).toEqual(['datev', 'wage_types']);
    // `standby` came later: a client that sends the ten earlier categories keeps working.
    expect(body.properties.wage_types.required.sort()).toEqual(
      Object.keys(DEFAULT_WAGE_TYPES)
        .filter((key) => key !== 'standby')
        .sort(),
    );
    expect(body.properties.wage_types.properties.normal.pattern).toBe('^[0-9]{1,4}$');
    expect(body.properties.bs_nr.properties.normal).toMatchObject({ type: 'integer', minimum: 1 });
    expect(body.properties.bs_nr.required).toBeUndefined();
  });
});
