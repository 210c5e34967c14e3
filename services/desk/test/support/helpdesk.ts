import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { seedWebhook } from '@msp/testkit';
import { api, type Api } from './api';
import { startDesk, type TestDesk } from './desk';

export const BASE = '/api/v1';

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** SLA targets of every priority (minutes). */
export const TARGETS = {
  urgent: { first_response_minutes: 15, resolution_minutes: 120 },
  high: { first_response_minutes: 30, resolution_minutes: 240 },
  normal: { first_response_minutes: 60, resolution_minutes: 480 },
  low: { first_response_minutes: 240, resolution_minutes: 2400 },
};

/** A value no other test uses. */
export const unique = (label: string) => `${label} ${randomBytes(5).toString('hex')}`;
export const uniqueEmail = (label = 'tech') => `${label}.${randomBytes(5).toString('hex')}@example.com`;

export async function createClient(http: Api, token: string, body: Record<string, unknown> = {}) {
  const response = await http
    .post(`${BASE}/clients`)
    .set(bearer(token))
    .send({ name: unique('Client'), ...body })
    .expect(201);
  return response.body as { id: string; name: string };
}

export async function createUser(http: Api, token: string, body: Record<string, unknown> = {}) {
  const response = await http
    .post(`${BASE}/users`)
    .set(bearer(token))
    .send({ name: unique('Tech'), email: uniqueEmail(), ...body })
    .expect(201);
  return response.body as { id: string; name: string; email: string };
}

/** A ticket of a new client unless `client_id` is given. */
export async function createTicket(http: Api, token: string, body: Record<string, unknown> = {}) {
  const client_id = body.client_id ?? (await createClient(http, token)).id;
  const response = await http
    .post(`${BASE}/tickets`)
    .set(bearer(token))
    .send({ title: unique('Printer jams'), client_id, ...body })
    .expect(201);
  return response.body as { id: string; number: number; status: string; client_id: string; assignee_id: string | null };
}

/** A tenant's API client with every scope and an access token for it. */
export async function newTenant(desk: TestDesk) {
  const client = await desk.createClient();
  return { ...client, token: await desk.token(client) };
}

const TABLES = [
  'tenants',
  'clients',
  'client_email_domains',
  'contacts',
  'contact_emails',
  'mailboxes',
  'inbound_emails',
  'attachments',
  'users',
  'tickets',
  'ticket_sequences',
  'ticket_counts',
  'ticket_comments',
  'time_entries',
  'events',
  'calendars',
  'sla_policies',
  'ticket_slas',
  'ticket_sla_due_counts',
  'list_counts',
  'time_entry_minutes',
];

/** Every row desk's helpdesk keeps, to prove that a rejected request changed nothing. */
export async function snapshot(desk: TestDesk): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const rows = await desk.db.$queryRawUnsafe<{ row: unknown }[]>(
      `SELECT to_jsonb(t) AS row FROM "${table}" t ORDER BY to_jsonb(t)::text`,
    );
    out[table] = rows.map((r) => r.row);
  }
  return out;
}

/** A fresh desk, its conformance-checked client, and one tenant with a token holding every scope. */
export async function startHelpdesk() {
  const desk = await startDesk();
  const http = api(desk);
  return { desk, http, ...(await newTenant(desk)) };
}

/**
 * One of every resource desk keeps, for the suites that walk every route: a client, a technician, a ticket with a
 * comment and a time entry, a second API client, a webhook with a delivery.
 */
export async function seedEveryResource(desk: TestDesk, token: string) {
  const post = async (path: string, body: object) =>
    (await request(desk.app).post(`${BASE}${path}`).set(bearer(token)).send(body).expect(201)).body as { id: string };
  const client = await post('/clients', { name: unique('Client') });
  const user = await post('/users', { name: unique('Tech'), email: uniqueEmail() });
  const ticket = await post('/tickets', { title: unique('Printer jams'), client_id: client.id, assignee_id: user.id });
  await post(`/tickets/${ticket.id}/comments`, { body: 'Toner replaced.' });
  // A file of a mail, as inbound processing keeps it (the processing itself runs against Dovecot in email-attachments.test.ts).
  await desk.db.$executeRawUnsafe(
    `INSERT INTO attachments (tenant_id, ticket_id, filename, content_type, size_bytes, content)
     SELECT tenant_id, id, 'log.txt', 'text/plain', 8, convert_to('It jams.', 'UTF8') FROM tickets WHERE id = $1::uuid`,
    ticket.id,
  );
  await post(`/tickets/${ticket.id}/time-entries`, { user_id: user.id, minutes: 30 });
  await post('/api-clients', { name: unique('Reporting'), scopes: ['read:tickets'] });
  const calendar = await post('/calendars', {
    name: unique('Office hours'),
    time_zone: 'Europe/Berlin',
    hours: { mon: [{ start: '08:00', end: '17:00' }] },
    holidays: { country: 'DE', region: 'DE-BY' },
  });
  await post('/sla-policies', { name: unique('Standard'), calendar_id: calendar.id, targets: TARGETS });
  await post('/contacts', { name: unique('Requester'), email: uniqueEmail(), client_id: client.id });
  const mailbox = await post('/mailboxes', {
    address: uniqueEmail(),
    imap: { host: '127.0.0.1', port: 143, tls: 'starttls', username: 'desk', password: 'imap-pass' },
    smtp: { host: '127.0.0.1', port: 587, tls: 'starttls' },
  });
  // A message as a poll records it (the polls themselves run against Dovecot in email-inbound.test.ts).
  await desk.db.$executeRawUnsafe(
    `INSERT INTO inbound_emails (tenant_id, mailbox_id, message_id, "from", "to", subject, size_bytes, status, raw)
     SELECT tenant_id, id, $2, 'Ada <ada@example.com>', ARRAY[address], 'Printer jams', 48, 'received',
       convert_to(E'Subject: Printer jams\\r\\n\\r\\nIt jams.', 'UTF8')
     FROM mailboxes WHERE id = $1::uuid`,
    mailbox.id,
    `<${randomBytes(6).toString('hex')}@example.com>`,
  );
  await seedWebhook(desk.app, `Bearer ${token}`);
}
