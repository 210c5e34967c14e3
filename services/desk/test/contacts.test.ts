import { randomBytes } from 'node:crypto';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import {
  BASE,
  bearer,
  createClient,
  createTicket,
  newTenant,
  snapshot,
  startHelpdesk,
  unique,
  uniqueEmail,
} from './support/helpdesk';

let desk: TestDesk;
let http: Api;
let token: string;
let tenantId: string;

beforeAll(async () => ({ desk, http, token, tenantId } = await startHelpdesk()));
afterAll(() => desk.close());

async function createContact(body: Record<string, unknown> = {}) {
  const response = await http
    .post(`${BASE}/contacts`)
    .set(bearer(token))
    .send({ name: unique('Anna'), email: uniqueEmail('anna'), ...body })
    .expect(201);
  return response.body as { id: string; name: string; email: string; emails: string[]; client_id: string | null };
}

describe('POST /contacts', () => {
  test('When a contact is created with every field, then it answers 201 with Location, lower-cased addresses and the primary first', async () => {
    const client = await createClient(http, token);
    const email = uniqueEmail('Anna.Berger');
    const other = uniqueEmail('a.berger');
    const response = await http
      .post(`${BASE}/contacts`)
      .set(bearer(token))
      .send({
        name: 'Anna Berger',
        email,
        emails: [other],
        client_id: client.id,
        phone: '+49 30 1234567',
        language: 'de',
      })
      .expect(201);
    expect(response.headers.location).toBe(`${BASE}/contacts/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(String),
      name: 'Anna Berger',
      email: email.toLowerCase(),
      emails: [email.toLowerCase(), other],
      client_id: client.id,
      phone: '+49 30 1234567',
      language: 'de',
      email_status: 'ok',
      created_at: expect.any(String),
      updated_at: response.body.created_at,
    });
    expect(await desk.db.contactEmail.count({ where: { tenantId, contactId: response.body.id } })).toBe(2);
    const events = await desk.db.$queryRaw<
      { type: string }[]
    >`SELECT type FROM events WHERE resource_id = ${response.body.id}`;
    expect(events.map((e) => e.type)).toEqual(['contact.created']);
  });

  test("When an address is another contact's in any letter case, then it answers 409 email-taken and stores nothing", async () => {
    const existing = await createContact();
    const before = await snapshot(desk);
    for (const body of [{ email: existing.email.toUpperCase() }, { email: uniqueEmail(), emails: [existing.email] }]) {
      const response = await http
        .post(`${BASE}/contacts`)
        .set(bearer(token))
        .send({ name: 'Dup', ...body })
        .expect(409);
      expect(response.body).toMatchObject({ status: 409, type: 'urn:msp:problem:email-taken' });
    }
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When another tenant has the address, then it is no conflict', async () => {
    const existing = await createContact();
    const other = await newTenant(desk);
    await http
      .post(`${BASE}/contacts`)
      .set(bearer(other.token))
      .send({ name: 'Same', email: existing.email })
      .expect(201);
  });

  test('When one address is created by many requests at once, then exactly one answers 201', async () => {
    const email = uniqueEmail('race');
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => http.post(`${BASE}/contacts`).set(bearer(token)).send({ name: 'Race', email })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });

  test.each([
    ['no email', { name: 'x' }],
    ['a malformed email', { name: 'x', email: 'nope' }],
    ['an empty name', { name: '', email: 'x@example.com' }],
    ['an unknown field', { name: 'x', email: 'x@example.com', vat: 1 }],
    ['a malformed address in emails', { name: 'x', email: 'x@example.com', emails: ['nope'] }],
    ['a malformed language', { name: 'x', email: 'x@example.com', language: 'German!' }],
  ])('When the body has %s, then it answers 400 and stores nothing', async (_case, body) => {
    const before = await snapshot(desk);
    const response = await http.post(`${BASE}/contacts`).set(bearer(token)).send(body).expect(400);
    expect(response.body.errors.length).toBeGreaterThan(0);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When client_id names no client of the tenant, then it answers 422 and stores nothing', async () => {
    const other = await newTenant(desk);
    const foreign = await createClient(http, other.token);
    const before = await snapshot(desk);
    const response = await http
      .post(`${BASE}/contacts`)
      .set(bearer(token))
      .send({ name: 'x', email: uniqueEmail(), client_id: foreign.id })
      .expect(422);
    expect(response.body.type).toBe('urn:msp:problem:unknown-reference');
    expect(await snapshot(desk)).toEqual(before);
  });
});

describe('GET /contacts', () => {
  test('When filtered by client_id, email (any address, any case) or q, then only the matching contacts are listed with their total', async () => {
    const client = await createClient(http, token);
    const marker = unique('Zebra').replace(' ', '');
    const a = await createContact({ client_id: client.id, name: `${marker} One` });
    const b = await createContact({ client_id: client.id, emails: [uniqueEmail(marker.toLowerCase())] });
    await createContact();

    const byClient = await http.get(`${BASE}/contacts`).query({ client_id: client.id }).set(bearer(token)).expect(200);
    expect(byClient.body.data.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
    expect(byClient.body.pagination.total).toBe(2);

    const byEmail = await http
      .get(`${BASE}/contacts`)
      .query({ email: b.emails[1]!.toUpperCase() })
      .set(bearer(token))
      .expect(200);
    expect(byEmail.body.data.map((c: { id: string }) => c.id)).toEqual([b.id]);

    const byQ = await http.get(`${BASE}/contacts`).query({ q: marker.toUpperCase() }).set(bearer(token)).expect(200);
    expect(byQ.body.data.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
  });

  test('When a contact is renamed or its addresses change, then q finds it by what it has now and no longer by what it had', async () => {
    const marker = unique('Quokka').replace(' ', '').toLowerCase();
    const contact = await createContact({ name: `${marker} Old` });
    const find = async (q: string) =>
      (await http.get(`${BASE}/contacts`).query({ q }).set(bearer(token)).expect(200)).body.data.map(
        (c: { id: string }) => c.id,
      );
    await http
      .patch(`${BASE}/contacts/${contact.id}`)
      .set(bearer(token))
      .send({ name: 'Renamed Person', emails: [contact.email, `${marker}.second@example.org`] })
      .expect(200);
    expect(await find(`${marker} old`)).toEqual([]);
    expect(await find(`${marker}.SECOND@`)).toEqual([contact.id]);
    await http
      .patch(`${BASE}/contacts/${contact.id}`)
      .set(bearer(token))
      .send({ emails: [contact.email] })
      .expect(200);
    expect(await find(`${marker}.second`)).toEqual([]);
    expect(await find(contact.email.toUpperCase())).toEqual([contact.id]);
  });

  test('When q is a word prefix, an address or its start, a local part, a piece of one or a domain, then it finds the contact', async () => {
    const tenant = await newTenant(desk);
    const domain = `${randomBytes(4).toString('hex')}.example`;
    const create = async (name: string, emails: string[]) =>
      (
        await http
          .post(`${BASE}/contacts`)
          .set(bearer(tenant.token))
          .send({ name, email: emails[0], emails })
          .expect(201)
      ).body.id as string;
    const ada = await create('Ada Lovelace', [`ada.lovelace@${domain}`, 'a-king+notes@analytical.example']);
    const charles = await create('Charles Babbage', [`charles@${domain}`]);
    const find = async (q: string) => {
      const response = await http.get(`${BASE}/contacts`).query({ q }).set(bearer(tenant.token)).expect(200);
      return { ids: response.body.data.map((c: { id: string }) => c.id), total: response.body.pagination.total };
    };

    for (const q of ['Lovel', 'lovelace ADA', `ADA.LOVELACE@${domain}`, 'ada.lovelace@', 'ada.love', 'notes', 'a-king'])
      expect([q, await find(q)]).toEqual([q, { ids: [ada], total: 1 }]);
    for (const q of [domain, `@${domain}`, domain.split('.')[0]!])
      expect([q, await find(q)]).toEqual([q, { ids: [charles, ada], total: 2 }]);
    expect(await find('analytical.example')).toEqual({ ids: [ada], total: 1 });
    for (const q of ['ovelace', 'lovelacex', 'ada babbage', 'lovelace@', '@@'])
      expect([q, await find(q)]).toEqual([q, { ids: [], total: 0 }]);
  });

  test(
    'When more contacts match q than the search counts, then the total stops there ' +
      'with total_exact false, and paging still reaches every match',
    async () => {
      const tenant = await newTenant(desk);
      const { rows } = await desk.db.pool.query<{ id: string }>(
        `INSERT INTO contacts (tenant_id, name, email, created_at)
        SELECT $1, 'Many Walrus ' || g, 'walrus' || g || '@many.example', now() - make_interval(secs => g)
         FROM generate_series(1, 1002) g RETURNING id`,
        [tenant.tenantId],
      );
      const all = await http
        .get(`${BASE}/contacts`)
        .query({ q: 'walrus', per_page: 100, page: 11 })
        .set(bearer(tenant.token))
        .expect(200);
      expect(all.body.pagination).toMatchObject({ total: 1000, total_exact: false });
      expect(all.body.data).toHaveLength(2);
      const few = await http.get(`${BASE}/contacts`).query({ q: 'walrus1001' }).set(bearer(tenant.token)).expect(200);
      expect(few.body.pagination).toMatchObject({ total: 1, total_exact: true });
      expect(rows).toHaveLength(1002);
    },
  );

  test("When contacts join, move between and leave clients, then each client's list total follows", async () => {
    const [one, two] = [await createClient(http, token), await createClient(http, token)];
    const total = async (clientId: string) =>
      (await http.get(`${BASE}/contacts`).query({ client_id: clientId.toUpperCase() }).set(bearer(token)).expect(200))
        .body.pagination.total;
    const a = await createContact({ client_id: one.id });
    await createContact({ client_id: one.id });
    expect([await total(one.id), await total(two.id)]).toEqual([2, 0]);
    await http.patch(`${BASE}/contacts/${a.id}`).set(bearer(token)).send({ client_id: two.id }).expect(200);
    expect([await total(one.id), await total(two.id)]).toEqual([1, 1]);
    await http.delete(`${BASE}/contacts/${a.id}`).set(bearer(token)).expect(204);
    expect([await total(one.id), await total(two.id)]).toEqual([1, 0]);
  });

  test('When paged with after, then the next page continues after that contact', async () => {
    const client = await createClient(http, token);
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createContact({ client_id: client.id }));
    const first = await http
      .get(`${BASE}/contacts`)
      .query({ client_id: client.id, per_page: 2 })
      .set(bearer(token))
      .expect(200);
    expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([made[2]!.id, made[1]!.id]);
    const next = await http
      .get(`${BASE}/contacts`)
      .query({ client_id: client.id, per_page: 2, after: made[1]!.id })
      .set(bearer(token))
      .expect(200);
    expect(next.body.data.map((c: { id: string }) => c.id)).toEqual([made[0]!.id]);
  });

  test('When another tenant reads a contact, then it answers 404', async () => {
    const contact = await createContact();
    const other = await newTenant(desk);
    await http.get(`${BASE}/contacts/${contact.id}`).set(bearer(other.token)).expect(404);
  });
});

describe('PATCH /contacts/:id', () => {
  test('When a new primary address is given, then it is added to emails and contact.updated is recorded', async () => {
    const contact = await createContact();
    const email = uniqueEmail('new');
    const response = await http
      .patch(`${BASE}/contacts/${contact.id}`)
      .set(bearer(token))
      .send({ email, phone: '+49 1' })
      .expect(200);
    expect(response.body).toMatchObject({ email, emails: [email, contact.email], phone: '+49 1' });
    const events = await desk.db.$queryRaw<
      { type: string }[]
    >`SELECT type FROM events WHERE resource_id = ${contact.id} ORDER BY seq`;
    expect(events.map((e) => e.type)).toEqual(['contact.created', 'contact.updated']);
  });

  test('When emails are replaced, then the old addresses are free for another contact', async () => {
    const contact = await createContact({ emails: [uniqueEmail('old')] });
    const old = contact.emails[1]!;
    await http.patch(`${BASE}/contacts/${contact.id}`).set(bearer(token)).send({ emails: [] }).expect(200);
    await createContact({ email: old });
  });

  test("When an address is another contact's, then it answers 409 and changes nothing", async () => {
    const a = await createContact();
    const b = await createContact();
    const before = await snapshot(desk);
    const response = await http
      .patch(`${BASE}/contacts/${b.id}`)
      .set(bearer(token))
      .send({ emails: [a.email.toUpperCase()] })
      .expect(409);
    expect(response.body.type).toBe('urn:msp:problem:email-taken');
    expect(await snapshot(desk)).toEqual(before);
  });
});

describe('DELETE /contacts/:id', () => {
  test('When the contact requested no tickets, then it answers 204 and contact.deleted is recorded', async () => {
    const contact = await createContact();
    await http.delete(`${BASE}/contacts/${contact.id}`).set(bearer(token)).expect(204);
    await http.get(`${BASE}/contacts/${contact.id}`).set(bearer(token)).expect(404);
    expect(await desk.db.contactEmail.count({ where: { contactId: contact.id } })).toBe(0);
    const events = await desk.db.$queryRaw<
      { type: string }[]
    >`SELECT type FROM events WHERE resource_id = ${contact.id} ORDER BY seq`;
    expect(events.map((e) => e.type)).toEqual(['contact.created', 'contact.deleted']);
  });

  test('When the contact requested a ticket, then it answers 409 and the contact stays', async () => {
    const contact = await createContact();
    await createTicket(http, token, { requester_id: contact.id });
    const before = await snapshot(desk);
    const response = await http.delete(`${BASE}/contacts/${contact.id}`).set(bearer(token)).expect(409);
    expect(response.body.type).toBe('urn:msp:problem:contact-in-use');
    expect(await snapshot(desk)).toEqual(before);
  });
});

describe('tickets with a requester', () => {
  test("When a ticket names requester_id without client_id, then it takes the contact's client and shows the requester", async () => {
    const client = await createClient(http, token);
    const contact = await createContact({ client_id: client.id, name: 'Anna Berger' });
    const response = await http
      .post(`${BASE}/tickets`)
      .set(bearer(token))
      .send({ title: 'VPN', requester_id: contact.id, cc: ['Boss@Contoso.example'] })
      .expect(201);
    expect(response.body).toMatchObject({
      client_id: client.id,
      requester: { id: contact.id, name: 'Anna Berger', email: contact.email },
      cc: ['boss@contoso.example'],
      source: 'api',
      mailbox_id: null,
      follow_up_of: null,
    });
    const read = await http.get(`${BASE}/tickets/${response.body.id}`).set(bearer(token)).expect(200);
    expect(read.body.requester).toEqual({ id: contact.id, name: 'Anna Berger', email: contact.email });
    const listed = await http.get(`${BASE}/tickets`).query({ requester_id: contact.id }).set(bearer(token)).expect(200);
    expect(listed.body.data.map((t: { id: string }) => t.id)).toEqual([response.body.id]);
    expect(listed.body.pagination.total).toBe(1);
    const bySource = await http
      .get(`${BASE}/tickets`)
      .query({ source: 'email', client_id: client.id })
      .set(bearer(token))
      .expect(200);
    expect(bySource.body.data).toEqual([]);
  });

  test("When a ticket names an unknown requester_email, then a contact is created under the ticket's client", async () => {
    const client = await createClient(http, token);
    const email = uniqueEmail('new.requester');
    const response = await http
      .post(`${BASE}/tickets`)
      .set(bearer(token))
      .send({ title: 'Mail', client_id: client.id, requester_email: email })
      .expect(201);
    const contacts = await http.get(`${BASE}/contacts`).query({ email }).set(bearer(token)).expect(200);
    expect(contacts.body.data).toEqual([expect.objectContaining({ email, client_id: client.id })]);
    expect(response.body.requester).toEqual({ id: contacts.body.data[0].id, name: email.split('@')[0], email });
  });

  test('When a ticket names a known requester_email in another case, then that contact is the requester', async () => {
    const contact = await createContact({ client_id: (await createClient(http, token)).id });
    const response = await http
      .post(`${BASE}/tickets`)
      .set(bearer(token))
      .send({ title: 'Again', requester_email: contact.email.toUpperCase() })
      .expect(201);
    expect(response.body.requester.id).toBe(contact.id);
  });

  test.each([
    ['no client and a requester without one', async () => ({ requester_id: (await createContact()).id }), 400],
    ['no client and an unknown requester_email', async () => ({ requester_email: uniqueEmail() }), 400],
    [
      'both requester_id and requester_email',
      async () => ({
        requester_id: (await createContact()).id,
        requester_email: uniqueEmail(),
        client_id: (await createClient(http, token)).id,
      }),
      400,
    ],
    [
      'a requester_id of no contact of the tenant',
      async () => ({
        requester_id: '00000000-0000-4000-8000-000000000000',
        client_id: (await createClient(http, token)).id,
      }),
      422,
    ],
  ] as const)('When the ticket has %s, then it answers %s and stores nothing', async (_case, body, status) => {
    const sent = { title: 'x', ...(await body()) };
    const before = await snapshot(desk);
    await http.post(`${BASE}/tickets`).set(bearer(token)).send(sent).expect(status);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When a technician changes cc and the requester, then the ticket shows them and ticket.updated has the changes', async () => {
    const ticket = await createTicket(http, token);
    const contact = await createContact();
    const response = await http
      .patch(`${BASE}/tickets/${ticket.id}`)
      .set(bearer(token))
      .send({ cc: ['a@x.example'], requester_id: contact.id })
      .expect(200);
    expect(response.body).toMatchObject({ cc: ['a@x.example'], requester: { id: contact.id } });
    const [event] = await desk.db.$queryRaw<
      { data: { changes: Record<string, unknown> } }[]
    >`SELECT data FROM events WHERE resource_id = ${ticket.id} AND type = 'ticket.updated'`;
    expect(Object.keys(event!.data.changes)).toEqual(expect.arrayContaining(['cc', 'requester']));
  });
});
