import request from 'supertest';
import { startDovecot, startSmtpReceiver, type Dovecot, type SmtpReceiver } from '@msp/peers';
import { createLogger } from '@msp/http';
import { testWebhookSecrets } from '@msp/testkit';
import { createSmtpSender } from '../src/mailboxes/mail-sender';
import { createOutboundSender } from '../src/mailboxes/outbound';
import { createStore } from '../src/store';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import {
  BASE,
  bearer,
  createClient,
  newTenant,
  snapshot,
  startHelpdesk,
  unique,
  uniqueEmail,
} from './support/helpdesk';

/*
 * What inbound mail leaves besides tickets and comments: its files (kept, listed, downloaded), the
 * replay of a message that became neither, the acknowledgement of a new ticket, and desk's own mail
 * coming back. Against a real Dovecot (IMAP) and a real SMTP receiver.
 */

const USER = 'help@msp.example';
const PASSWORD = 'help-secret';

let desk: TestDesk;
let http: Api;
let dovecot: Dovecot;
let smtp: SmtpReceiver;

beforeAll(async () => {
  ({ desk, http } = await startHelpdesk());
  dovecot = await startDovecot({ users: [{ username: USER, password: PASSWORD }] });
  smtp = await startSmtpReceiver();
}, 60_000);
afterAll(async () => {
  await smtp?.stop();
  await dovecot?.stop();
  await desk.close();
});

/** The send job's work, as the service's loop runs it. */
const sendDue = () =>
  createOutboundSender({
    store: createStore(desk.database),
    sender: createSmtpSender(),
    secrets: testWebhookSecrets(),
    logger: createLogger({ service: 'desk', level: 'error' }),
  }).sendDue();

let counter = 0;
const newMessageId = () => `m${Date.now()}.${++counter}.${Math.random().toString(36).slice(2)}@contoso.example`;

/** A plain message; `body` is the whole body (after the blank line), `headers` override the defaults. */
function message(headers: Record<string, string>, body = 'Hello,\r\nthe printer jams again.\r\n') {
  const messageId = headers['Message-ID']?.replace(/[<>]/g, '') ?? newMessageId();
  const all: Record<string, string> = {
    From: 'Anna Berger <anna@contoso.example>',
    To: USER,
    Subject: 'Printer jams',
    Date: new Date().toUTCString(),
    'MIME-Version': '1.0',
    'Content-Type': 'text/plain; charset=utf-8',
    ...headers,
    'Message-ID': `<${messageId}>`,
  };
  const head = Object.entries(all)
    .map(([key, value]) => `${key}: ${value}`)
    .join('\r\n');
  return { raw: `${head}\r\n\r\n${body}`, messageId };
}

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('not really a picture, but bytes all the same'),
]);
const LOG = Buffer.from('2026-11-02 10:00 paper jam in tray 2\n');

/** A message with a text part and two files (a PNG and a log). */
function withFiles(headers: Record<string, string>, text = 'See the screenshot.') {
  const boundary = 'b1_files';
  const base64 = (bytes: Buffer) => bytes.toString('base64').replace(/.{76}/g, '$&\r\n');
  return message(
    { ...headers, 'Content-Type': `multipart/mixed; boundary="${boundary}"` },
    `--${boundary}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${text}\r\n` +
      `--${boundary}\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename="screen ` +
      `shot.png"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64(PNG)}\r\n` +
      `--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; ` +
      `filename="../../printer.log"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64(LOG)}\r\n` +
      `--${boundary}--\r\n`,
  );
}

interface InboundEntry {
  id: string;
  message_id: string;
  status: string;
  reason: string | null;
  ticket_id: string | null;
  comment_id: string | null;
}

/** GET /attachments/{id} with its bytes as a Buffer. */
const download = (token: string, id: string) =>
  request(desk.app)
    .get(`${BASE}/attachments/${id}`)
    .set(bearer(token))
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });

/** Polls the mailbox through the API and waits until the inbound log has `count` settled entries of it. */
async function pollUntil(token: string, mailboxId: string, count: number): Promise<InboundEntry[]> {
  await http.post(`${BASE}/mailboxes/${mailboxId}/poll`).set(bearer(token)).expect(202);
  for (let i = 0; i < 600; i++) {
    const log = await http
      .get(`${BASE}/inbound-emails`)
      .query({ mailbox_id: mailboxId, per_page: 100 })
      .set(bearer(token))
      .expect(200);
    const settled = log.body.data.filter((entry: { status: string }) => entry.status !== 'received');
    const polling = await desk.db.mailbox.findUniqueOrThrow({ where: { id: mailboxId } });
    if (settled.length >= count && polling.lockedUntil === null) return log.body.data;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the poll did not finish');
}

/** A fresh tenant with a client owning a domain, and a mailbox on Dovecot that sends through the SMTP receiver. */
async function setup(mailbox: Record<string, unknown> = {}) {
  const tenant = await newTenant(desk);
  const domain = `${unique('contoso').replace(' ', '-')}.example`;
  const client = await createClient(http, tenant.token, { email_domains: [domain] });
  const box = (
    await http
      .post(`${BASE}/mailboxes`)
      .set(bearer(tenant.token))
      .send({
        address: USER,
        imap: { host: dovecot.host, port: dovecot.port, tls: 'none', username: USER, password: PASSWORD },
        smtp: { host: smtp.host, port: smtp.port, tls: 'none' },
        ...mailbox,
      })
      .expect(201)
  ).body as { id: string };
  return { tenant, domain, client, box, sender: `anna@${domain}` };
}

describe('attachments', () => {
  test(
    'When a mail with files opens a ticket and a reply with a file comments on it, then both list ' +
      'their files and GET /attachments/{id} answers the bytes as a download',
    async () => {
      const { tenant, box, sender } = await setup();
      const first = withFiles({ From: `Anna Berger <${sender}>`, Subject: 'Printer jams' });
      dovecot.appendMessage(USER, 'INBOX', first.raw);
      const log = await pollUntil(tenant.token, box.id, 1);
      const ticketId = log[0]!.ticket_id!;
      const ticket = (await http.get(`${BASE}/tickets/${ticketId}`).set(bearer(tenant.token)).expect(200)).body;
      expect(ticket.description).toBe('See the screenshot.');
      expect(ticket.attachments).toEqual([
        { id: expect.any(String), filename: 'screen shot.png', content_type: 'image/png', size_bytes: PNG.length },
        {
          id: expect.any(String),
          filename: 'printer.log',
          content_type: 'application/octet-stream',
          size_bytes: LOG.length,
        },
      ]);

      // The bytes are read raw: the conformance client reads only text bodies (the route documents `*/*`).
      const log2 = await download(tenant.token, ticket.attachments[1].id).expect(200);
      expect(log2.headers['content-type']).toMatch(/^application\/octet-stream/);
      expect(log2.headers['content-disposition']).toBe('attachment; filename="printer.log"');
      expect(log2.headers['x-content-type-options']).toBe('nosniff');
      expect((log2.body as Buffer).equals(LOG)).toBe(true);
      // The picture keeps its type, and is a download all the same.
      const png = await download(tenant.token, ticket.attachments[0].id).expect(200);
      expect(png.headers['content-type']).toMatch(/^image\/png/);
      expect(png.headers['content-disposition']).toBe('attachment; filename="screen shot.png"');
      expect(png.headers['x-content-type-options']).toBe('nosniff');
      expect((png.body as Buffer).equals(PNG)).toBe(true);

      const reply = withFiles(
        { From: sender, Subject: 'Re: Printer jams', 'In-Reply-To': `<${first.messageId}>` },
        'Here is the log again.',
      );
      dovecot.appendMessage(USER, 'INBOX', reply.raw);
      const after = await pollUntil(tenant.token, box.id, 2);
      const entry = after.find((e) => e.message_id === reply.messageId)!;
      const comments = (await http.get(`${BASE}/tickets/${ticketId}/comments`).set(bearer(tenant.token)).expect(200))
        .body.data;
      expect(comments).toEqual([
        expect.objectContaining({
          id: entry.comment_id,
          body: 'Here is the log again.',
          attachments: [
            expect.objectContaining({ filename: 'screen shot.png' }),
            expect.objectContaining({ filename: 'printer.log' }),
          ],
        }),
      ]);

      const listed = await http
        .get(`${BASE}/attachments`)
        .query({ ticket_id: ticketId })
        .set(bearer(tenant.token))
        .expect(200);
      expect(listed.body.data).toHaveLength(4);
      expect(
        listed.body.data.filter((a: { comment_id: string | null }) => a.comment_id === entry.comment_id),
      ).toHaveLength(2);
    },
  );

  test('When another tenant, or a caller without read:tickets, asks for an attachment, then it answers 404 or 403 and no bytes', async () => {
    const { tenant, box, sender } = await setup();
    dovecot.appendMessage(USER, 'INBOX', withFiles({ From: sender }).raw);
    const log = await pollUntil(tenant.token, box.id, 1);
    const ticket = (await http.get(`${BASE}/tickets/${log[0]!.ticket_id}`).set(bearer(tenant.token)).expect(200)).body;
    const other = await newTenant(desk);
    const foreign = await http
      .get(`${BASE}/attachments/${ticket.attachments[0].id}`)
      .set(bearer(other.token))
      .expect(404);
    expect(foreign.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(
      (await http.get(`${BASE}/attachments`).query({ ticket_id: ticket.id }).set(bearer(other.token)).expect(200)).body
        .data,
    ).toEqual([]);
    const admin = await desk.createClient({ tenant: tenant.tenant, scopes: ['admin:tenant'] });
    const writer = await desk.createClient({ tenant: tenant.tenant, scopes: ['read:users'] });
    await download(await desk.token(admin), ticket.attachments[0].id).expect(200);
    await http
      .get(`${BASE}/attachments/${ticket.attachments[0].id}`)
      .set(bearer(await desk.token(writer)))
      .expect(403);
  });

  test("When a mail's files take it over max_message_bytes, then it is logged failed/too_large and nothing of it is kept", async () => {
    const { tenant, box, sender } = await setup({ max_message_bytes: 10_000 });
    const big = withFiles({ From: sender }, `Big:\r\n${'y'.repeat(76)}\r\n`.repeat(150));
    dovecot.appendMessage(USER, 'INBOX', big.raw);
    const log = await pollUntil(tenant.token, box.id, 1);
    expect(log[0]).toMatchObject({ status: 'failed', reason: 'too_large', ticket_id: null });
    expect(await desk.db.attachment.count({ where: { tenantId: tenant.tenantId } })).toBe(0);
  });
});

describe('reply text', () => {
  test.each([
    [
      'French',
      'Merci, ça marche.\r\n\r\nLe lun. 2 nov. 2026 à 10:00, Helpdesk <help@msp.example> a écrit :\r\n> Quel modèle ?\r\n',
    ],
    [
      'German',
      'Danke, geht wieder.\r\n\r\nAm 02.11.2026 um 10:00 schrieb Helpdesk <help@msp.example>:\r\n> Welches Modell?\r\n',
    ],
    [
      'Outlook',
      'Thanks, fixed.\r\n\r\n-----Original Message-----\r\nFrom: Helpdesk\r\nSubject: Printer\r\n\r\nWhat model?\r\n',
    ],
  ])(
    'When a %s reply quotes the mail it answers, then its comment is the new text only (email-reply-parser)',
    async (_case, body) => {
      const { tenant, box, sender } = await setup();
      const first = message({ From: sender });
      dovecot.appendMessage(USER, 'INBOX', first.raw);
      const [opened] = await pollUntil(tenant.token, box.id, 1);
      dovecot.appendMessage(
        USER,
        'INBOX',
        message({ From: sender, Subject: 'Re: Printer jams', 'In-Reply-To': `<${first.messageId}>` }, body).raw,
      );
      await pollUntil(tenant.token, box.id, 2);
      const comments = (
        await http.get(`${BASE}/tickets/${opened!.ticket_id}/comments`).set(bearer(tenant.token)).expect(200)
      ).body.data;
      expect(comments.map((c: { body: string }) => c.body)).toEqual([body.split('\r\n')[0]]);
    },
  );
});

describe('replay', () => {
  test(
    'When a quarantined mail is replayed as create_ticket with a client, then the entry is ' +
      'processed with the new ticket, and replaying it again is a 409',
    async () => {
      const { tenant, box, client } = await setup({ unknown_sender: 'quarantine' });
      const stranger = uniqueEmail('stranger');
      const mail = withFiles({ From: `Sam Stranger <${stranger}>`, Subject: 'Need help' });
      dovecot.appendMessage(USER, 'INBOX', mail.raw);
      const [entry] = await pollUntil(tenant.token, box.id, 1);
      expect(entry).toMatchObject({ status: 'quarantined', reason: 'unknown_sender' });

      // Without a client nobody knows the sender: refused, nothing changed.
      const before = await snapshot(desk);
      const refused = await http
        .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
        .set(bearer(tenant.token))
        .send({ action: 'create_ticket' })
        .expect(422);
      expect(refused.body.type).toBe('urn:msp:problem:client-required');
      expect(await snapshot(desk)).toEqual(before);

      const replayed = await http
        .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
        .set(bearer(tenant.token))
        .send({ action: 'create_ticket', client_id: client.id })
        .expect(200);
      expect(replayed.body).toMatchObject({
        id: entry!.id,
        status: 'processed',
        reason: null,
        ticket_id: expect.any(String),
        comment_id: null,
      });
      const ticket = (
        await http.get(`${BASE}/tickets/${replayed.body.ticket_id}`).set(bearer(tenant.token)).expect(200)
      ).body;
      expect(ticket).toMatchObject({
        title: 'Need help',
        description: 'See the screenshot.',
        client_id: client.id,
        source: 'email',
        mailbox_id: box.id,
        requester: { name: 'Sam Stranger', email: stranger },
      });
      expect(ticket.attachments).toHaveLength(2);
      expect(
        (await http.get(`${BASE}/inbound-emails/${entry!.id}`).set(bearer(tenant.token)).expect(200)).body.status,
      ).toBe('processed');

      const again = await http
        .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
        .set(bearer(tenant.token))
        .send({ action: 'create_ticket', client_id: client.id })
        .expect(409);
      expect(again.body.type).toBe('urn:msp:problem:already-processed');
      expect(await desk.db.ticket.count({ where: { tenantId: tenant.tenantId } })).toBe(1);
    },
  );

  test('When a quarantined mail is replayed as attach to a ticket, then it becomes a public comment of the sender there', async () => {
    const { tenant, box, client } = await setup({ unknown_sender: 'quarantine' });
    const own = (
      await http
        .post(`${BASE}/tickets`)
        .set(bearer(tenant.token))
        .send({ title: 'Ours', client_id: client.id })
        .expect(201)
    ).body;
    const stranger = uniqueEmail('stranger');
    dovecot.appendMessage(
      USER,
      'INBOX',
      message({ From: stranger }, 'More about it.\r\n\r\nOn Mon, 2 Nov 2026 Helpdesk wrote:\r\n> What model?\r\n').raw,
    );
    const [entry] = await pollUntil(tenant.token, box.id, 1);
    const replayed = await http
      .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
      .set(bearer(tenant.token))
      .set('Idempotency-Key', `replay-${entry!.id}`)
      .send({ action: 'attach', ticket_id: own.id })
      .expect(200);
    expect(replayed.body).toMatchObject({ status: 'processed', ticket_id: own.id, comment_id: expect.any(String) });
    // The same key again answers the same, and makes no second comment.
    const repeated = await http
      .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
      .set(bearer(tenant.token))
      .set('Idempotency-Key', `replay-${entry!.id}`)
      .send({ action: 'attach', ticket_id: own.id })
      .expect(200);
    expect(repeated.body).toEqual(replayed.body);
    const comments = (await http.get(`${BASE}/tickets/${own.id}/comments`).set(bearer(tenant.token)).expect(200)).body
      .data;
    expect(comments).toEqual([
      expect.objectContaining({
        id: replayed.body.comment_id,
        body: 'More about it.',
        internal: false,
        author_type: 'contact',
        author: stranger,
      }),
    ]);
  });

  test.each([
    ['attach without ticket_id', () => ({ action: 'attach' }), 400],
    [
      'attach to a ticket that does not exist',
      () => ({ action: 'attach', ticket_id: '00000000-0000-4000-8000-000000000000' }),
      422,
    ],
    [
      "attach to another tenant's ticket",
      (foreign: { ticketId: string }) => ({ action: 'attach', ticket_id: foreign.ticketId }),
      422,
    ],
    [
      "create_ticket for another tenant's client",
      (foreign: { clientId: string }) => ({ action: 'create_ticket', client_id: foreign.clientId }),
      422,
    ],
    ['an unknown action', () => ({ action: 'delete' }), 400],
  ])('When a replay asks for %s, then it answers a %p problem and changes nothing', async (_case, body, status) => {
    const { tenant, box } = await setup({ unknown_sender: 'quarantine' });
    const other = await newTenant(desk);
    const otherClient = await createClient(http, other.token);
    const otherTicket = (
      await http
        .post(`${BASE}/tickets`)
        .set(bearer(other.token))
        .send({ title: 'Theirs', client_id: otherClient.id })
        .expect(201)
    ).body;
    dovecot.appendMessage(USER, 'INBOX', message({ From: uniqueEmail('stranger') }).raw);
    const [entry] = await pollUntil(tenant.token, box.id, 1);
    const before = await snapshot(desk);
    const answer = await http
      .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
      .set(bearer(tenant.token))
      .send(body({ ticketId: otherTicket.id, clientId: otherClient.id }))
      .expect(status);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When another tenant replays an entry, or a caller without admin:tenant does, then it is 404 or 403', async () => {
    const { tenant, box } = await setup({ unknown_sender: 'quarantine' });
    dovecot.appendMessage(USER, 'INBOX', message({ From: uniqueEmail('stranger') }).raw);
    const [entry] = await pollUntil(tenant.token, box.id, 1);
    const other = await newTenant(desk);
    await http
      .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
      .set(bearer(other.token))
      .send({ action: 'create_ticket' })
      .expect(404);
    const writer = await desk.createClient({ tenant: tenant.tenant, scopes: ['read:tickets', 'write:tickets'] });
    await http
      .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
      .set(bearer(await desk.token(writer)))
      .send({ action: 'create_ticket' })
      .expect(403);
  });

  test('When a mail too large to store is replayed, then it becomes a ticket of its sender and subject', async () => {
    const { tenant, box, sender, client } = await setup({ max_message_bytes: 10_000 });
    const big = message({ From: sender, Subject: 'Huge logs' }, `${'x'.repeat(76)}\r\n`.repeat(200));
    dovecot.appendMessage(USER, 'INBOX', big.raw);
    const [entry] = await pollUntil(tenant.token, box.id, 1);
    expect(entry).toMatchObject({ status: 'failed', reason: 'too_large' });
    const replayed = await http
      .post(`${BASE}/inbound-emails/${entry!.id}/replay`)
      .set(bearer(tenant.token))
      .send({ action: 'create_ticket' })
      .expect(200);
    const ticket = (await http.get(`${BASE}/tickets/${replayed.body.ticket_id}`).set(bearer(tenant.token)).expect(200))
      .body;
    expect(ticket).toMatchObject({ title: 'Huge logs', client_id: client.id, requester: { email: sender } });
    expect(ticket.description).toMatch(/max_message_bytes/);
  });
});

describe('acknowledgements and loops', () => {
  test(
    'When a mailbox with auto_acknowledge opens tickets, then the sender gets one Auto-Submitted ' +
      'acknowledgement per 10 minutes, listed as outbound mail of the ticket',
    async () => {
      const { tenant, box, sender } = await setup({ auto_acknowledge: true });
      const first = message({ From: sender, Subject: 'First' });
      const second = message({ From: sender, Subject: 'Second' });
      dovecot.appendMessage(USER, 'INBOX', first.raw);
      dovecot.appendMessage(USER, 'INBOX', second.raw);
      const log = await pollUntil(tenant.token, box.id, 2);
      const firstTicket = log.find((e) => e.message_id === first.messageId)!.ticket_id!;
      const secondTicket = log.find((e) => e.message_id === second.messageId)!.ticket_id!;
      const before = smtp.messages.length;
      expect(await sendDue()).toBe(1);
      const sent = smtp.messages.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.to).toEqual([sender]);
      const raw = sent[0]!.raw.toString();
      expect(raw).toMatch(/^Auto-Submitted: auto-replied/im);
      expect(raw).toContain(`In-Reply-To: <${first.messageId}>`);
      const number = (await http.get(`${BASE}/tickets/${firstTicket}`).set(bearer(tenant.token)).expect(200)).body
        .number;
      expect(raw).toContain(`Subject: [#${number}] First`);
      const emails = (await http.get(`${BASE}/tickets/${firstTicket}/emails`).set(bearer(tenant.token)).expect(200))
        .body.data;
      expect(emails.map((e: { direction: string; status: string }) => [e.direction, e.status])).toEqual([
        ['inbound', 'received'],
        ['outbound', 'sent'],
      ]);
      expect(
        (await http.get(`${BASE}/tickets/${secondTicket}/emails`).set(bearer(tenant.token)).expect(200)).body.data,
      ).toHaveLength(1);

      // An out-of-office answer to the acknowledgement is ignored and acknowledged by nothing.
      const ours = emails[1].message_id as string;
      dovecot.appendMessage(
        USER,
        'INBOX',
        message({
          From: sender,
          Subject: 'Out of office',
          'Auto-Submitted': 'auto-replied',
          'In-Reply-To': `<${ours}>`,
        }).raw,
      );
      // A mail after the ten minutes are over is acknowledged again.
      await desk.db.outboundEmail.updateMany({
        where: { tenantId: tenant.tenantId },
        data: { createdAt: new Date(Date.now() - 11 * 60_000) },
      });
      const third = message({ From: sender, Subject: 'Third' });
      dovecot.appendMessage(USER, 'INBOX', third.raw);
      const later = await pollUntil(tenant.token, box.id, 4);
      expect(later.find((e) => e.reason === 'auto_reply')).toMatchObject({ status: 'ignored', ticket_id: firstTicket });
      expect(await desk.db.outboundEmail.count({ where: { tenantId: tenant.tenantId, kind: 'acknowledgement' } })).toBe(
        2,
      );
    },
  );

  test('When a mailbox without auto_acknowledge opens a ticket, then nothing is mailed', async () => {
    const { tenant, box, sender } = await setup();
    dovecot.appendMessage(USER, 'INBOX', message({ From: sender }).raw);
    await pollUntil(tenant.token, box.id, 1);
    expect(await desk.db.outboundEmail.count({ where: { tenantId: tenant.tenantId } })).toBe(0);
  });

  test('When a mail carries a Message-ID desk made on its own domain, then it is ignored as a loop, whoever it claims to be from', async () => {
    const { tenant, box, sender } = await setup({ auto_acknowledge: true });
    const looped = message({ From: sender, 'Message-ID': `<desk.1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d@msp.example>` });
    const foreign = message({
      From: sender,
      'Message-ID': `<desk.1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d@other-helpdesk.example>`,
    });
    dovecot.appendMessage(USER, 'INBOX', looped.raw);
    dovecot.appendMessage(USER, 'INBOX', foreign.raw);
    const log = await pollUntil(tenant.token, box.id, 2);
    expect(log.find((e) => e.message_id === looped.messageId)).toMatchObject({
      status: 'ignored',
      reason: 'loop',
      ticket_id: null,
    });
    // Another helpdesk's mail of the same form is a customer's mail like any other.
    expect(log.find((e) => e.message_id === foreign.messageId)).toMatchObject({ status: 'processed' });
    expect(await desk.db.outboundEmail.count({ where: { tenantId: tenant.tenantId } })).toBe(1);
  });

  test("When desk's own sent mail comes back through another mailbox of the tenant, then it is a loop", async () => {
    const { tenant, box, sender } = await setup({ auto_acknowledge: true });
    dovecot.appendMessage(USER, 'INBOX', message({ From: sender }).raw);
    const [entry] = await pollUntil(tenant.token, box.id, 1);
    await sendDue();
    const ack = smtp.messages[smtp.messages.length - 1]!.raw.toString();
    const ours = /^Message-ID: <([^>]+)>/im.exec(ack)![1]!;
    const second = (
      await http
        .post(`${BASE}/mailboxes`)
        .set(bearer(tenant.token))
        .send({
          address: 'desk@elsewhere.example',
          folder: 'Returned',
          imap: { host: dovecot.host, port: dovecot.port, tls: 'none', username: USER, password: PASSWORD },
          smtp: { host: smtp.host, port: smtp.port, tls: 'none' },
        })
        .expect(201)
    ).body as { id: string };
    // Forwarded back with its headers as sent, the From rewritten by the forwarder.
    dovecot.appendMessage(USER, 'Returned', ack.replace(/^From: .*$/im, `From: ${sender}`));
    const log = await pollUntil(tenant.token, second.id, 1);
    expect(log[0]).toMatchObject({ message_id: ours, status: 'ignored', reason: 'loop' });
    expect(entry!.ticket_id).toEqual(expect.any(String));
    expect(await desk.db.ticket.count({ where: { tenantId: tenant.tenantId } })).toBe(1);
  });
});
