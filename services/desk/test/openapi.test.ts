import type { Response } from 'supertest';
import { lintOpenApi } from '@msp/testkit';
import { api, type Api } from './support/api';
import { startDesk, type TestDesk } from './support/desk';
import { createConformanceChecker } from '@msp/testkit';

let desk: TestDesk;
let http: Api;

beforeAll(async () => {
  desk = await startDesk();
  http = api(desk);
});
afterAll(() => desk.close());

test("When the served document is linted with Redocly's recommended rules, then there is no error", async () => {
  const served = await http.get('/api/v1/openapi.json').expect(200);
  expect(await lintOpenApi(served.body)).toEqual([]);
}, 60_000);

test('When the document is read, then every helpdesk route is in it with its scope, parameters, body and errors', () => {
  const paths = desk.openapi.paths as Record<string, Record<string, any>>;
  const expected: [string, string, string | null, number[]][] = [
    ['/tickets', 'get', 'read:tickets', [200, 400, 401, 403]],
    ['/tickets', 'post', 'write:tickets', [201, 400, 401, 403, 415, 422]],
    ['/tickets/{id}', 'get', 'read:tickets', [200, 401, 403, 404]],
    ['/tickets/{id}', 'patch', 'write:tickets', [200, 400, 401, 403, 404, 422]],
    ['/tickets/{id}/comments', 'get', 'read:tickets', [200, 400, 401, 403, 404]],
    ['/tickets/{id}/comments', 'post', 'write:tickets', [201, 400, 401, 403, 404, 422]],
    ['/tickets/{id}/comments/{comment_id}', 'get', 'read:tickets', [200, 401, 403, 404]],
    ['/clients', 'get', 'read:tickets', [200, 400, 401, 403]],
    ['/clients', 'post', 'write:tickets', [201, 400, 401, 403, 409]],
    ['/clients/{id}', 'get', 'read:tickets', [200, 401, 403, 404]],
    ['/clients/{id}', 'patch', 'write:tickets', [200, 400, 401, 403, 404, 409]],
    ['/users', 'get', 'read:users', [200, 400, 401, 403]],
    ['/users', 'post', 'admin:tenant', [201, 400, 401, 403, 409]],
    ['/users/{id}', 'get', 'read:users', [200, 401, 403, 404]],
    ['/users/{id}', 'delete', 'admin:tenant', [204, 401, 403, 404]],
  ];
  for (const [route, method, scope, statuses] of expected) {
    const operation = paths[route]?.[method];
    expect({ route, method, found: Boolean(operation) }).toEqual({ route, method, found: true });
    expect(operation.security).toEqual([{ oauth2: [scope] }]);
    for (const status of [...statuses, 429, 500]) expect(Object.keys(operation.responses)).toContain(String(status));
    if (method === 'post' && statuses.includes(201)) expect(operation.responses['201'].headers.Location).toBeDefined();
    if (method === 'get' && !route.endsWith('}')) {
      expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(
        expect.arrayContaining(['page', 'per_page']),
      );
      expect(operation.responses['200'].headers.Link).toBeDefined();
    }
    if (['post', 'patch'].includes(method))
      expect(operation.requestBody.content['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\//);
  }
  const filters = paths['/tickets']!.get.parameters.map((p: { name: string }) => p.name);
  expect(filters).toEqual(expect.arrayContaining(['status', 'priority', 'client_id', 'assignee_id', 'category']));
  const changes = desk.openapi.components.schemas.TicketChanges;
  expect(changes).toMatchObject({ minProperties: 1, additionalProperties: false });
  expect(desk.openapi.components.schemas.TicketRuleProblem.properties.allowed_transitions).toBeDefined();
});

describe('The conformance check every test runs', () => {
  const fake = (status: number, body: unknown, contentType = 'application/json') =>
    ({ status, body, text: JSON.stringify(body), headers: { 'content-type': contentType } }) as unknown as Response;
  const ticket = {
    id: '00000000-0000-4000-8000-000000000000',
    number: 1,
    title: 't',
    description: '',
    priority: 'normal',
    category: 'other',
    status: 'open',
    client_id: '00000000-0000-4000-8000-000000000001',
    assignee_id: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    resolved_at: null,
    closed_at: null,
    merged_into_id: null,
    merged_ids: [],
    requester: null,
    cc: [],
    cc_suggested: [],
    source: 'api',
    mailbox_id: null,
    follow_up_of: null,
    attachments: [],
    sla: null,
  };

  test('When a response matches its operation, then it passes', () => {
    const checker = createConformanceChecker(desk.openapi);
    expect(() => checker.check('get', `/api/v1/tickets/${ticket.id}`, fake(200, ticket))).not.toThrow();
  });

  test('When a status is undocumented, the body breaks the schema or the content type is wrong, then it fails', () => {
    const checker = createConformanceChecker(desk.openapi);
    const url = `/api/v1/tickets/${ticket.id}`;
    expect(() => checker.check('get', url, fake(409, ticket))).toThrow(/status 409 is not documented/);
    expect(() => checker.check('get', url, fake(200, { ...ticket, status: 'done' }))).toThrow(
      /does not match the schema/,
    );
    expect(() => checker.check('get', url, fake(200, { ...ticket, extra: 1 }))).toThrow(/does not match the schema/);
    expect(() => checker.check('get', url, fake(200, ticket, 'text/html'))).toThrow(/content type/);
    expect(() => checker.check('get', '/api/v1/nowhere', fake(200, {}))).toThrow(/no documented operation/);
  });
});
