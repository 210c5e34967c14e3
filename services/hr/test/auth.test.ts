import { randomInt, randomUUID } from 'node:crypto';
import request from 'supertest';
import { describeTokenVerification, expectInvalidToken } from '@msp/testkit';
import { startHr, type TestHr } from './support/hr';

const EMPLOYEES = '/api/v1/employees';
const ME = '/api/v1/me';

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

const bearer = (token: string) => `Bearer ${token}`;

describeTokenVerification({
  route: '/api/v1/employees',
  start: ({ jwksRefetchCooldownMs }) => startHr({ settings: { jwksRefetchCooldownMs } }),
});

describe('When a valid token is presented', () => {
  const employee = () => ({
    user_id: randomUUID(),
    personnel_number: String(randomInt(1, 1e9)),
    name: 'Erika Mustermann',
  });

  test.each(['read:hr', 'admin:tenant', 'read:tickets read:hr'])(
    'When it has "%s", then GET /employees answers 200',
    async (scope) => {
      const response = await request(hr.app)
        .get(EMPLOYEES)
        .set('Authorization', bearer(hr.token({ scope })));
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } });
    },
  );

  test.each(['write:hr', 'admin:tenant'])('When it has "%s", then POST /employees answers 201', async (scope) => {
    const response = await request(hr.app)
      .post(EMPLOYEES)
      .set('Authorization', bearer(hr.token({ scope })))
      .send(employee());
    expect(response.status).toBe(201);
  });

  test.each([
    ['GET', 'read:hr', 'write:hr read:payroll read:tickets write:tickets read:users'],
    ['GET', 'read:hr', ''],
    ['POST', 'write:hr', 'read:hr read:payroll'],
  ])(
    'When %s /employees lacks %s (scope "%s"), then it gets 403 insufficient_scope naming it and stores nothing',
    async (method, needed, scope) => {
      const tenantId = randomUUID();
      const token = bearer(hr.token({ scope, tenant_id: tenantId }));
      const response =
        method === 'GET'
          ? await request(hr.app).get(EMPLOYEES).set('Authorization', token)
          : await request(hr.app).post(EMPLOYEES).set('Authorization', token).send(employee());

      expect(response.status).toBe(403);
      expect(response.headers['www-authenticate']).toBe(
        `Bearer realm="msp", error="insufficient_scope", scope="${needed}"`,
      );
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({
        type: 'urn:msp:problem:insufficient-scope',
        status: 403,
        required_scope: needed,
      });
      expect(await hr.db.employee.count({ where: { tenantId } })).toBe(0);
    },
  );

  test('When any valid token asks GET /me, then it describes the caller', async () => {
    const tenantId = randomUUID();
    const token = hr.token({ sub: 'crm-sync', tenant_id: tenantId, scope: 'read:tickets' }, { expiresInSec: 600 });
    const response = await request(hr.app).get(ME).set('Authorization', bearer(token));

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      client_id: 'crm-sync',
      tenant_id: tenantId,
      scopes: ['read:tickets'],
      expires_at: expect.any(String),
    });
    const secondsLeft = (Date.parse(response.body.expires_at) - Date.now()) / 1000;
    expect(secondsLeft).toBeGreaterThan(590);
    expect(secondsLeft).toBeLessThanOrEqual(600);
  });

  test('When GET /me is asked without a token, then it gets 401 invalid_token', async () => {
    expectInvalidToken(await request(hr.app).get(ME));
  });
});
