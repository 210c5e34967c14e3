import { TICKET_STATUSES, type TicketStatus } from '../src/tickets/ticket-status';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createClient, createTicket, startHelpdesk } from './support/helpdesk';

// The status machine as docs/api.md gives it, written out independently of the implementation's table.
const ALLOWED: Record<TicketStatus, TicketStatus[]> = {
  open: ['in_progress', 'pending', 'resolved', 'closed'],
  in_progress: ['open', 'pending', 'resolved'],
  pending: ['open', 'in_progress', 'resolved'],
  resolved: ['open', 'closed'],
  closed: [],
};

let desk: TestDesk;
let http: Api;
let token: string;
let tenantId: string;
let clientId: string;

beforeAll(async () => {
  ({ desk, http, token, tenantId } = await startHelpdesk());
  clientId = (await createClient(http, token)).id;
});
afterAll(() => desk.close());

/** A new ticket brought to `status` by one legal move from open. */
async function ticketIn(status: TicketStatus) {
  const ticket = await createTicket(http, token, { client_id: clientId });
  if (status === 'open') return ticket;
  return (await http.patch(`${BASE}/tickets/${ticket.id}`).set(bearer(token)).send({ status }).expect(200)).body;
}

const move = (id: string, status: TicketStatus) =>
  http.patch(`${BASE}/tickets/${id}`).set(bearer(token)).send({ status });
const stored = (id: string) => desk.db.ticket.findUniqueOrThrow({ where: { id } });

const pairs = TICKET_STATUSES.flatMap((from) =>
  TICKET_STATUSES.map((to) => [from, to] as [TicketStatus, TicketStatus]),
);
const legal = pairs.filter(([from, to]) => ALLOWED[from].includes(to));
const same = pairs.filter(([from, to]) => from === to);
const illegal = pairs.filter(([from, to]) => from !== to && !ALLOWED[from].includes(to));

test('The table covers all 25 pairs', () => {
  expect(legal.length + same.length + illegal.length).toBe(25);
  expect(legal).toHaveLength(12);
});

describe.each(legal)('When a ticket in %s is moved to %s', (from, to) => {
  test('then it answers 200, stores the new status and keeps the timestamps in step', async () => {
    const ticket = await ticketIn(from);
    const response = await move(ticket.id, to).expect(200);
    const row = await stored(ticket.id);

    expect(response.body.status).toBe(to);
    expect(row.status).toBe(to);
    expect(row.updatedAt.getTime()).toBeGreaterThanOrEqual(new Date(ticket.updated_at).getTime());
    if (to === 'resolved') expect(row.resolvedAt).toEqual(row.updatedAt);
    if (to === 'open') expect(row.resolvedAt).toBeNull(); // reopened: no longer resolved
    if (to === 'closed') {
      expect(row.closedAt).toEqual(row.updatedAt);
      // Closing a resolved ticket keeps when it was resolved; closing an open one never resolved it.
      expect(row.resolvedAt?.toISOString() ?? null).toBe(from === 'resolved' ? ticket.resolved_at : null);
    } else {
      expect(row.closedAt).toBeNull();
    }
    if (to !== 'resolved' && to !== 'open') expect(row.resolvedAt?.toISOString() ?? null).toBe(ticket.resolved_at);
    expect(response.body).toMatchObject({
      resolved_at: row.resolvedAt?.toISOString() ?? null,
      closed_at: row.closedAt?.toISOString() ?? null,
    });
  });
});

describe.each(same)('When a ticket in %s is set to %s again', (from) => {
  test('then it answers 200 and nothing changes, not even updated_at', async () => {
    const ticket = await ticketIn(from);
    const response = await move(ticket.id, from).expect(200);
    expect(response.body).toEqual(ticket);
    expect((await stored(ticket.id)).updatedAt.toISOString()).toBe(ticket.updated_at);
  });
});

describe.each(illegal)('When a ticket in %s is moved to %s', (from, to) => {
  test('then it answers 422 listing the allowed next states and the ticket is unchanged', async () => {
    const ticket = await ticketIn(from);
    const response = await move(ticket.id, to).expect(422);

    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      type: from === 'closed' ? 'urn:msp:problem:ticket-closed' : 'urn:msp:problem:illegal-transition',
      status: 422,
      current_status: from,
      allowed_transitions: ALLOWED[from],
      request_id: response.headers['x-request-id'],
    });
    const row = await stored(ticket.id);
    expect(row.status).toBe(from);
    expect(row.updatedAt.toISOString()).toBe(ticket.updated_at);
  });
});

test('When a closed ticket is changed in any other field, then it answers 422: a closed ticket is final', async () => {
  const ticket = await ticketIn('closed');
  const response = await http
    .patch(`${BASE}/tickets/${ticket.id}`)
    .set(bearer(token))
    .send({ title: 'Reworded' })
    .expect(422);
  expect(response.body).toMatchObject({ type: 'urn:msp:problem:ticket-closed', allowed_transitions: [] });
  expect((await stored(ticket.id)).title).toBe(ticket.title);
});

test('When a ticket goes resolved → open → resolved, then resolved_at is cleared and stamped anew', async () => {
  const ticket = await ticketIn('resolved');
  const reopened = (await move(ticket.id, 'open').expect(200)).body;
  expect(reopened.resolved_at).toBeNull();
  const resolvedAgain = (await move(ticket.id, 'resolved').expect(200)).body;
  expect(Date.parse(resolvedAgain.resolved_at)).toBeGreaterThanOrEqual(Date.parse(ticket.resolved_at));
});

test('When every move above has run, then the per-status totals of the list equal the stored tickets', async () => {
  const actual = await desk.db.ticket.groupBy({ by: ['status'], where: { tenantId }, _count: true });
  for (const status of TICKET_STATUSES) {
    const response = await http.get(`${BASE}/tickets?status=${status}&per_page=1`).set(bearer(token)).expect(200);
    expect(response.body.pagination.total).toBe(actual.find((a) => a.status === status)?._count ?? 0);
  }
});
