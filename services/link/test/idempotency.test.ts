import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { startLink, type TestLink } from './support/link';

let link: TestLink;
beforeAll(async () => {
  link = await startLink();
});
afterAll(() => link.close());

test('When a managed tenant is created twice with one Idempotency-Key, then the second answers the first again and one tenant is stored', async () => {
  const auth = `Bearer ${link.token()}`;
  const key = randomUUID();
  const body = {
    name: 'Contoso Microsoft 365',
    domain: `c${randomBytes(4).toString('hex')}.example.com`,
    client_id: randomUUID(),
  };
  const post = () =>
    request(link.app).post('/api/v1/tenants').set('Authorization', auth).set('Idempotency-Key', key).send(body);
  const first = await post();
  const again = await post();
  expect(first.status).toBe(201);
  expect(again.status).toBe(201);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.headers['location']).toBe(first.headers['location']);
  expect(again.body).toEqual(first.body);
  expect(await link.db.managedTenant.count({ where: { domain: body.domain } })).toBe(1);
});
