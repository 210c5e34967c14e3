import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createTicket, snapshot, startHelpdesk } from './support/helpdesk';

let desk: TestDesk;
let http: Api;
let token: string;
let clientId: string;

beforeAll(async () => ({ desk, http, token, clientId } = await startHelpdesk()));
afterAll(() => desk.close());

const comments = (ticketId: string) => `${BASE}/tickets/${ticketId}/comments`;

describe('POST /tickets/:id/comments', () => {
  test('When a comment is posted, then it answers 201 with Location, internal false by default and the caller as author', async () => {
    const ticket = await createTicket(http, token);

    const response = await http
      .post(comments(ticket.id))
      .set(bearer(token))
      .send({ body: 'Rebooted the router.' })
      .expect(201);

    expect(response.body).toEqual({
      id: expect.any(String),
      ticket_id: ticket.id,
      body: 'Rebooted the router.',
      internal: false,
      author: clientId,
      created_at: expect.any(String),
      merged_from_ticket_id: null,
      author_type: 'technician',
      author_contact_id: null,
      attachments: [],
    });
    expect(response.headers.location).toBe(`${comments(ticket.id)}/${response.body.id}`);
    const stored = await desk.db.comment.findUniqueOrThrow({ where: { id: response.body.id } });
    expect(stored).toMatchObject({
      ticketId: ticket.id,
      body: 'Rebooted the router.',
      internal: false,
      author: clientId,
    });
    const read = await http.get(response.headers.location!).set(bearer(token)).expect(200);
    expect(read.body).toEqual(response.body);
  });

  test('When an internal note is posted, then it is stored as internal', async () => {
    const ticket = await createTicket(http, token);
    const response = await http
      .post(comments(ticket.id))
      .set(bearer(token))
      .send({ body: 'Customer is difficult.', internal: true })
      .expect(201);
    expect(response.body.internal).toBe(true);
    expect((await desk.db.comment.findUniqueOrThrow({ where: { id: response.body.id } })).internal).toBe(true);
  });

  test.each([
    ['no body', {}],
    ['an empty body', { body: '' }],
    ['a body over 10,000 characters', { body: 'x'.repeat(10_001) }],
    ['internal as a string', { body: 'x', internal: 'yes' }],
    ['an unknown field', { body: 'x', author: 'someone else' }],
    ['a NUL character', { body: 'x\u0000y' }],
  ])('When the comment has %s, then it answers 400 and stores nothing', async (_case, body) => {
    const ticket = await createTicket(http, token);
    const before = await snapshot(desk);
    await http.post(comments(ticket.id)).set(bearer(token)).send(body).expect(400);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the ticket is unknown, then it answers 404 and stores nothing', async () => {
    const before = await snapshot(desk);
    await http
      .post(comments('00000000-0000-4000-8000-000000000000'))
      .set(bearer(token))
      .send({ body: 'x' })
      .expect(404);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When the ticket is closed, then it answers 422: a closed ticket takes no more comments', async () => {
    const ticket = await createTicket(http, token);
    await http.patch(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).send({ status: 'closed' }).expect(200);
    const before = await snapshot(desk);
    const response = await http
      .post(comments(ticket.id))
      .set(bearer(token))
      .send({ body: 'One more thing' })
      .expect(422);
    expect(response.body).toMatchObject({
      type: 'urn:msp:problem:ticket-closed',
      current_status: 'closed',
      allowed_transitions: [],
    });
    expect(await snapshot(desk)).toEqual(before);
  });
});

describe('GET /tickets/:id/comments', () => {
  test('When comments are listed, then they come oldest first, paged, and only those of that ticket', async () => {
    const ticket = await createTicket(http, token);
    const other = await createTicket(http, token);
    const posted: string[] = [];
    for (const body of ['first', 'second', 'third']) {
      posted.push((await http.post(comments(ticket.id)).set(bearer(token)).send({ body }).expect(201)).body.id);
    }
    await http.post(comments(other.id)).set(bearer(token)).send({ body: 'elsewhere' }).expect(201);

    const all = await http.get(comments(ticket.id)).set(bearer(token)).expect(200);
    expect(all.body.data.map((c: { id: string }) => c.id)).toEqual(posted);
    expect(all.body.pagination).toEqual({ page: 1, per_page: 25, total: 3, total_pages: 1 });

    const second = await http
      .get(`${comments(ticket.id)}?per_page=2&page=2`)
      .set(bearer(token))
      .expect(200);
    expect(second.body.data.map((c: { body: string }) => c.body)).toEqual(['third']);
    expect(second.headers.link).toContain('rel="prev"');
  });

  test('When the ticket has no comments, then the list is empty; when it is unknown, then it answers 404', async () => {
    const ticket = await createTicket(http, token);
    const empty = await http.get(comments(ticket.id)).set(bearer(token)).expect(200);
    expect(empty.body).toEqual({ data: [], pagination: { page: 1, per_page: 25, total: 0, total_pages: 0 } });
    await http.get(comments('00000000-0000-4000-8000-000000000000')).set(bearer(token)).expect(404);
  });

  test('When a comment is read under another ticket or with an unknown id, then it answers 404', async () => {
    const ticket = await createTicket(http, token);
    const other = await createTicket(http, token);
    const comment = (await http.post(comments(ticket.id)).set(bearer(token)).send({ body: 'x' }).expect(201)).body;
    await http
      .get(`${comments(other.id)}/${comment.id}`)
      .set(bearer(token))
      .expect(404);
    await http
      .get(`${comments(ticket.id)}/00000000-0000-4000-8000-000000000000`)
      .set(bearer(token))
      .expect(404);
  });
});
