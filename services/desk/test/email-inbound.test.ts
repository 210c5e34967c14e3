import { startDovecot, type Dovecot } from '@msp/peers';
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

const USER = 'help@msp.example';
const PASSWORD = 'help-secret';

let desk: TestDesk;
let http: Api;
let dovecot: Dovecot;

beforeAll(async () => {
  ({ desk, http } = await startHelpdesk());
  dovecot = await startDovecot({ users: [{ username: USER, password: PASSWORD }] });
}, 60_000);
afterAll(async () => {
  await dovecot?.stop();
  await desk.close();
});

let counter = 0;
/** A message as a mail client would send it. */
function message(headers: Record<string, string>, body = 'Hello,\r\nthe printer jams again.\r\n') {
  const all: Record<string, string> = {
    From: 'Anna Berger <anna@contoso.example>',
    To: USER,
    Subject: 'Printer jams',
    Date: new Date().toUTCString(),
    'Message-ID': `<m${Date.now()}.${++counter}.${Math.random().toString(36).slice(2)}@contoso.example>`,
    'MIME-Version': '1.0',
    'Content-Type': 'text/plain; charset=utf-8',
    ...headers,
  };
  const head = Object.entries(all)
    .filter(([, value]) => value !== '')
    .map(([key, value]) => `${key}: ${value}`)
    .join('\r\n');
  return { raw: `${head}\r\n\r\n${body}`, messageId: all['Message-ID']!.replace(/[<>]/g, '') };
}

async function createMailbox(tenantToken: string, body: Record<string, unknown> = {}) {
  const response = await http
    .post(`${BASE}/mailboxes`)
    .set(bearer(tenantToken))
    .send({
      address: USER,
      imap: { host: dovecot.host, port: dovecot.port, tls: 'none', username: USER, password: PASSWORD },
      smtp: { host: '127.0.0.1', port: 25, tls: 'none' },
      ...body,
    })
    .expect(201);
  return response.body as { id: string };
}

/** Polls the mailbox through the API and waits until the inbound log has `count` entries of it. */
async function pollUntil(tenantToken: string, mailboxId: string, count: number) {
  await http.post(`${BASE}/mailboxes/${mailboxId}/poll`).set(bearer(tenantToken)).expect(202);
  for (let i = 0; i < 600; i++) {
    const log = await http
      .get(`${BASE}/inbound-emails`)
      .query({ mailbox_id: mailboxId, per_page: 100 })
      .set(bearer(tenantToken))
      .expect(200);
    const settled = log.body.data.filter((entry: { status: string }) => entry.status !== 'received');
    const health = await http.get(`${BASE}/mailboxes/${mailboxId}/health`).set(bearer(tenantToken)).expect(200);
    const polling = await desk.db.mailbox.findUniqueOrThrow({ where: { id: mailboxId } });
    if (settled.length >= count && polling.lockedUntil === null)
      return { log: log.body.data as InboundEntry[], health: health.body };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the poll did not finish');
}

interface InboundEntry {
  id: string;
  message_id: string;
  status: string;
  reason: string | null;
  ticket_id: string | null;
  comment_id: string | null;
  from: string;
  subject: string;
  size_bytes: number;
}

/** A fresh tenant with a client owning contoso.example's stand-in domain and a mailbox. */
async function setup(mailbox: Record<string, unknown> = {}) {
  const tenant = await newTenant(desk);
  const domain = `${unique('contoso').replace(' ', '-')}.example`;
  const client = await createClient(http, tenant.token, { email_domains: [domain] });
  const box = await createMailbox(tenant.token, mailbox);
  return { tenant, domain, client, box, sender: `anna@${domain}` };
}

describe('mailboxes', () => {
  test('When a mailbox is created, then passwords are never answered, password_set says one is stored, and it is sealed at rest', async () => {
    const tenant = await newTenant(desk);
    const response = await http
      .post(`${BASE}/mailboxes`)
      .set(bearer(tenant.token))
      .send({
        address: 'Desk@MSP.example',
        imap: { host: '127.0.0.1', port: 143, tls: 'starttls', username: 'u', password: 'imap-pass' },
        smtp: { host: '127.0.0.1', port: 587, tls: 'starttls' },
      })
      .expect(201);
    expect(response.body).toMatchObject({
      address: 'desk@msp.example',
      imap: { host: '127.0.0.1', port: 143, tls: 'starttls', username: 'u', password_set: true },
      smtp: { host: '127.0.0.1', port: 587, tls: 'starttls', username: null, password_set: false },
      folder: 'INBOX',
      poll_interval_seconds: 60,
      unknown_sender: 'create_contact',
      closed_ticket_policy: 'reopen',
      reopen_within_days: 14,
      max_message_bytes: 10_485_760,
      auto_acknowledge: false,
      enabled: true,
    });
    expect(JSON.stringify(response.body)).not.toContain('imap-pass');
    const stored = await desk.db.mailbox.findUniqueOrThrow({ where: { id: response.body.id } });
    expect(stored.imapSecret).toMatch(/^v1\./);
    expect(stored.imapSecret).not.toContain('imap-pass');

    const patched = await http
      .patch(`${BASE}/mailboxes/${response.body.id}`)
      .set(bearer(tenant.token))
      .send({ imap: { port: 993, tls: 'implicit' }, smtp: { password: 's' } })
      .expect(200);
    expect(patched.body.imap).toEqual({
      host: '127.0.0.1',
      port: 993,
      tls: 'implicit',
      username: 'u',
      password_set: true,
      oauth2: null,
    });
    expect(patched.body.smtp.password_set).toBe(true);
  });

  test.each([
    ['a poll interval under 10 s', { poll_interval_seconds: 5 }],
    ['max_message_bytes under 10,000', { max_message_bytes: 9_999 }],
    ['an unknown tls', { imap: { host: 'h', port: 1, tls: 'ssl', username: 'u' } }],
    ['no imap', { imap: undefined }],
  ])('When a mailbox has %s, then it answers 400 and stores nothing', async (_case, body) => {
    const tenant = await newTenant(desk);
    const before = await snapshot(desk);
    await http
      .post(`${BASE}/mailboxes`)
      .set(bearer(tenant.token))
      .send({
        address: 'x@msp.example',
        imap: { host: 'h', port: 143, tls: 'none', username: 'u' },
        smtp: { host: 'h', port: 25, tls: 'none' },
        ...body,
      })
      .expect(400);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When a caller without admin:tenant lists mailboxes, then it answers 403', async () => {
    const client = await desk.createClient({ scopes: ['read:tickets', 'write:tickets'] });
    await http
      .get(`${BASE}/mailboxes`)
      .set(bearer(await desk.token(client)))
      .expect(403);
  });
});

describe('inbound mail', () => {
  test(
    "When a mail from a sender at a client's domain arrives, then it becomes an e-mail ticket " +
      'of that client with a new contact, and the message is flagged \\Seen',
    async () => {
      const { tenant, client, box, sender } = await setup();
      const mail = message(
        { From: `Anna Berger <${sender}>`, Cc: 'boss@elsewhere.example', Subject: 'VPN down' },
        'The VPN is down.\r\n\r\n-- \r\nAnna\r\n',
      );
      dovecot.appendMessage(USER, 'INBOX', mail.raw);
      const { log } = await pollUntil(tenant.token, box.id, 1);
      const entry = log.find((e) => e.message_id === mail.messageId)!;
      expect(entry).toMatchObject({
        status: 'processed',
        reason: null,
        from: sender,
        subject: 'VPN down',
        comment_id: null,
      });
      const ticket = (await http.get(`${BASE}/tickets/${entry.ticket_id}`).set(bearer(tenant.token)).expect(200)).body;
      expect(ticket).toMatchObject({
        title: 'VPN down',
        description: 'The VPN is down.',
        client_id: client.id,
        source: 'email',
        mailbox_id: box.id,
        requester: { name: 'Anna Berger', email: sender },
        cc: [],
        cc_suggested: ['boss@elsewhere.example'],
      });
      const contacts = await http
        .get(`${BASE}/contacts`)
        .query({ email: sender })
        .set(bearer(tenant.token))
        .expect(200);
      expect(contacts.body.data[0]).toMatchObject({ client_id: client.id, name: 'Anna Berger' });
      const listed = await dovecot.listMessages(USER, 'INBOX');
      expect(listed.find((m) => m.messageId?.includes(mail.messageId))?.flags).toContain('\\Seen');
      const raw = await http.get(`${BASE}/inbound-emails/${entry.id}/raw`).set(bearer(tenant.token)).expect(200);
      expect(raw.headers['content-type']).toMatch(/^message\/rfc822/);
    },
  );

  test(
    'When a reply names a message of a ticket in In-Reply-To, then it becomes a public ' +
      'contact comment with the quote stripped, and a pending ticket opens',
    async () => {
      const { tenant, box, sender } = await setup();
      const first = message({ From: sender });
      dovecot.appendMessage(USER, 'INBOX', first.raw);
      const { log } = await pollUntil(tenant.token, box.id, 1);
      const ticketId = log[0]!.ticket_id!;
      await http.patch(`${BASE}/tickets/${ticketId}`).set(bearer(tenant.token)).send({ status: 'pending' }).expect(200);

      const reply = message(
        { From: sender, Subject: 'Re: Printer jams', 'In-Reply-To': `<${first.messageId}>` },
        'It works now, thanks.\r\n\r\nOn Mon, 2 Nov 2026 Helpdesk wrote:\r\n> What model is it?\r\n',
      );
      dovecot.appendMessage(USER, 'INBOX', reply.raw);
      const after = await pollUntil(tenant.token, box.id, 2);
      const entry = after.log.find((e) => e.message_id === reply.messageId)!;
      expect(entry).toMatchObject({ status: 'processed', ticket_id: ticketId, comment_id: expect.any(String) });
      const comments = await http.get(`${BASE}/tickets/${ticketId}/comments`).set(bearer(tenant.token)).expect(200);
      expect(comments.body.data).toEqual([
        expect.objectContaining({
          body: 'It works now, thanks.',
          internal: false,
          author_type: 'contact',
          author: sender,
          author_contact_id: expect.any(String),
        }),
      ]);
      expect((await http.get(`${BASE}/tickets/${ticketId}`).set(bearer(tenant.token)).expect(200)).body.status).toBe(
        'open',
      );
    },
  );

  test("When a subject names another client's ticket number, then it is a new ticket, not a comment on that one", async () => {
    const { tenant, box, sender } = await setup();
    const stranger = await createClient(http, tenant.token);
    const foreign = (
      await http
        .post(`${BASE}/tickets`)
        .set(bearer(tenant.token))
        .send({ title: 'Theirs', client_id: stranger.id })
        .expect(201)
    ).body;
    const mail = message({ From: sender, Subject: `Re: [#${foreign.number}] Theirs` });
    dovecot.appendMessage(USER, 'INBOX', mail.raw);
    const { log } = await pollUntil(tenant.token, box.id, 1);
    expect(log[0]!.ticket_id).not.toBe(foreign.id);
    expect(log[0]!.comment_id).toBeNull();
    const comments = await http.get(`${BASE}/tickets/${foreign.id}/comments`).set(bearer(tenant.token)).expect(200);
    expect(comments.body.data).toEqual([]);
  });

  test("When a subject names the ticket of the sender's own client, then it threads as a comment", async () => {
    const { tenant, box, sender, client } = await setup();
    await http
      .post(`${BASE}/contacts`)
      .set(bearer(tenant.token))
      .send({ name: 'Anna', email: sender, client_id: client.id })
      .expect(201);
    const own = (
      await http
        .post(`${BASE}/tickets`)
        .set(bearer(tenant.token))
        .send({ title: 'Ours', client_id: client.id })
        .expect(201)
    ).body;
    dovecot.appendMessage(USER, 'INBOX', message({ From: sender, Subject: `Re: [#${own.number}] Ours` }).raw);
    const { log } = await pollUntil(tenant.token, box.id, 1);
    expect(log[0]).toMatchObject({ status: 'processed', ticket_id: own.id, comment_id: expect.any(String) });
  });

  test.each([
    ['Auto-Submitted: auto-replied', { 'Auto-Submitted': 'auto-replied' }],
    ['Precedence: bulk', { Precedence: 'bulk' }],
    ['X-Autoreply', { 'X-Autoreply': 'yes' }],
    ['X-Auto-Response-Suppress', { 'X-Auto-Response-Suppress': 'All' }],
  ])(
    'When an out-of-office reply (%s) threads to a closed ticket, then it is ignored as auto_reply and neither reopens nor opens a ticket',
    async (_case, headers) => {
      const { tenant, box, sender } = await setup();
      const first = message({ From: sender });
      dovecot.appendMessage(USER, 'INBOX', first.raw);
      const { log } = await pollUntil(tenant.token, box.id, 1);
      const ticketId = log[0]!.ticket_id!;
      await http.patch(`${BASE}/tickets/${ticketId}`).set(bearer(tenant.token)).send({ status: 'closed' }).expect(200);
      const ticketsBefore = await desk.db.ticket.count({ where: { tenantId: tenant.tenantId } });
      const auto = message({
        From: sender,
        Subject: 'Out of office',
        'In-Reply-To': `<${first.messageId}>`,
        ...headers,
      });
      dovecot.appendMessage(USER, 'INBOX', auto.raw);
      const after = await pollUntil(tenant.token, box.id, 2);
      expect(after.log.find((e) => e.message_id === auto.messageId)).toMatchObject({
        status: 'ignored',
        reason: 'auto_reply',
        ticket_id: ticketId,
        comment_id: null,
      });
      expect((await http.get(`${BASE}/tickets/${ticketId}`).set(bearer(tenant.token)).expect(200)).body.status).toBe(
        'closed',
      );
      expect(await desk.db.ticket.count({ where: { tenantId: tenant.tenantId } })).toBe(ticketsBefore);
    },
  );

  test("When mail comes from the mailbox's own address, then it is ignored as a loop", async () => {
    const { tenant, box } = await setup();
    dovecot.appendMessage(USER, 'INBOX', message({ From: USER }).raw);
    const { log } = await pollUntil(tenant.token, box.id, 1);
    expect(log[0]).toMatchObject({ status: 'ignored', reason: 'loop', ticket_id: null });
  });

  test('When a delivery-status report arrives, then it is ignored as a bounce', async () => {
    const { tenant, box } = await setup();
    const report = message(
      {
        From: 'MAILER-DAEMON@mx.example',
        'Return-Path': '<>',
        'Content-Type': 'multipart/report; report-type=delivery-status; boundary="b"',
        'Auto-Submitted': 'auto-replied',
      },
      '--b\r\nContent-Type: text/plain\r\n\r\nDelivery failed.\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\nStatus: 5.1.1\r\n--b--\r\n',
    );
    dovecot.appendMessage(USER, 'INBOX', report.raw);
    const { log } = await pollUntil(tenant.token, box.id, 1);
    expect(log[0]).toMatchObject({ status: 'ignored', reason: 'bounce' });
  });

  test('When one message is in two mailboxes of a tenant and both are polled, then it makes one ticket', async () => {
    const { tenant, box, sender } = await setup();
    const second = await createMailbox(tenant.token, { address: 'other@msp.example', folder: 'Shared' });
    const mail = message({ From: sender });
    dovecot.appendMessage(USER, 'INBOX', mail.raw);
    dovecot.appendMessage(USER, 'Shared', mail.raw);
    await pollUntil(tenant.token, box.id, 1);
    await http.post(`${BASE}/mailboxes/${second.id}/poll`).set(bearer(tenant.token)).expect(202);
    for (
      let i = 0;
      i < 300 && (await desk.db.mailbox.findUniqueOrThrow({ where: { id: second.id } })).lastPollAt === null;
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    for (
      let i = 0;
      i < 300 && (await desk.db.mailbox.findUniqueOrThrow({ where: { id: second.id } })).lockedUntil !== null;
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const entries = await http
      .get(`${BASE}/inbound-emails`)
      .query({ message_id: `<${mail.messageId}>` })
      .set(bearer(tenant.token))
      .expect(200);
    expect(entries.body.data).toHaveLength(1);
    expect(await desk.db.ticket.count({ where: { tenantId: tenant.tenantId } })).toBe(1);
    expect((await dovecot.listMessages(USER, 'Shared')).every((m) => m.flags.includes('\\Seen'))).toBe(true);
  });

  test('When a message is over max_message_bytes, then it is logged failed/too_large and the next one is processed', async () => {
    const { tenant, box, sender } = await setup({ max_message_bytes: 10_000 });
    const big = message({ From: sender, Subject: 'Huge' }, `${'x'.repeat(76)}\r\n`.repeat(200));
    const small = message({ From: sender, Subject: 'Small' });
    dovecot.appendMessage(USER, 'INBOX', big.raw);
    dovecot.appendMessage(USER, 'INBOX', small.raw);
    const { log } = await pollUntil(tenant.token, box.id, 2);
    expect(log.find((e) => e.message_id === big.messageId)).toMatchObject({
      status: 'failed',
      reason: 'too_large',
      ticket_id: null,
    });
    expect(log.find((e) => e.message_id === big.messageId)!.size_bytes).toBeGreaterThan(10_000);
    expect(log.find((e) => e.message_id === small.messageId)).toMatchObject({ status: 'processed' });
  });

  test('When a message cannot be parsed, then it is logged failed/unparseable and the next one is processed', async () => {
    const { tenant, box, sender } = await setup();
    dovecot.appendMessage(USER, 'INBOX', 'Message-ID: <garbage.1@x>\r\nthis is not a mail at all\r\n');
    const good = message({ From: sender });
    dovecot.appendMessage(USER, 'INBOX', good.raw);
    const { log } = await pollUntil(tenant.token, box.id, 2);
    expect(log.find((e) => e.message_id === 'garbage.1@x')).toMatchObject({ status: 'failed', reason: 'unparseable' });
    expect(log.find((e) => e.message_id === good.messageId)).toMatchObject({ status: 'processed' });
  });

  test('When an unknown sender writes to a quarantining mailbox, then the mail is quarantined and no ticket or contact is made', async () => {
    const { tenant, box } = await setup({ unknown_sender: 'quarantine' });
    const stranger = uniqueEmail('stranger');
    dovecot.appendMessage(USER, 'INBOX', message({ From: stranger }).raw);
    const { log, health } = await pollUntil(tenant.token, box.id, 1);
    expect(log[0]).toMatchObject({ status: 'quarantined', reason: 'unknown_sender', ticket_id: null });
    expect(health).toMatchObject({ status: 'ok', messages_quarantined: 1 });
    expect(await desk.db.ticket.count({ where: { tenantId: tenant.tenantId } })).toBe(0);
    expect(await desk.db.contact.count({ where: { tenantId: tenant.tenantId } })).toBe(0);
  });

  test('When an unknown sender writes to a mailbox with a default client, then a contact is created under it', async () => {
    const tenant = await newTenant(desk);
    const fallback = await createClient(http, tenant.token);
    const box = await createMailbox(tenant.token, { default_client_id: fallback.id });
    const stranger = uniqueEmail('stranger');
    dovecot.appendMessage(USER, 'INBOX', message({ From: stranger }).raw);
    const { log } = await pollUntil(tenant.token, box.id, 1);
    const ticket = (await http.get(`${BASE}/tickets/${log[0]!.ticket_id}`).set(bearer(tenant.token)).expect(200)).body;
    expect(ticket).toMatchObject({ client_id: fallback.id, requester: { email: stranger } });
  });

  test('When a mail answers a ticket closed longer than reopen_within_days, then a follow-up ticket is opened; within it, the ticket reopens', async () => {
    const { tenant, box, sender } = await setup({ reopen_within_days: 0 });
    const first = message({ From: sender });
    dovecot.appendMessage(USER, 'INBOX', first.raw);
    const ticketId = (await pollUntil(tenant.token, box.id, 1)).log[0]!.ticket_id!;
    await http.patch(`${BASE}/tickets/${ticketId}`).set(bearer(tenant.token)).send({ status: 'closed' }).expect(200);
    await desk.db.ticket.update({ where: { id: ticketId }, data: { closedAt: new Date(Date.now() - 2 * 86_400_000) } });
    const late = message({ From: sender, 'In-Reply-To': `<${first.messageId}>` });
    dovecot.appendMessage(USER, 'INBOX', late.raw);
    const entry = (await pollUntil(tenant.token, box.id, 2)).log.find((e) => e.message_id === late.messageId)!;
    const followUp = (await http.get(`${BASE}/tickets/${entry.ticket_id}`).set(bearer(tenant.token)).expect(200)).body;
    expect(followUp.id).not.toBe(ticketId);
    expect(followUp.follow_up_of).toBe(ticketId);

    await http
      .patch(`${BASE}/mailboxes/${box.id}`)
      .set(bearer(tenant.token))
      .send({ reopen_within_days: 14 })
      .expect(200);
    const again = message({ From: sender, 'In-Reply-To': `<${first.messageId}>` });
    dovecot.appendMessage(USER, 'INBOX', again.raw);
    await pollUntil(tenant.token, box.id, 3);
    expect((await http.get(`${BASE}/tickets/${ticketId}`).set(bearer(tenant.token)).expect(200)).body).toMatchObject({
      status: 'open',
      closed_at: null,
    });
  });

  test('When the IMAP login is refused, then the mailbox is failing with the error and recovers when the password is fixed', async () => {
    const { tenant, box } = await setup();
    await http
      .patch(`${BASE}/mailboxes/${box.id}`)
      .set(bearer(tenant.token))
      .send({ imap: { password: 'wrong' } })
      .expect(200);
    await http.post(`${BASE}/mailboxes/${box.id}/poll`).set(bearer(tenant.token)).expect(202);
    let health = { status: 'ok' } as { status: string; last_error: string | null };
    for (let i = 0; i < 300 && health.status !== 'failing'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      health = (await http.get(`${BASE}/mailboxes/${box.id}/health`).set(bearer(tenant.token)).expect(200)).body;
    }
    expect(health.status).toBe('failing');
    expect(health.last_error).toEqual(expect.any(String));
    await http
      .patch(`${BASE}/mailboxes/${box.id}`)
      .set(bearer(tenant.token))
      .send({ imap: { password: PASSWORD } })
      .expect(200);
    for (
      let i = 0;
      i < 100 && (await desk.db.mailbox.findUniqueOrThrow({ where: { id: box.id } })).lockedUntil !== null;
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const recovered = await pollUntil(tenant.token, box.id, 0);
    expect(recovered.health).toMatchObject({ status: 'ok', last_error: null });
    const events = await desk.db.$queryRaw<
      { type: string }[]
    >`SELECT type FROM events WHERE resource_id = ${box.id} ORDER BY seq`;
    expect(events.map((e) => e.type)).toEqual(['mailbox.failing', 'mailbox.recovered']);
  });
});
