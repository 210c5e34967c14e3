import { randomInt, randomUUID } from 'node:crypto';
import request from 'supertest';
import { seedWebhook } from '@msp/testkit';
import type { TestHr } from './hr';

// Unique within the run, so no two employees of a test collide by chance.
let nextPersonnelNumber = randomInt(10_000, 90_000);

/** Registers an employee (a fresh helpdesk user) in the tenant through the API; answers its user_id. */
export async function addEmployee(hr: TestHr, tenantId: string): Promise<string> {
  const userId = randomUUID();
  const response = await request(hr.app)
    .post('/api/v1/employees')
    .set('Authorization', `Bearer ${hr.token({ tenant_id: tenantId, scope: 'write:hr' })}`)
    .send({ user_id: userId, personnel_number: String(nextPersonnelNumber++), name: 'Erika Mustermann' });
  expect(response.status).toBe(201);
  return userId;
}

/** A caller of its own (a fresh tenant, a token with `scope` and any other `claims`) with one employee. */
export async function newCallerWithEmployee(
  hr: TestHr,
  scope = 'read:hr write:hr',
  claims: Record<string, unknown> = {},
) {
  const tenantId = randomUUID();
  const auth = `Bearer ${hr.token({ ...claims, tenant_id: tenantId, scope })}`;
  return { tenantId, auth, userId: await addEmployee(hr, tenantId) };
}

export type CallerWithEmployee = Awaited<ReturnType<typeof newCallerWithEmployee>>;

/** An RFC 9457 problem document of this status and `urn:msp:problem:<type>`, carrying the request id. */
export function expectProblem(response: request.Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    status,
    type: `urn:msp:problem:${type}`,
    request_id: response.headers['x-request-id'],
  });
}

/**
 * One of every resource hr keeps, in the tenant of `auth` (every scope, `admin:tenant` included),
 * for the suites that walk every route: an employee with a timesheet and a leave, a webhook with a
 * delivery.
 */
export async function seedEveryResource(hr: TestHr, auth: string): Promise<void> {
  const userId = randomUUID();
  const post = (path: string, body: object) =>
    request(hr.app).post(`/api/v1${path}`).set('Authorization', auth).send(body).expect(201);
  await post('/employees', { user_id: userId, personnel_number: '4711', name: 'Erika Mustermann' });
  await post('/timesheets', {
    user_id: userId,
    date: '2026-11-02',
    entries: [{ start: '08:00', end: '12:00', category: 'normal' }],
  });
  await post('/leaves', { user_id: userId, type: 'vacation', start_date: '2026-12-21', end_date: '2026-12-23' });
  await seedWebhook(hr.app, auth);
}
