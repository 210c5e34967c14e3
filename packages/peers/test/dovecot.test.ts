import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import { canConnect } from '../src/internal/process';
import { startDovecot, startOAuthServer, type Dovecot, type OAuthServer } from '../src';

jest.setTimeout(60_000);

function message(n: number, extra = ''): string {
  return [
    'From: Customer <customer@client.example>',
    'To: help@msp.example',
    `Subject: Printer broken #${n}`,
    `Message-ID: <msg-${n}@client.example>`,
    'Date: Mon, 02 Jun 2025 09:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    extra,
    '',
    `The printer on floor ${n} is broken.`,
    '',
  ]
    .filter((l, i) => l !== '' || i > 6)
    .join('\r\n');
}

describe('Dovecot', () => {
  let oauth: OAuthServer;
  let dovecot: Dovecot;
  beforeAll(async () => {
    oauth = await startOAuthServer();
    dovecot = await startDovecot({
      users: [
        { username: 'help@msp.example', password: 'help-secret' },
        { username: 'sales@msp.example', password: 'sales-secret' },
      ],
      oauth2: oauth,
    });
  });
  afterAll(async () => {
    await dovecot?.stop();
    await oauth?.stop();
  });

  it('When messages are appended, then IMAP over implicit TLS, STARTTLS and plain shows them with their flags, in append order', async () => {
    dovecot.appendMessage('help@msp.example', 'INBOX', message(1));
    dovecot.appendMessage('help@msp.example', 'INBOX', message(2), ['\\Seen', '\\Flagged']);
    for (const tls of ['implicit', 'starttls', 'none'] as const) {
      const client = new ImapFlow(dovecot.imapOptions('help@msp.example', { tls }));
      await client.connect();
      try {
        expect(client.secureConnection).toBe(tls !== 'none');
        const lock = await client.getMailboxLock('INBOX');
        try {
          const unseen = await client.search({ seen: false }, { uid: true });
          expect(unseen).toHaveLength(1);
        } finally {
          lock.release();
        }
      } finally {
        await client.logout();
      }
    }
    const listed = await dovecot.listMessages('help@msp.example', 'INBOX');
    expect(listed.map((m) => m.messageId)).toEqual(['<msg-1@client.example>', '<msg-2@client.example>']);
    expect(listed[1]!.flags.sort()).toEqual(['\\Flagged', '\\Seen']);
    expect(listed[0]!.subject).toBe('Printer broken #1');
  });

  it('When 10,000 messages are appended at once, then Dovecot indexes them all in order, and a client can mark one seen and move it', async () => {
    const messages = Array.from({ length: 10_000 }, (_, i) => ({ raw: message(1000 + i) }));
    dovecot.appendMessages('sales@msp.example', 'INBOX', messages);
    const listed = await dovecot.listMessages('sales@msp.example', 'INBOX');
    expect(listed).toHaveLength(10_000);
    expect(listed[0]!.messageId).toBe('<msg-1000@client.example>');
    expect(listed[9_999]!.messageId).toBe('<msg-10999@client.example>');

    const client = new ImapFlow(dovecot.imapOptions('sales@msp.example'));
    await client.connect();
    try {
      await client.mailboxCreate('Processed');
      const lock = await client.getMailboxLock('INBOX');
      try {
        await client.messageFlagsAdd(String(listed[0]!.uid), ['\\Seen'], { uid: true });
        await client.messageMove(String(listed[0]!.uid), 'Processed', { uid: true });
      } finally {
        lock.release();
      }
    } finally {
      await client.logout();
    }
    const processed = await dovecot.listMessages('sales@msp.example', 'Processed');
    expect(processed.map((m) => [m.messageId, m.flags])).toEqual([['<msg-1000@client.example>', ['\\Seen']]]);
    expect(await dovecot.listMessages('sales@msp.example', 'INBOX')).toHaveLength(9_999);
  });

  it('When a message goes into a folder that does not exist yet, then the folder appears with it', async () => {
    dovecot.appendMessage('help@msp.example', 'Archive/2024', message(3), ['\\Seen']);
    const listed = await dovecot.listMessages('help@msp.example', 'Archive.2024');
    expect(listed.map((m) => m.messageId)).toEqual(['<msg-3@client.example>']);
  });

  it('When a client logs in with XOAUTH2, then a live token for that mailbox is accepted and a revoked, foreign or unknown one is not', async () => {
    oauth.registerClient({ clientId: 'desk', clientSecret: 'desk-secret', username: 'help@msp.example' });
    const response = await fetch(oauth.tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from('desk:desk-secret').toString('base64')}`,
      },
      body: 'grant_type=client_credentials&scope=https%3A%2F%2Foutlook.office365.com%2F.default',
    });
    expect(response.status).toBe(200);
    const { access_token: token } = (await response.json()) as { access_token: string };

    // imapflow prefers OAUTHBEARER when offered: a second Dovecot offers XOAUTH2 alone.
    const xoauth2Only = await startDovecot({
      users: dovecot.users,
      oauth2: { introspectionUrl: oauth.introspectionUrl, mechanisms: ['xoauth2'] },
    });
    try {
      const login = async (server: Dovecot, user: string, accessToken: string) => {
        const client = new ImapFlow(server.imapOptions(user, { accessToken }));
        try {
          await client.connect();
          await client.logout();
          return true;
        } catch {
          client.close();
          return false;
        }
      };
      const logins = (server: Dovecot) =>
        readFileSync(join(server.dir, 'dovecot.log'), 'utf8').match(/Login: user=<[^>]+>, method=[A-Z0-9]+/g);
      const before = oauth.introspections;
      expect(await login(xoauth2Only, 'help@msp.example', token)).toBe(true);
      expect(await login(dovecot, 'help@msp.example', token)).toBe(true);
      expect(oauth.introspections).toBe(before + 2);
      expect(logins(xoauth2Only)).toEqual(['Login: user=<help@msp.example>, method=XOAUTH2']);
      expect(logins(dovecot)).toContain('Login: user=<help@msp.example>, method=OAUTHBEARER');

      expect(await login(xoauth2Only, 'sales@msp.example', token)).toBe(false);
      expect(await login(xoauth2Only, 'help@msp.example', 'not-a-token')).toBe(false);
      oauth.revoke(token);
      expect(await login(xoauth2Only, 'help@msp.example', token)).toBe(false);
      expect(await login(dovecot, 'help@msp.example', token)).toBe(false);
    } finally {
      await xoauth2Only.stop();
    }

    const wrongSecret = await fetch(oauth.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=desk&client_secret=wrong',
    });
    expect(wrongSecret.status).toBe(401);
  });

  it('When a wrong password is given, then the login is refused; when Dovecot is down, then the connection is refused until it is up', async () => {
    const wrong = new ImapFlow({
      ...dovecot.imapOptions('help@msp.example'),
      auth: { user: 'help@msp.example', pass: 'wrong' },
    });
    await expect(wrong.connect()).rejects.toThrow(/auth|fail/i);
    wrong.close();

    await dovecot.setDown(true);
    expect(await canConnect(dovecot.host, dovecot.tlsPort)).toBe(false);
    await dovecot.setDown(false);
    expect(await dovecot.listMessages('help@msp.example', 'INBOX')).toHaveLength(2);
  });

  it('When Dovecot stops, then its ports close and its files are gone', async () => {
    const other = await startDovecot();
    await other.stop();
    expect(await canConnect(other.host, other.port)).toBe(false);
    expect(existsSync(other.dir)).toBe(false);
  });
});
