import { randomInt, randomUUID } from 'node:crypto';
import request from 'supertest';
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
export async function newCallerWithEmployee(hr: TestHr, scope = 'read:hr write:hr', claims: Record<string, unknown> = {}) {
  const tenantId = randomUUID();
  const auth = `Bearer ${hr.token({ ...claims, tenant_id: tenantId, scope })}`;
  return { tenantId, auth, userId: await addEmployee(hr, tenantId) };
}

export type CallerWithEmployee = Awaited<ReturnType<typeof newCallerWithEmployee>>;

/** An RFC 9457 problem document of this status and `urn:msp:problem:<type>`, carrying the request id. */
export function expectProblem(response: request.Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status, type: `urn:msp:problem:${type}`, request_id: response.headers['x-request-id'] });
}
