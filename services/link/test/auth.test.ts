import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describeTokenVerification, expectInvalidToken } from '@msp/testkit';
import { startLink, type TestLink } from './support/link';

const TENANTS = '/api/v1/tenants';
const ME = '/api/v1/me';

let link: TestLink;

beforeAll(async () => {
  link = await startLink();
});
afterAll(() => link.close());

const bearer = (token: string) => `Bearer ${token}`;

describeTokenVerification({
  route: '/api/v1/tenants',
  start: ({ jwksRefetchCooldownMs }) => startLink({ settings: { jwksRefetchCooldownMs } }),
});

describe('When a valid token is presented', () => {
  test('When it has admin:tenant, then GET /tenants answers 200', async () => {
    const response = await request(link.app)
      .get(TENANTS)
      .set('Authorization', bearer(link.token({ scope: 'admin:tenant' })));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } });
  });

  test.each(['read:hr write:hr read:tickets write:tickets read:users read:payroll', ''])(
    'When it lacks admin:tenant (scope "%s"), then it gets 403 insufficient_scope naming admin:tenant',
    async (scope) => {
      const response = await request(link.app)
        .get(TENANTS)
        .set('Authorization', bearer(link.token({ scope })));
      expect(response.status).toBe(403);
      expect(response.headers['www-authenticate']).toBe(
        'Bearer realm="msp", error="insufficient_scope", scope="admin:tenant"',
      );
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({
        type: 'urn:msp:problem:insufficient-scope',
        status: 403,
        required_scope: 'admin:tenant',
      });
    },
  );

  test('When any valid token asks GET /me, then it describes the caller', async () => {
    const tenantId = randomUUID();
    const token = link.token({ sub: 'crm-sync', tenant_id: tenantId, scope: 'read:tickets' }, { expiresInSec: 600 });
    const response = await request(link.app).get(ME).set('Authorization', bearer(token));

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
    expectInvalidToken(await request(link.app).get(ME));
  });
});
