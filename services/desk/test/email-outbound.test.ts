import { startDovecot, startSmtpReceiver, type Dovecot, type SmtpReceiver } from '@msp/peers';
import { createLogger } from '@msp/http';
import { testWebhookSecrets } from '@msp/testkit';
import { createSmtpSender } from '../src/mailboxes/mail-sender';
import { createOutboundSender } from '../src/mailboxes/outbound';
import { createStore } from '../src/store';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createClient, newTenant, startHelpdesk, unique } from './support/helpdesk';

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

async function setup() {
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
      })
      .expect(201)
  ).body as { id: string };
  return { tenant, client, box, sender: `anna@${domain}` };
}

async function ticketFromMail(tenantToken: string, boxId: string, from: string) {
  const messageId = `first.${Date.now()}.${Math.random().toString(36).slice(2)}@contoso.example`;
  dovecot.appendMessage(
    USER,
    'INBOX',
    `From: ${from}\r\nTo: ${USER}\r\nCc: boss@contoso.example\r\nSubject: Printer jams\r\nMessage-ID: <${messageId}>\r\n\r\nIt jams.\r\n`,
  );
  await http.post(`${BASE}/mailboxes/${boxId}/poll`).set(bearer(tenantToken)).expect(202);
  for (let i = 0; i < 300; i++) {
    const log = await http
      .get(`${BASE}/inbound-emails`)
      .query({ message_id: messageId })
      .set(bearer(tenantToken))
      .expect(200);
    if (log.body.data[0]?.ticket_id) return { ticketId: log.body.data[0].ticket_id as string, messageId };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('no ticket');
}

describe('replies by mail', () => {
  test(
    'When a technician writes a public comment, then the requester gets one mail threading the ' +
      'conversation, not the CC of the first mail; internal comments are never mailed',
    async () => {
      const { tenant, box, sender } = await setup();
      const { ticketId, messageId } = await ticketFromMail(tenant.token, box.id, sender);
      const ticket = (await http.get(`${BASE}/tickets/${ticketId}`).set(bearer(tenant.token)).expect(200)).body;
      await http
        .post(`${BASE}/tickets/${ticketId}/comments`)
        .set(bearer(tenant.token))
        .send({ body: 'Internal note', internal: true })
        .expect(201);
      await http
        .post(`${BASE}/tickets/${ticketId}/comments`)
        .set(bearer(tenant.token))
        .send({ body: 'Which model is it?' })
        .expect(201);
      const before = smtp.messages.length;
      expect(await sendDue()).toBe(1);
      expect(smtp.messages.length).toBe(before + 1);
      const sent = smtp.messages[smtp.messages.length - 1]!;
      expect(sent.to).toEqual([sender]);
      const raw = sent.raw.toString();
      expect(raw).toContain(`Subject: [#${ticket.number}] Printer jams`);
      expect(raw).toContain(`In-Reply-To: <${messageId}>`);
      expect(raw).toContain('Which model is it?');
      expect(raw).not.toContain('Internal note');
      expect(raw).not.toMatch(/^Cc:/im);

      const emails = await http.get(`${BASE}/tickets/${ticketId}/emails`).set(bearer(tenant.token)).expect(200);
      expect(emails.body.data.map((e: { direction: string; status: string }) => [e.direction, e.status])).toEqual([
        ['inbound', 'received'],
        ['outbound', 'sent'],
      ]);

      // The requester's answer to desk's mail threads by its Message-ID.
      const ours = emails.body.data[1].message_id as string;
      dovecot.appendMessage(
        USER,
        'INBOX',
        `From: ${sender}\r\nTo: ${USER}\r\nSubject: Re: [#${ticket.number}] Printer ` +
          `jams\r\nIn-Reply-To: <${ours}>\r\nMessage-ID: <answer.${ours}>\r\n\r\nAn HP 4000.\r\n`,
      );
      await http.post(`${BASE}/mailboxes/${box.id}/poll`).set(bearer(tenant.token)).expect(202);
      let comments: { body: string; author_type: string }[] = [];
      for (let i = 0; i < 300 && comments.length < 3; i++) {
        await new Promise((r) => setTimeout(r, 100));
        comments = (await http.get(`${BASE}/tickets/${ticketId}/comments`).set(bearer(tenant.token)).expect(200)).body
          .data;
      }
      expect(comments[2]).toMatchObject({ body: 'An HP 4000.', author_type: 'contact' });
    },
  );

  test('When the SMTP server is down, then the mail stays queued and goes out once when it is back', async () => {
    const { tenant, box, sender } = await setup();
    const { ticketId } = await ticketFromMail(tenant.token, box.id, sender);
    await smtp.setDown(true);
    await http
      .post(`${BASE}/tickets/${ticketId}/comments`)
      .set(bearer(tenant.token))
      .send({ body: 'Retry me' })
      .expect(201);
    expect(await sendDue()).toBe(0);
    const queued = await http.get(`${BASE}/tickets/${ticketId}/emails`).set(bearer(tenant.token)).expect(200);
    expect(queued.body.data[1]).toMatchObject({ status: 'queued', error: expect.any(String) });
    await smtp.setDown(false);
    await desk.db.outboundEmail.updateMany({ where: { ticketId }, data: { nextAttemptAt: new Date() } });
    const before = smtp.messages.length;
    expect(await sendDue()).toBe(1);
    expect(await sendDue()).toBe(0);
    expect(smtp.messages.filter((m) => m.raw.toString().includes('Retry me'))).toHaveLength(1);
    expect(smtp.messages.length).toBe(before + 1);
  });

  test(
    "When a delivery-status report for desk's mail arrives, then that mail is bounced, the contact " +
      'email_status bounced, and nothing more is sent until the contact is changed',
    async () => {
      const { tenant, box, sender } = await setup();
      const { ticketId } = await ticketFromMail(tenant.token, box.id, sender);
      await http
        .post(`${BASE}/tickets/${ticketId}/comments`)
        .set(bearer(tenant.token))
        .send({ body: 'First reply' })
        .expect(201);
      await sendDue();
      const ours = (await http.get(`${BASE}/tickets/${ticketId}/emails`).set(bearer(tenant.token)).expect(200)).body
        .data[1].message_id as string;
      dovecot.appendMessage(
        USER,
        'INBOX',
        `From: MAILER-DAEMON@mx.contoso.example\r\nTo: ${USER}\r\nReturn-Path: <>\r\nAuto-Submitted: ` +
          `auto-replied\r\nSubject: Undelivered Mail\r\nMessage-ID: <dsn.${ours}>\r\n` +
          `Content-Type: multipart/report; report-type=delivery-status; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nUser unknown.\r\n` +
          `--b\r\nContent-Type: message/delivery-status\r\n\r\nStatus: ` +
          `5.1.1\r\n--b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <${ours}>\r\n--b--\r\n`,
      );
      await http.post(`${BASE}/mailboxes/${box.id}/poll`).set(bearer(tenant.token)).expect(202);
      let status = 'sent';
      for (let i = 0; i < 300 && status !== 'bounced'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await http.get(`${BASE}/tickets/${ticketId}/emails`).set(bearer(tenant.token)).expect(200)).body
          .data[1].status;
      }
      expect(status).toBe('bounced');
      const contact = (
        await http.get(`${BASE}/contacts`).query({ email: sender }).set(bearer(tenant.token)).expect(200)
      ).body.data[0];
      expect(contact.email_status).toBe('bounced');
      await http
        .post(`${BASE}/tickets/${ticketId}/comments`)
        .set(bearer(tenant.token))
        .send({ body: 'Not mailed' })
        .expect(201);
      expect(await desk.db.outboundEmail.count({ where: { ticketId } })).toBe(1);
      await http
        .patch(`${BASE}/contacts/${contact.id}`)
        .set(bearer(tenant.token))
        .send({ name: 'Anna B.' })
        .expect(200);
      await http
        .post(`${BASE}/tickets/${ticketId}/comments`)
        .set(bearer(tenant.token))
        .send({ body: 'Mailed again' })
        .expect(201);
      expect(await desk.db.outboundEmail.count({ where: { ticketId } })).toBe(2);
    },
  );
});
