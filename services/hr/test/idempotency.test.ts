import { randomUUID } from 'node:crypto';
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
