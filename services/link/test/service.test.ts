import request from 'supertest';
import { describeServiceOperations, EVENT_OPERATIONS, lintOpenApi } from '@msp/testkit';
import { startLink, type TestLink } from './support/link';

describeServiceOperations({
  service: 'link',
  route: '/api/v1/tenants',
  start: ({ databaseUrl, rateLimitPerMinute }) =>
    startLink({ databaseUrl, settings: rateLimitPerMinute ? { rateLimitPerMinute } : {} }),
});

let link: TestLink;

beforeAll(async () => {
  link = await startLink();
});
afterAll(() => link.close());

describe('API description', () => {
  test('When /api/v1/openapi.json is asked without a token, then it is OpenAPI 3.1 listing every route with its scope', async () => {
    const response = await request(link.app).get('/api/v1/openapi.json');

    expect(response.status).toBe(200);
    const doc = response.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Integration API (link)');
    expect(doc.info.description).toContain('admin:tenant');
    expect(doc.servers).toEqual([{ url: '/api/v1' }]);
    const operations = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      ([path, methods]) =>
        Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(operations.sort()).toEqual(
      [
        'GET /me getCaller',
        'GET /tenants listTenants',
        'GET /tenants/{id} getTenant',
        'POST /tenants registerTenant',
        'PATCH /tenants/{id} updateTenant',
        'GET /connectors listConnectors',
        'POST /connectors createConnector',
        'GET /connectors/{id} getConnector',
        'PATCH /connectors/{id} updateConnector',
        'DELETE /connectors/{id} deleteConnector',
        'POST /connectors/{id}/sync startSync',
        'GET /connectors/{id}/syncs listSyncs',
        'GET /connectors/{id}/syncs/{run_id} getSync',
        'GET /connectors/{id}/users listDirectoryUsers',
        'GET /connectors/{id}/groups listDirectoryGroups',
        'GET /connectors/{id}/health getConnectorHealth',
        ...EVENT_OPERATIONS,
      ].sort(),
    );
    expect(doc.paths['/tenants'].post.security).toEqual([{ oauth2: ['admin:tenant'] }]);
    expect(doc.paths['/tenants'].post.responses).toHaveProperty('409');
    expect(doc.paths['/tenants'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CreateTenantRequest',
    });
    expect(doc.components.schemas.Tenant.properties.status.enum).toEqual(['active', 'suspended']);
    expect(doc.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
      `${link.issuer.issuer}/auth/token`,
    );
  });

  test('When /api/v1/docs is asked without a token, then it is the Swagger UI reference page', async () => {
    const response = await request(link.app).get('/api/v1/docs');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.text).toContain('Integration API (link)');
    expect(response.text).toContain('docs/swagger-ui-bundle.js');
  });

  test("When the served document is linted with Redocly's recommended rules, then there is no error", async () => {
    const served = await request(link.app).get('/api/v1/openapi.json').expect(200);
    expect(await lintOpenApi(served.body)).toEqual([]);
  }, 60_000);
});
