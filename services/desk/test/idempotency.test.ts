import { randomUUID } from 'node:crypto';
import { createLogger } from '@msp/http';
import { answeredIdempotencyRecord, connectedRedis, expectReplayOf } from '@msp/testkit';
import type { Redis } from 'ioredis';
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

test(
  'When an API client is created with an Idempotency-Key, then the key is not honoured (the answer ' +
    'holds a secret that is never kept), and the document says so by not naming it',
  async () => {
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
    expect((desk.openapi.paths['/tickets'].post.parameters as { name: string }[]).map((p) => p.name)).toContain(
      'Idempotency-Key',
    );
  },
);

describe('When the instance that ran a create died between its commit and storing its answer', () => {
  // What such an instance leaves behind: its change and events committed, and in Redis its claim,
  // no longer renewed. The record is put back into that state by hand; everything else is real.
  let redis: Redis;
  beforeAll(async () => {
    redis = await connectedRedis(createLogger({ service: 'desk-test', level: 'error' }));
  });
  afterAll(() => redis.disconnect());

  async function create(key: string, title: string) {
    const http = api(desk);
    const tenant = await newTenant(desk);
    const client = await createClient(http, tenant.token);
    const body = { title, client_id: client.id };
    const post = () => http.post(`${BASE}/tickets`).set(bearer(tenant.token)).set('Idempotency-Key', key).send(body);
    const first = await post();
    expect(first.status).toBe(201);
    const record = await answeredIdempotencyRecord(redis, 'desk', tenant.tenantId, key);
    expect(record.state).toBe('done');
    const [event] = await desk.db.$queryRawUnsafe<{ idempotency_claim: string | null }[]>(
      `SELECT idempotency_claim FROM events WHERE resource_id = $1 AND type = 'ticket.created'`,
      first.body.id,
    );
    // The claim is recorded in the transaction that created the ticket.
    expect(event?.idempotency_claim).toMatch(/^[0-9a-f-]{36}$/);
    const tickets = async () =>
      (await http.get(`${BASE}/tickets`).set(bearer(tenant.token))).body.data.filter(
        (t: { title: string }) => t.title === title,
      );
    return { first, post, claim: event!.idempotency_claim!, leaveClaim: record.leaveClaim, tickets };
  }

  test('When its claim is no longer renewed and the ticket was committed, then the retry is answered with that ticket and nothing runs again', async () => {
    const title = unique('Died after commit');
    const { first, post, claim, leaveClaim, tickets } = await create(randomUUID(), title);
    await leaveClaim(claim, Date.now() - 120_000);

    expectReplayOf(first, await post());
    // The answer is stored again: later retries replay it too.
    const later = await post();
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body.id).toBe(first.body.id);
    expect(await tickets()).toHaveLength(1);
  });

  test('When its claim is no longer renewed and nothing was committed under it, then the retry takes the key over and creates', async () => {
    const title = unique('Died before commit');
    const { first, post, leaveClaim, tickets } = await create(randomUUID(), title);
    // A claim under which no event was ever recorded: its request never committed.
    await leaveClaim(randomUUID(), Date.now() - 120_000);

    const again = await post();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.id).not.toBe(first.body.id);
    const later = await post();
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body.id).toBe(again.body.id);
    expect(await tickets()).toHaveLength(2);
  });

  test('When its claim was renewed lately, then the retry is 409 idempotency-key-in-use and nothing runs', async () => {
    const title = unique('Still running');
    const { post, claim, leaveClaim, tickets } = await create(randomUUID(), title);
    await leaveClaim(claim, Date.now());

    const again = await post();
    expect(again.status).toBe(409);
    expect(again.body.type).toBe('urn:msp:problem:idempotency-key-in-use');
    expect(again.headers['retry-after']).toBe('1');
    expect(await tickets()).toHaveLength(1);
  });

  test('When a mailbox (which records no event) was committed under its stale claim, then the retry answers that mailbox, not a duplicate 409', async () => {
    const http = api(desk);
    const tenant = await newTenant(desk);
    const key = randomUUID();
    const body = {
      address: `${unique('support').replace(' ', '-')}@contoso.example`,
      enabled: false,
      imap: { host: '127.0.0.1', port: 143, tls: 'none', username: 'support', password: 'imap-secret' },
      smtp: { host: '127.0.0.1', port: 25, tls: 'none' },
    };
    const post = () => http.post(`${BASE}/mailboxes`).set(bearer(tenant.token)).set('Idempotency-Key', key).send(body);
    const first = await post();
    expect(first.status).toBe(201);
    const record = await answeredIdempotencyRecord(redis, 'desk', tenant.tenantId, key);
    // The claim is stored with the mailbox, in the statement that created it.
    const stored = await desk.db.mailbox.findUniqueOrThrow({ where: { id: first.body.id } });
    expect(stored.idempotencyClaim).toMatch(/^[0-9a-f-]{36}$/);
    await record.leaveClaim(stored.idempotencyClaim!);

    expectReplayOf(first, await post());
    expect(await desk.db.mailbox.count({ where: { tenantId: tenant.tenantId } })).toBe(1);
  });
});
