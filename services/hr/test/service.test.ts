import request from 'supertest';
import { describeServiceOperations, EVENT_OPERATIONS, lintOpenApi } from '@msp/testkit';
import { startHr, type TestHr } from './support/hr';

describeServiceOperations({
  service: 'hr',
  route: '/api/v1/employees',
  start: ({ databaseUrl, rateLimitPerMinute }) =>
    startHr({ databaseUrl, settings: rateLimitPerMinute ? { rateLimitPerMinute } : {} }),
});

let hr: TestHr;

beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

describe('API description', () => {
  test('When /api/v1/openapi.json is asked without a token, then it is OpenAPI 3.1 listing every route with its scope', async () => {
    const response = await request(hr.app).get('/api/v1/openapi.json');

    expect(response.status).toBe(200);
    const doc = response.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('HR API (hr)');
    expect(doc.info.description).toContain('read:hr');
    expect(doc.servers).toEqual([{ url: '/api/v1' }]);
    const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      ([path, methods]) =>
        Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /me getCaller',
        'GET /employees listEmployees',
        'GET /employees/{id} getEmployee',
        'POST /employees createEmployee',
        'PATCH /employees/{id} updateEmployee',
        'GET /payroll/settings getPayrollSettings',
        'PUT /payroll/settings replacePayrollSettings',
        'GET /exports/payroll exportPayroll',
        'GET /timesheets listTimesheets',
        'GET /timesheets/{id} getTimesheet',
        'POST /timesheets createTimesheet',
        'PATCH /timesheets/{id} updateTimesheet',
        'DELETE /timesheets/{id} deleteTimesheet',
        'GET /leaves listLeaves',
        'GET /leaves/{id} getLeave',
        'POST /leaves createLeave',
        'PATCH /leaves/{id} updateLeave',
        'GET /employees/{id}/contracts listContracts',
        'POST /employees/{id}/contracts createContract',
        'GET /employees/{id}/leave-account getLeaveAccount',
        'GET /employees/{id}/time-account getTimeAccount',
        'GET /employees/{id}/working-time getWorkingTime',
        'POST /employees/{id}/leave-adjustments createLeaveAdjustment',
        'GET /leave/settings getLeaveSettings',
        'PUT /leave/settings replaceLeaveSettings',
        ...EVENT_OPERATIONS,
      ].sort(),
    );
    expect(doc.paths['/employees'].get.security).toEqual([{ oauth2: ['read:hr'] }]);
    expect(doc.paths['/employees'].post.security).toEqual([{ oauth2: ['write:hr'] }]);
    expect(doc.paths['/employees/{id}'].patch.security).toEqual([{ oauth2: ['write:hr'] }]);
    expect(doc.paths['/employees'].post.responses).toHaveProperty('409');
    expect(doc.paths['/timesheets'].get.security).toEqual([{ oauth2: ['read:hr'] }]);
    expect(doc.paths['/timesheets/{id}'].delete.security).toEqual([{ oauth2: ['write:hr'] }]);
    expect(Object.keys(doc.paths['/timesheets'].post.responses)).toEqual(
      expect.arrayContaining(['201', '400', '409', '422']),
    );
    expect(doc.paths['/leaves/{id}'].patch.security).toEqual([{ oauth2: ['write:hr'] }]);
    expect(doc.paths['/leaves/{id}'].patch.responses['422'].content['application/problem+json'].schema).toEqual({
      $ref: '#/components/schemas/LeaveRuleProblem',
    });
    expect(doc.paths['/employees/{id}'].patch.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/UpdateEmployeeRequest',
    });
    expect(doc.components.schemas.CreateEmployeeRequest.properties.personnel_number.pattern).toBe('^[0-9]{1,20}$');
    expect(doc.paths['/leave/settings'].put.security).toEqual([{ oauth2: ['admin:tenant'] }]);
    expect(doc.paths['/employees/{id}/leave-account'].get.security).toEqual([{ oauth2: ['read:hr'] }]);
    expect(
      doc.paths['/employees/{id}/contracts'].post.responses['422'].content['application/problem+json'].schema,
    ).toEqual({ $ref: '#/components/schemas/ContractRuleProblem' });
    expect(doc.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
      `${hr.issuer.issuer}/auth/token`,
    );
  });

  test('When /api/v1/docs is asked without a token, then it is the Swagger UI reference page', async () => {
    const response = await request(hr.app).get('/api/v1/docs');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.text).toContain('HR API (hr)');
    expect(response.text).toContain('docs/swagger-ui-bundle.js');
  });

  test("When the served document is linted with Redocly's recommended rules, then there is no error", async () => {
    const served = await request(hr.app).get('/api/v1/openapi.json').expect(200);
    expect(await lintOpenApi(served.body)).toEqual([]);
  }, 60_000);
});
