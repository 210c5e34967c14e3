import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createClient, newTenant, snapshot, startHelpdesk, unique } from './support/helpdesk';

let desk: TestDesk;
let http: Api;
let token: string;
let tenantId: string;

beforeAll(async () => ({ desk, http, token, tenantId } = await startHelpdesk()));
afterAll(() => desk.close());

describe('POST /clients', () => {
  test("When a client is created with every field, then it answers 201 with Location and stores it in the caller's tenant", async () => {
    const name = unique('Acme GmbH');
    const response = await http
      .post(`${BASE}/clients`)
      .set(bearer(token))
      .send({ name, email: 'it@acme.example', phone: '+49 30 1234-567', notes: 'Key account.' })
      .expect(201);

    expect(response.headers.location).toBe(`${BASE}/clients/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(String),
      name,
      email: 'it@acme.example',
      phone: '+49 30 1234-567',
      notes: 'Key account.',
      email_domains: [],
      sla_policy_id: null,
      hourly_rate: null,
      currency: 'EUR',
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(await desk.db.client.findUniqueOrThrow({ where: { id: response.body.id } })).toMatchObject({
      tenantId,
      name,
      email: 'it@acme.example',
    });
  });

  test('When only the name is sent, then email, phone and notes are null', async () => {
    const response = await http
      .post(`${BASE}/clients`)
      .set(bearer(token))
      .send({ name: unique('Solo') })
      .expect(201);
    expect(response.body).toMatchObject({ email: null, phone: null, notes: null });
  });

  test('When the name is taken in the tenant, in any letter case, then it answers 409 and stores nothing', async () => {
    const existing = await createClient(http, token);
    const before = await snapshot(desk);
    for (const name of [existing.name, existing.name.toUpperCase()]) {
      const response = await http.post(`${BASE}/clients`).set(bearer(token)).send({ name }).expect(409);
      expect(response.body).toMatchObject({ status: 409, type: 'urn:msp:problem:duplicate-client' });
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When another tenant uses the same name, then it is no conflict', async () => {
    const existing = await createClient(http, token);
    const other = await newTenant(desk);
    await http.post(`${BASE}/clients`).set(bearer(other.token)).send({ name: existing.name }).expect(201);
  });

  test('When the same name is created by many requests at once, then exactly one answers 201 and the rest 409', async () => {
    const name = unique('Race Ltd');
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => http.post(`${BASE}/clients`).set(bearer(token)).send({ name })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    expect(await desk.db.client.count({ where: { tenantId, name } })).toBe(1);
  });

  test.each([
    ['no name', {}],
    ['an empty name', { name: '' }],
    ['a name over 200 characters', { name: 'x'.repeat(201) }],
    ['a malformed email', { name: 'x', email: 'not-an-email' }],
    ['a phone with letters', { name: 'x', phone: 'call me' }],
    ['notes over 10,000 characters', { name: 'x', notes: 'x'.repeat(10_001) }],
    ['an unknown field', { name: 'x', vat_id: 'DE123' }],
    ['a NUL character in the name', { name: 'x\u0000' }],
  ])('When the body has %s, then it answers 400 and stores nothing', async (_case, body) => {
    const before = await snapshot(desk);
    const response = await http.post(`${BASE}/clients`).set(bearer(token)).send(body).expect(400);
    expect(response.body.errors.length).toBeGreaterThan(0);
    expect(await snapshot(desk)).toEqual(before);
  });
});

describe('GET /clients and /clients/:id', () => {
  test('When a client is read, then it answers the stored client; an unknown id is 404', async () => {
    const client = await createClient(http, token, { email: 'a@b.example' });
    const response = await http.get(`${BASE}/clients/${client.id}`).set(bearer(token)).expect(200);
    expect(response.body).toEqual(client);
    await http.get(`${BASE}/clients/00000000-0000-4000-8000-000000000000`).set(bearer(token)).expect(404);
  });

  test("When clients are listed, then they come newest first with the tenant's total", async () => {
    const tenant = await newTenant(desk);
    const a = await createClient(http, tenant.token);
    const b = await createClient(http, tenant.token);
    const response = await http.get(`${BASE}/clients`).set(bearer(tenant.token)).expect(200);
    expect(response.body.data.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
    expect(response.body.pagination).toEqual({ page: 1, per_page: 25, total: 2, total_pages: 1 });
  });
});

describe('PATCH /clients/:id', () => {
  test('When fields are changed or cleared with null, then the change is stored and updated_at moves', async () => {
    const client = await createClient(http, token, { email: 'old@acme.example', phone: '123', notes: 'n' });
    const name = unique('Renamed');
    const response = await http
      .patch(`${BASE}/clients/${client.id}`)
      .set(bearer(token))
      .send({ name, email: null, phone: null, notes: 'new' })
      .expect(200);
    expect(response.body).toMatchObject({ id: client.id, name, email: null, phone: null, notes: 'new' });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(Date.parse((client as any).updated_at));
    expect(await desk.db.client.findUniqueOrThrow({ where: { id: client.id } })).toMatchObject({
      name,
      email: null,
      phone: null,
      notes: 'new',
    });
  });

  test('When the new name belongs to another client of the tenant, then it answers 409 and changes nothing', async () => {
    const first = await createClient(http, token);
    const second = await createClient(http, token);
    const before = await snapshot(desk);
    await http
      .patch(`${BASE}/clients/${second.id}`)
      .set(bearer(token))
      .send({ name: first.name.toLowerCase() })
      .expect(409);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the body is empty, clears the name or has an unknown field, then it answers 400 and changes nothing', async () => {
    const client = await createClient(http, token);
    const before = await snapshot(desk);
    for (const body of [{}, { name: null }, { id: 'x' }])
      await http.patch(`${BASE}/clients/${client.id}`).set(bearer(token)).send(body).expect(400);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the client is unknown, then it answers 404', async () => {
    await http
      .patch(`${BASE}/clients/00000000-0000-4000-8000-000000000000`)
      .set(bearer(token))
      .send({ notes: 'x' })
      .expect(404);
  });
});

describe('email_domains', () => {
  const domain = () => `${unique('acme').replace(' ', '-')}.example`;

  test('When a client is created with mail domains in any case, then they are stored lower-cased and sorted', async () => {
    const [a, b] = [domain(), domain()].sort();
    const response = await http
      .post(`${BASE}/clients`)
      .set(bearer(token))
      .send({ name: unique('Dom'), email_domains: [b!.toUpperCase(), a] })
      .expect(201);
    expect(response.body.email_domains).toEqual([a, b]);
    expect(
      (await http.get(`${BASE}/clients/${response.body.id}`).set(bearer(token)).expect(200)).body.email_domains,
    ).toEqual([a, b]);
  });

  test("When a domain is another client's, then creating or changing answers 409 email-domain-taken and stores nothing", async () => {
    const taken = domain();
    const owner = await createClient(http, token, { email_domains: [taken] });
    const other = await createClient(http, token);
    const before = await snapshot(desk);
    const created = await http
      .post(`${BASE}/clients`)
      .set(bearer(token))
      .send({ name: unique('Dom'), email_domains: [taken.toUpperCase()] })
      .expect(409);
    expect(created.body.type).toBe('urn:msp:problem:email-domain-taken');
    const changed = await http
      .patch(`${BASE}/clients/${other.id}`)
      .set(bearer(token))
      .send({ email_domains: [taken] })
      .expect(409);
    expect(changed.body.type).toBe('urn:msp:problem:email-domain-taken');
    expect(await snapshot(desk)).toEqual(before);
    expect(owner.id).toBeDefined();
  });

  test.each(['gmail.com', 'GMX.de', 't-online.de', 'outlook.com'])(
    'When %s is given, then it answers 422 free-mail-domain and stores nothing',
    async (free) => {
      const client = await createClient(http, token);
      const before = await snapshot(desk);
      const created = await http
        .post(`${BASE}/clients`)
        .set(bearer(token))
        .send({ name: unique('Free'), email_domains: [free] })
        .expect(422);
      expect(created.body.type).toBe('urn:msp:problem:free-mail-domain');
      const changed = await http
        .patch(`${BASE}/clients/${client.id}`)
        .set(bearer(token))
        .send({ email_domains: [domain(), free] })
        .expect(422);
      expect(changed.body.type).toBe('urn:msp:problem:free-mail-domain');
      expect(await snapshot(desk)).toEqual(before);
    },
  );

  test('When the domains are replaced, then a dropped domain is free for another client', async () => {
    const dropped = domain();
    const client = await createClient(http, token, { email_domains: [dropped] });
    const kept = domain();
    const response = await http
      .patch(`${BASE}/clients/${client.id}`)
      .set(bearer(token))
      .send({ email_domains: [kept] })
      .expect(200);
    expect(response.body.email_domains).toEqual([kept]);
    await createClient(http, token, { email_domains: [dropped] });
  });

  test.each([
    ['not a host name', ['not a domain']],
    ['no dot', ['localhost']],
  ])('When a domain is %s, then it answers 400', async (_case, email_domains) => {
    await http
      .post(`${BASE}/clients`)
      .set(bearer(token))
      .send({ name: unique('Bad'), email_domains })
      .expect(400);
  });
});
