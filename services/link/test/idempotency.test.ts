import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@msp/http';
import { answeredIdempotencyRecord, connectedRedis, expectReplayOf } from '@msp/testkit';
import type { Redis } from 'ioredis';
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

describe('When the instance that ran POST /connectors died between its commit and storing its answer', () => {
  // What such an instance leaves behind: the connector committed, and in Redis its claim, no longer
  // renewed (answeredIdempotencyRecord puts the record back into that state).
  let redis: Redis;
  beforeAll(async () => {
    redis = await connectedRedis(createLogger({ service: 'link-test', level: 'error' }));
  });
  afterAll(() => redis.disconnect());

  async function create() {
    const tenantId = randomUUID();
    const auth = `Bearer ${link.token({ tenant_id: tenantId })}`;
    const managed = await request(link.app)
      .post('/api/v1/tenants')
      .set('Authorization', auth)
      .send({ name: 'Contoso', domain: `c${randomBytes(5).toString('hex')}.example.com`, client_id: randomUUID() });
    expect(managed.status).toBe(201);
    const key = randomUUID();
    const body = {
      tenant_id: managed.body.id,
      type: 'scim',
      name: 'Contoso Entra ID',
      config: { base_url: 'https://scim.contoso.example/scim/v2', bearer_token: 'scim-secret' },
    };
    const post = () =>
      request(link.app).post('/api/v1/connectors').set('Authorization', auth).set('Idempotency-Key', key).send(body);
    const first = await post();
    expect(first.status).toBe(201);
    const record = await answeredIdempotencyRecord(redis, 'link', tenantId, key);
    expect(record.state).toBe('done');
    // The claim is stored with the connector, in the statement that created it.
    const [row] = await link.db.$queryRawUnsafe<{ idempotency_claim: string | null }[]>(
      'SELECT idempotency_claim::text FROM connectors WHERE id = $1::uuid',
      first.body.id,
    );
    expect(row?.idempotency_claim).toMatch(/^[0-9a-f-]{36}$/);
    const connectors = async () =>
      (await request(link.app).get(`/api/v1/connectors?tenant_id=${managed.body.id}`).set('Authorization', auth)).body
        .data as { id: string }[];
    return { first, post, claim: row!.idempotency_claim!, leaveClaim: record.leaveClaim, connectors };
  }

  test('When the connector was committed under its stale claim, then the retry answers that connector (Idempotent-Replayed) and creates none', async () => {
    const { first, post, claim, leaveClaim, connectors } = await create();
    await leaveClaim(claim);

    expectReplayOf(first, await post());
    const later = await post();
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body.id).toBe(first.body.id);
    expect((await connectors()).map((c) => c.id)).toEqual([first.body.id]);
  });

  test('When nothing was committed under its stale claim, then the retry takes the key over and creates', async () => {
    const { first, post, leaveClaim, connectors } = await create();
    await leaveClaim(randomUUID());

    const again = await post();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.id).not.toBe(first.body.id);
    expect(await connectors()).toHaveLength(2);
  });
});
