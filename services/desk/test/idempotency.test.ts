import { randomUUID } from 'node:crypto';
import { api } from './support/api';
import { startDesk, type TestDesk } from './support/desk';
import { BASE, bearer, createClient, newTenant, unique } from './support/helpdesk';

let desk: TestDesk;
beforeAll(async () => {
  desk = await startDesk();
});
afterAll(() => desk.close());

test('When a ticket is created twice with one Idempotency-Key, then the second answers the first again and one ticket exists', async () => {
  const http = api(desk);
  const { token } = await newTenant(desk);
  const client = await createClient(http, token);
  const key = randomUUID();
  const body = { title: unique('Printer jams'), client_id: client.id };
  const first = await http.post(`${BASE}/tickets`).set(bearer(token)).set('Idempotency-Key', key).send(body);
  const again = await http.post(`${BASE}/tickets`).set(bearer(token)).set('Idempotency-Key', key).send(body);
  expect(first.status).toBe(201);
  expect(again.status).toBe(201);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.body).toEqual(first.body);
  const listed = await http.get(`${BASE}/tickets`).set(bearer(token));
  expect(listed.body.data.filter((t: { title: string }) => t.title === body.title)).toHaveLength(1);
});

test('When an API client is created with an Idempotency-Key, then the key is not honoured (the answer holds a secret that is never kept), and the document says so by not naming it', async () => {
  const http = api(desk);
  const { token } = await newTenant(desk);
  const key = randomUUID();
  const body = { name: unique('Reporting'), scopes: ['read:tickets'] };
  const first = await http.post(`${BASE}/api-clients`).set(bearer(token)).set('Idempotency-Key', key).send(body);
  const second = await http.post(`${BASE}/api-clients`).set(bearer(token)).set('Idempotency-Key', key).send(body);
  expect([first.status, second.status]).toEqual([201, 201]);
  expect(second.body.id).not.toBe(first.body.id);
  expect(second.headers['idempotent-replayed']).toBeUndefined();
  const parameters = (desk.openapi.paths['/api-clients'].post.parameters ?? []) as { name: string }[];
  expect(parameters.map((p) => p.name)).not.toContain('Idempotency-Key');
  expect((desk.openapi.paths['/tickets'].post.parameters as { name: string }[]).map((p) => p.name)).toContain('Idempotency-Key');
});
