import { randomUUID } from 'node:crypto';
import { createLogger } from '@msp/http';
import { answeredIdempotencyRecord, connectedRedis, expectReplayOf } from '@msp/testkit';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { startHr, type TestHr } from './support/hr';

let hr: TestHr;
beforeAll(async () => {
  hr = await startHr();
});
afterAll(() => hr.close());

test(
  'When an employee is created twice with one Idempotency-Key, then the second answers the ' +
    'first again and one row is stored; another body with that key is 422',
  async () => {
    const auth = `Bearer ${hr.token()}`;
    const key = randomUUID();
    const body = { user_id: randomUUID(), personnel_number: '31337', name: 'Erika Mustermann' };
    const first = await request(hr.app)
      .post('/api/v1/employees')
      .set('Authorization', auth)
      .set('Idempotency-Key', key)
      .send(body);
    expect(first.status).toBe(201);
    const again = await request(hr.app)
      .post('/api/v1/employees')
      .set('Authorization', auth)
      .set('Idempotency-Key', key)
      .send(body);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['location']).toBe(first.headers['location']);
    expect(again.body).toEqual(first.body);
    expect(await hr.db.employee.count({ where: { userId: body.user_id } })).toBe(1);

    const other = await request(hr.app)
      .post('/api/v1/employees')
      .set('Authorization', auth)
      .set('Idempotency-Key', key)
      .send({ ...body, name: 'Other' });
    expect(other.status).toBe(422);
    expect(other.body.type).toBe('urn:msp:problem:idempotency-key-reused');
    expect(await hr.db.employee.count({ where: { userId: body.user_id } })).toBe(1);
  },
);

describe('When the instance that ran POST /employees died between its commit and storing its answer', () => {
  // What such an instance leaves behind: the employee committed, and in Redis its claim, no longer
  // renewed (answeredIdempotencyRecord puts the record back into that state).
  let redis: Redis;
  beforeAll(async () => {
    redis = await connectedRedis(createLogger({ service: 'hr-test', level: 'error' }));
  });
  afterAll(() => redis.disconnect());

  async function create() {
    const tenantId = randomUUID();
    const auth = `Bearer ${hr.token({ tenant_id: tenantId })}`;
    const key = randomUUID();
    const body = { user_id: randomUUID(), personnel_number: '4711', name: 'Erika Mustermann' };
    const post = () =>
      request(hr.app).post('/api/v1/employees').set('Authorization', auth).set('Idempotency-Key', key).send(body);
    const first = await post();
    expect(first.status).toBe(201);
    const record = await answeredIdempotencyRecord(redis, 'hr', tenantId, key);
    expect(record.state).toBe('done');
    // The claim is stored with the employee, in the transaction that created it.
    const [row] = await hr.db.$queryRawUnsafe<{ idempotency_claim: string | null }[]>(
      'SELECT idempotency_claim::text FROM employees WHERE id = $1::uuid',
      first.body.id,
    );
    expect(row?.idempotency_claim).toMatch(/^[0-9a-f-]{36}$/);
    const employees = () => hr.db.employee.count({ where: { tenantId } });
    return { first, post, claim: row!.idempotency_claim!, leaveClaim: record.leaveClaim, employees };
  }

  test('When the employee was committed under its stale claim, then the retry answers that employee (Idempotent-Replayed), not a duplicate 409', async () => {
    const { first, post, claim, leaveClaim, employees } = await create();
    await leaveClaim(claim);

    expectReplayOf(first, await post());
    const later = await post();
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body.id).toBe(first.body.id);
    expect(await employees()).toBe(1);
  });

  test('When nothing was committed under its stale claim, then the retry takes the key over and runs (409: the user is employed)', async () => {
    const { post, leaveClaim, employees } = await create();
    await leaveClaim(randomUUID());

    const again = await post();
    expect(again.status).toBe(409);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await employees()).toBe(1);
  });
});
