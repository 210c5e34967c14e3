import {
  startDovecot,
  startOAuthServer,
  startSmtpReceiver,
  type Dovecot,
  type OAuthServer,
  type SmtpReceiver,
} from '@msp/peers';
import { createLogger } from '@msp/http';
import { testOutbound, testWebhookSecrets } from '@msp/testkit';
import { createSmtpSender } from '../src/mailboxes/mail-sender';
import { createOAuthTokens } from '../src/mailboxes/oauth-tokens';
import { createOutboundSender } from '../src/mailboxes/outbound';
import { createStore } from '../src/store';
import type { Api } from './support/api';
import type { TestDesk } from './support/desk';
import { BASE, bearer, createClient, newTenant, snapshot, startHelpdesk, unique } from './support/helpdesk';

/*
 * XOAUTH2 (Microsoft 365, Google): desk fetches a token of the client credentials grant from the
 * OAuth server this test runs and logs in with it; Dovecot's oauth2 passdb asks the same server
 * (RFC 7662 introspection) whether the token is live and whose it is. No password is configured.
 */

const USER = 'help@msp.example';

let desk: TestDesk;
let http: Api;
let oauth: OAuthServer;
let dovecot: Dovecot;
let smtp: SmtpReceiver;

beforeAll(async () => {
  ({ desk, http } = await startHelpdesk());
  oauth = await startOAuthServer();
  // A password nobody configures in desk: the login must be by token.
  dovecot = await startDovecot({
    users: [{ username: USER, password: 'not-given-to-desk' }],
    oauth2: { introspectionUrl: oauth.introspectionUrl, mechanisms: ['xoauth2'] },
  });
  smtp = await startSmtpReceiver({ oauth });
}, 60_000);
afterAll(async () => {
  await smtp?.stop();
  await dovecot?.stop();
  await oauth?.stop();
  await desk.close();
});

let clients = 0;
/** A client of the OAuth server whose tokens are for the mailbox. */
function registerClient(expiresInSeconds?: number) {
  const client = {
    clientId: `desk-mail-${++clients}`,
    clientSecret: `secret-${clients}-${Math.random().toString(36).slice(2)}`,
    username: USER,
    expiresInSeconds,
  };
  oauth.registerClient(client);
  return client;
}

const oauth2Of = (client: { clientId: string; clientSecret: string }) => ({
  token_url: oauth.tokenUrl,
  client_id: client.clientId,
  client_secret: client.clientSecret,
  scope: 'https://outlook.office365.com/.default',
});

async function setup(client: { clientId: string; clientSecret: string }) {
  const tenant = await newTenant(desk);
  const domain = `${unique('contoso').replace(' ', '-')}.example`;
  await createClient(http, tenant.token, { email_domains: [domain] });
  const box = await http
    .post(`${BASE}/mailboxes`)
    .set(bearer(tenant.token))
    .send({
      address: USER,
      imap: { host: dovecot.host, port: dovecot.port, tls: 'none', username: USER, oauth2: oauth2Of(client) },
      smtp: { host: smtp.host, port: smtp.port, tls: 'none', username: USER, oauth2: oauth2Of(client) },
    })
    .expect(201);
  return { tenant, box: box.body, sender: `anna@${domain}` };
}

const requestsOf = (clientId: string) => oauth.tokenRequests.filter((r) => r.clientId === clientId);

/** Polls through the API and waits for the poll's end; answers the mailbox's health. */
async function poll(token: string, mailboxId: string) {
  const before = (await desk.db.mailbox.findUniqueOrThrow({ where: { id: mailboxId } })).lastPollAt?.getTime() ?? 0;
  await http.post(`${BASE}/mailboxes/${mailboxId}/poll`).set(bearer(token)).expect(202);
  for (let i = 0; i < 300; i++) {
    const row = await desk.db.mailbox.findUniqueOrThrow({ where: { id: mailboxId } });
    if ((row.lastPollAt?.getTime() ?? 0) > before && row.lockedUntil === null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (await http.get(`${BASE}/mailboxes/${mailboxId}/health`).set(bearer(token)).expect(200)).body as {
    status: string;
    last_error: string | null;
  };
}

describe('XOAUTH2', () => {
  test(
    'When a mailbox logs in to IMAP with XOAUTH2, then its mail becomes tickets, the client secret ' +
      'is never answered, and one token serves the polls until it nears expiry',
    async () => {
      const client = registerClient(3600);
      const { tenant, box, sender } = await setup(client);
      expect(box.imap).toEqual({
        host: dovecot.host,
        port: dovecot.port,
        tls: 'none',
        username: USER,
        password_set: false,
        oauth2: {
          token_url: oauth.tokenUrl,
          client_id: client.clientId,
          scope: 'https://outlook.office365.com/.default',
          client_secret_set: true,
        },
      });
      expect(JSON.stringify(box)).not.toContain(client.clientSecret);
      const stored = await desk.db.mailbox.findUniqueOrThrow({ where: { id: box.id } });
      expect(JSON.stringify(stored.imap)).not.toContain(client.clientSecret);
      expect((stored.imap as { oauth2: { secret: string } }).oauth2.secret).toMatch(/^v1\./);

      dovecot.appendMessage(
        USER,
        'INBOX',
        `From: ${sender}\r\nTo: ${USER}\r\nSubject: Token login\r\nMessage-ID: <oauth.${Date.now()}@contoso.example>\r\n\r\nHello.\r\n`,
      );
      expect(await poll(tenant.token, box.id)).toMatchObject({ status: 'ok', last_error: null });
      const tickets = await http
        .get(`${BASE}/tickets`)
        .query({ source: 'email' })
        .set(bearer(tenant.token))
        .expect(200);
      expect(tickets.body.data.map((t: { title: string }) => t.title)).toEqual(['Token login']);
      expect(requestsOf(client.clientId)).toEqual([
        expect.objectContaining({ granted: true, scope: 'https://outlook.office365.com/.default' }),
      ]);

      expect(await poll(tenant.token, box.id)).toMatchObject({ status: 'ok' });
      expect(requestsOf(client.clientId)).toHaveLength(1);
    },
  );

  test('When the token lives shorter than a poll interval, then it is fetched anew before it expires and the logins go on', async () => {
    const client = registerClient(2);
    const { tenant, box } = await setup(client);
    expect(await poll(tenant.token, box.id)).toMatchObject({ status: 'ok' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await poll(tenant.token, box.id)).toMatchObject({ status: 'ok' });
    expect(requestsOf(client.clientId)).toHaveLength(2);
  });

  test("When the client secret is wrong, then the mailbox is failing with the token endpoint's answer, and recovers when the secret is fixed", async () => {
    const client = registerClient();
    const { tenant, box } = await setup({ ...client, clientSecret: 'wrong' });
    const failing = await poll(tenant.token, box.id);
    expect(failing.status).toBe('failing');
    expect(failing.last_error).toMatch(/token endpoint answered 401/);
    await http
      .patch(`${BASE}/mailboxes/${box.id}`)
      .set(bearer(tenant.token))
      .send({ imap: { oauth2: { client_secret: client.clientSecret } } })
      .expect(200);
    expect(await poll(tenant.token, box.id)).toMatchObject({ status: 'ok', last_error: null });
  });

  test(
    'When a token is revoked at the server, then Dovecot refuses the login, the mailbox ' +
      'is failing, and the next poll fetches a new token and recovers',
    async () => {
      const client = registerClient();
      const { tenant, box } = await setup(client);
      expect(await poll(tenant.token, box.id)).toMatchObject({ status: 'ok' });
      oauth.revoke();
      const failing = await poll(tenant.token, box.id);
      expect(failing.status).toBe('failing');
      expect(requestsOf(client.clientId)).toHaveLength(1);
      expect(await poll(tenant.token, box.id)).toMatchObject({ status: 'ok', last_error: null });
      expect(requestsOf(client.clientId)).toHaveLength(2);
    },
  );

  test("When a reply goes out through an SMTP server taking XOAUTH2, then it is sent with a token of the mailbox's client", async () => {
    const client = registerClient();
    const { tenant, box, sender } = await setup(client);
    dovecot.appendMessage(
      USER,
      'INBOX',
      `From: ${sender}\r\nTo: ${USER}\r\nSubject: Reply by token\r\nMessage-ID: <smtp.${Date.now()}@contoso.example>\r\n\r\nHello.\r\n`,
    );
    await poll(tenant.token, box.id);
    const ticket = (await http.get(`${BASE}/tickets`).query({ source: 'email' }).set(bearer(tenant.token)).expect(200))
      .body.data[0];
    await http
      .post(`${BASE}/tickets/${ticket.id}/comments`)
      .set(bearer(tenant.token))
      .send({ body: 'Sent with a token.' })
      .expect(201);
    const before = smtp.messages.length;
    const sender$ = createOutboundSender({
      store: createStore(desk.database),
      sender: createSmtpSender(),
      secrets: testWebhookSecrets(),
      logger: createLogger({ service: 'desk', level: 'error' }),
      tokens: createOAuthTokens(testOutbound()),
    });
    expect(await sender$.sendDue()).toBe(1);
    const sent = smtp.messages.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.user).toBe(USER);
    expect(sent[0]!.raw.toString()).toContain('Sent with a token.');
  });

  test.each([
    ['a token_url that is no http(s) URL', { token_url: 'ftp://login.example/token' }],
    ['no client_secret', { client_secret: undefined }],
    ['an unknown field', { tenant: 'contoso' }],
  ])('When imap.oauth2 has %s, then it answers 400 and stores nothing', async (_case, change) => {
    const tenant = await newTenant(desk);
    const before = await snapshot(desk);
    await http
      .post(`${BASE}/mailboxes`)
      .set(bearer(tenant.token))
      .send({
        address: USER,
        imap: {
          host: dovecot.host,
          port: dovecot.port,
          tls: 'none',
          username: USER,
          oauth2: { ...oauth2Of(registerClient()), ...change },
        },
        smtp: { host: smtp.host, port: smtp.port, tls: 'none' },
      })
      .expect(400);
    expect(await snapshot(desk)).toEqual(before);
  });

  test('When imap.oauth2 is patched to null, then the mailbox logs in by password again', async () => {
    const client = registerClient();
    const { tenant, box } = await setup(client);
    const patched = await http
      .patch(`${BASE}/mailboxes/${box.id}`)
      .set(bearer(tenant.token))
      .send({ imap: { oauth2: null, password: 'not-given-to-desk' } })
      .expect(200);
    expect(patched.body.imap).toMatchObject({ password_set: true, oauth2: null });
    expect(await poll(tenant.token, box.id)).toMatchObject({ status: 'ok' });
    expect(requestsOf(client.clientId)).toHaveLength(0);
  });
});
