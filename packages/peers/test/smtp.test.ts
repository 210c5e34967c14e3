import { createTransport } from 'nodemailer';
import { canConnect } from '../src/internal/process';
import { startOAuthServer, startSmtpReceiver, type SmtpReceiver } from '../src';

function mail(n: number) {
  return {
    from: 'help@msp.example',
    to: ['customer@client.example', 'boss@client.example'],
    subject: `[#${n}] Printer broken`,
    text: 'We are on it.',
    messageId: `<reply-${n}@msp.example>`,
  };
}

describe('SMTP receiver', () => {
  let smtp: SmtpReceiver | undefined;
  afterEach(async () => {
    await smtp?.stop();
    smtp = undefined;
  });

  it('When nodemailer sends a message, then the receiver records its envelope and raw message', async () => {
    smtp = await startSmtpReceiver();
    const transport = createTransport({ host: smtp.host, port: smtp.port, secure: false });
    const info = await transport.sendMail({
      ...mail(1),
      envelope: { from: 'bounces@msp.example', to: ['customer@client.example'] },
    });
    expect(info.accepted).toEqual(['customer@client.example']);
    const [received] = await smtp.waitForMessages(1);
    expect(received!.from).toBe('bounces@msp.example');
    expect(received!.to).toEqual(['customer@client.example']);
    expect(received!.raw.toString()).toContain('Message-ID: <reply-1@msp.example>');
    expect(received!.raw.toString()).toContain('Subject: [#1] Printer broken');
    expect(received!.secure).toBe(false);
    transport.close();
  });

  it('When the first two deliveries are refused with 451, then the sender sees 451 twice and the third goes through', async () => {
    smtp = await startSmtpReceiver({ failFirst: 2 });
    const transport = createTransport({ host: smtp.host, port: smtp.port, secure: false });
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(transport.sendMail(mail(2))).rejects.toMatchObject({ responseCode: 451 });
    }
    await transport.sendMail(mail(2));
    expect(smtp.refused).toBe(2);
    expect(smtp.messages).toHaveLength(1);

    smtp.failNext(1, 550);
    await expect(transport.sendMail(mail(3))).rejects.toMatchObject({ responseCode: 550 });
    transport.close();
  });

  it('When the receiver is down, then connections are refused; when it is up again, then mail goes through on the same port', async () => {
    smtp = await startSmtpReceiver({ down: true });
    expect(await canConnect(smtp.host, smtp.port)).toBe(false);
    const transport = createTransport({ host: smtp.host, port: smtp.port, secure: false, connectionTimeout: 2000 });
    await expect(transport.sendMail(mail(4))).rejects.toMatchObject({ code: 'ESOCKET' });
    await smtp.setDown(false);
    await transport.sendMail(mail(4));
    await smtp.setDown(true);
    expect(await canConnect(smtp.host, smtp.port)).toBe(false);
    await smtp.setDown(false);
    await transport.sendMail(mail(5));
    expect(smtp.messages.map((m) => m.raw.toString().match(/Subject: (.*)/)?.[1])).toEqual([
      '[#4] Printer broken',
      '[#5] Printer broken',
    ]);
    transport.close();
  });

  it('When STARTTLS or implicit TLS is configured, then the session is encrypted with a certificate from the given CA', async () => {
    for (const tls of ['starttls', 'implicit'] as const) {
      smtp = await startSmtpReceiver({ tls });
      const transport = createTransport({
        host: smtp.host,
        port: smtp.port,
        secure: tls === 'implicit',
        requireTLS: tls === 'starttls',
        tls: { ca: [smtp.caCertificatePem] },
      });
      await transport.sendMail(mail(6));
      expect(smtp.messages[0]!.secure).toBe(true);
      transport.close();
      await smtp.stop();
      smtp = undefined;
    }
  });

  it('When accounts are configured, then AUTH is required and checked; XOAUTH2 takes a live token', async () => {
    const oauth = await startOAuthServer();
    try {
      smtp = await startSmtpReceiver({ users: { 'help@msp.example': 'smtp-secret' }, oauth });
      const send = (auth?: object) =>
        createTransport({ host: smtp!.host, port: smtp!.port, secure: false, ...(auth ? { auth } : {}) }).sendMail(
          mail(7),
        );
      await expect(send()).rejects.toMatchObject({ responseCode: 530 });
      await expect(send({ user: 'help@msp.example', pass: 'wrong' })).rejects.toMatchObject({ responseCode: 535 });
      await send({ user: 'help@msp.example', pass: 'smtp-secret' });
      await send({ type: 'OAuth2', user: 'help@msp.example', accessToken: oauth.issueToken('help@msp.example') });
      await expect(send({ type: 'OAuth2', user: 'help@msp.example', accessToken: 'revoked' })).rejects.toMatchObject({
        code: 'EAUTH',
      });
      expect(smtp.messages.map((m) => m.user)).toEqual(['help@msp.example', 'help@msp.example']);
    } finally {
      await oauth.stop();
    }
  });
});
