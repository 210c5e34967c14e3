import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { startLink, type TestLink } from './support/link';

const TENANTS = '/api/v1/tenants';

let link: TestLink;

beforeAll(async () => {
  link = await startLink();
});
afterAll(() => link.close());

/** A caller of its own: a fresh MSP tenant with admin:tenant. */
function newCaller(scope = 'admin:tenant') {
  const tenantId = randomUUID();
  return { tenantId, auth: `Bearer ${link.token({ tenant_id: tenantId, scope })}` };
}

const uniqueDomain = () => `c${randomBytes(5).toString('hex')}.onmicrosoft.com`;

function tenantInput(overrides: Record<string, unknown> = {}) {
  return { name: 'Contoso Microsoft 365', domain: uniqueDomain(), client_id: randomUUID(), ...overrides };
}

const storedCount = (ownerTenantId: string) => link.db.managedTenant.count({ where: { ownerTenantId } });

async function register(auth: string, overrides: Record<string, unknown> = {}) {
  const response = await request(link.app).post(TENANTS).set('Authorization', auth).send(tenantInput(overrides));
  expect(response.status).toBe(201);
  return response.body as { id: string; domain: string; created_at: string };
}

function expectProblem(response: request.Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({
    status,
    type: `urn:msp:problem:${type}`,
    request_id: response.headers['x-request-id'],
  });
}

describe('POST /tenants', () => {
  test('When a valid tenant is registered, then it answers 201 with Location and the tenant, and stores it under the caller', async () => {
    const caller = newCaller();
    const input = tenantInput({ domain: `Contoso-${randomBytes(4).toString('hex')}.OnMicrosoft.com` });

    const response = await request(link.app).post(TENANTS).set('Authorization', caller.auth).send(input);

    expect(response.status).toBe(201);
    expect(response.headers.location).toBe(`${TENANTS}/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: input.name,
      domain: input.domain.toLowerCase(),
      client_id: input.client_id,
      status: 'active',
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(Math.abs(Date.parse(response.body.created_at) - Date.now())).toBeLessThan(60_000);
    const stored = await link.db.managedTenant.findUniqueOrThrow({ where: { id: response.body.id } });
    expect(stored).toMatchObject({
      ownerTenantId: caller.tenantId,
      domain: input.domain.toLowerCase(),
      clientId: input.client_id,
      status: 'active',
    });
  });

  test('When a status is given, then the tenant is stored with it', async () => {
    const caller = newCaller();
    const response = await request(link.app)
      .post(TENANTS)
      .set('Authorization', caller.auth)
      .send(tenantInput({ status: 'suspended' }));

    expect(response.status).toBe(201);
    expect(response.body.status).toBe('suspended');
    expect((await link.db.managedTenant.findUniqueOrThrow({ where: { id: response.body.id } })).status).toBe(
      'suspended',
    );
  });

  test('When the domain is already registered by the caller in another case, then it answers 409 and stores nothing', async () => {
    const caller = newCaller();
    const first = await register(caller.auth);

    const response = await request(link.app)
      .post(TENANTS)
      .set('Authorization', caller.auth)
      .send(tenantInput({ domain: first.domain.toUpperCase() }));

    expectProblem(response, 409, 'conflict');
    expect(response.body.detail).toContain(first.domain);
    expect(response.body.errors).toEqual([{ field: 'domain', message: 'is already registered' }]);
    expect(await storedCount(caller.tenantId)).toBe(1);
  });

  test('When another MSP tenant registers the same domain, then both registrations stand', async () => {
    const one = newCaller();
    const other = newCaller();
    const domain = uniqueDomain();

    await register(one.auth, { domain });
    await register(other.auth, { domain });

    expect(await link.db.managedTenant.count({ where: { domain } })).toBe(2);
  });

  test.each([
    ['an unknown field', { owner_tenant_id: randomUUID() }, 'owner_tenant_id', 'is not a known field'],
    ['a name of the wrong type', { name: 42 }, 'name', 'must be of type string'],
    ['an empty name', { name: '' }, 'name', 'must NOT have fewer than 1 characters'],
    ['a client_id that is not a UUID', { client_id: 'acme' }, 'client_id', 'must be a valid uuid'],
    ['a domain that is not a host name', { domain: 'not a domain' }, 'domain', 'must be a valid hostname'],
    ['a single-label domain', { domain: 'contoso' }, 'domain', expect.stringContaining('must match pattern')],
    ['an unknown status', { status: 'deleted' }, 'status', 'must be one of: active, suspended'],
  ])(
    'When the body has %s, then it answers 400 naming the field and stores nothing',
    async (_case, overrides, field, message) => {
      const caller = newCaller();
      const response = await request(link.app)
        .post(TENANTS)
        .set('Authorization', caller.auth)
        .send(tenantInput(overrides));

      expectProblem(response, 400, 'validation-error');
      expect(response.body.errors).toEqual(expect.arrayContaining([{ field, message }]));
      expect(response.body.errors.every((e: { field: string }) => e.field === field)).toBe(true);
      expect(await storedCount(caller.tenantId)).toBe(0);
    },
  );

  test('When required fields are missing, then it answers 400 listing each of them', async () => {
    const caller = newCaller();
    const response = await request(link.app).post(TENANTS).set('Authorization', caller.auth).send({});

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual(
      expect.arrayContaining([
        { field: 'name', message: 'is required' },
        { field: 'domain', message: 'is required' },
        { field: 'client_id', message: 'is required' },
      ]),
    );
    expect(response.body.errors).toHaveLength(3);
  });

  test('When the body is malformed JSON, then it answers 400 and stores nothing', async () => {
    const caller = newCaller();
    const response = await request(link.app)
      .post(TENANTS)
      .set('Authorization', caller.auth)
      .set('Content-Type', 'application/json')
      .send('{"name":');

    expectProblem(response, 400, 'malformed-body');
    expect(await storedCount(caller.tenantId)).toBe(0);
  });

  test('When the body is not JSON, then it answers 415 and stores nothing', async () => {
    const caller = newCaller();
    const response = await request(link.app)
      .post(TENANTS)
      .set('Authorization', caller.auth)
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify(tenantInput()));

    expectProblem(response, 415, 'unsupported-media-type');
    expect(response.headers['accept-post']).toBe('application/json');
    expect(await storedCount(caller.tenantId)).toBe(0);
  });

  test('When the token lacks admin:tenant or is missing, then nothing is stored', async () => {
    const caller = newCaller('read:hr write:hr');

    const forbidden = await request(link.app).post(TENANTS).set('Authorization', caller.auth).send(tenantInput());
    const anonymous = await request(link.app).post(TENANTS).send(tenantInput());

    expect([forbidden.status, anonymous.status]).toEqual([403, 401]);
    expect(await storedCount(caller.tenantId)).toBe(0);
  });
});

describe('GET /tenants/:id', () => {
  test('When the caller asks for its tenant, then it answers 200 with it', async () => {
    const caller = newCaller();
    const created = await register(caller.auth);

    const response = await request(link.app).get(`${TENANTS}/${created.id}`).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.body).toEqual(created);
  });

  test('When the id belongs to another MSP tenant, then it answers 404 as if it did not exist', async () => {
    const owner = newCaller();
    const created = await register(owner.auth);

    const response = await request(link.app).get(`${TENANTS}/${created.id}`).set('Authorization', newCaller().auth);

    expectProblem(response, 404, 'not-found');
    expect(response.body.detail).toBe(`No managed tenant ${created.id}.`);
  });

  test('When the id is unknown or not a UUID, then it answers 404', async () => {
    const caller = newCaller();
    expectProblem(
      await request(link.app).get(`${TENANTS}/${randomUUID()}`).set('Authorization', caller.auth),
      404,
      'not-found',
    );
    expectProblem(
      await request(link.app).get(`${TENANTS}/not-a-uuid`).set('Authorization', caller.auth),
      404,
      'not-found',
    );
  });
});

describe('GET /tenants', () => {
  test('When the caller has tenants, then it lists only its own, newest first', async () => {
    const caller = newCaller();
    const stranger = newCaller();
    await register(stranger.auth);
    const a = await register(caller.auth);
    const b = await register(caller.auth);
    const c = await register(caller.auth);

    const response = await request(link.app).get(TENANTS).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.body.data.map((t: { id: string }) => t.id)).toEqual([c.id, b.id, a.id]);
    expect(response.body.data[0]).toEqual(c);
    expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total: 3, total_pages: 1 });
  });

  test('When tenants share a creation time, then the order is still stable (by id)', async () => {
    const caller = newCaller();
    const createdAt = new Date('2030-01-01T00:00:00.000Z');
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      await link.db.managedTenant.create({
        data: {
          id,
          ownerTenantId: caller.tenantId,
          name: 'Same time',
          domain: uniqueDomain(),
          clientId: randomUUID(),
          createdAt,
        },
      });
    }

    const first = await request(link.app).get(TENANTS).query({ per_page: 2 }).set('Authorization', caller.auth);
    const second = await request(link.app)
      .get(TENANTS)
      .query({ per_page: 2, page: 2 })
      .set('Authorization', caller.auth);

    const listed = [...first.body.data, ...second.body.data].map((t: { id: string }) => t.id);
    expect(listed).toEqual([...ids].sort().reverse());
  });

  test('When the list spans pages, then each page carries its slice, pagination and Link header', async () => {
    const caller = newCaller();
    const created = [];
    for (let i = 0; i < 5; i += 1) created.push(await register(caller.auth));
    const newestFirst = created.reverse().map((t) => t.id);

    const page2 = await request(link.app)
      .get(TENANTS)
      .query({ page: 2, per_page: 2 })
      .set('Authorization', caller.auth);

    expect(page2.status).toBe(200);
    expect(page2.body.data.map((t: { id: string }) => t.id)).toEqual(newestFirst.slice(2, 4));
    expect(page2.body.pagination).toEqual({ page: 2, per_page: 2, total: 5, total_pages: 3 });
    const links = page2.headers.link as string;
    expect(links).toMatch(/[?&]page=1[^>]*>; rel="first"/);
    expect(links).toMatch(/[?&]page=1[^>]*>; rel="prev"/);
    expect(links).toMatch(/[?&]page=3[^>]*>; rel="next"/);
    expect(links).toMatch(/[?&]page=3[^>]*>; rel="last"/);
    expect(links).toContain('per_page=2');

    const last = await request(link.app).get(TENANTS).query({ page: 3, per_page: 2 }).set('Authorization', caller.auth);
    expect(last.body.data.map((t: { id: string }) => t.id)).toEqual(newestFirst.slice(4));
    expect(last.headers.link).not.toContain('rel="next"');
  });

  test('When the page is past the end, then it answers 200 with no data and the real totals', async () => {
    const caller = newCaller();
    await register(caller.auth);

    const response = await request(link.app).get(TENANTS).query({ page: 9 }).set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: [], pagination: { page: 9, per_page: 25, total: 1, total_pages: 1 } });
  });

  test('When per_page is 100, then it is accepted', async () => {
    const response = await request(link.app)
      .get(TENANTS)
      .query({ per_page: 100 })
      .set('Authorization', newCaller().auth);
    expect(response.status).toBe(200);
    expect(response.body.pagination.per_page).toBe(100);
  });

  test.each([
    [{ page: 0 }, 'page', 'must be >= 1'],
    [{ page: 'two' }, 'page', 'must be an integer'],
    [{ per_page: 0 }, 'per_page', 'must be >= 1'],
    [{ per_page: 101 }, 'per_page', 'must be <= 100'],
    [{ status: 'gone' }, 'status', 'must be one of: active, suspended'],
    [{ client_id: 'acme' }, 'client_id', 'must be a valid uuid'],
    [{ sort: 'name' }, 'sort', 'is not a known field'],
  ])('When the query is %o, then it answers 400 naming %s', async (query, field, message) => {
    const response = await request(link.app).get(TENANTS).query(query).set('Authorization', newCaller().auth);

    expectProblem(response, 400, 'validation-error');
    expect(response.body.errors).toEqual([{ field, message }]);
  });

  test('When filtered by status and client_id, then only matching tenants are listed', async () => {
    const caller = newCaller();
    const clientId = randomUUID();
    const wanted = await register(caller.auth, { client_id: clientId });
    await register(caller.auth, { client_id: clientId, status: 'suspended' });
    await register(caller.auth);

    const response = await request(link.app)
      .get(TENANTS)
      .query({ status: 'active', client_id: clientId })
      .set('Authorization', caller.auth);

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([wanted]);
    expect(response.body.pagination.total).toBe(1);
  });
});
