import { createTransport } from 'nodemailer';
import type { MailServer } from './mail-reader';

export interface OutgoingMail {
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  /** With angle brackets. */
  messageId: string;
  inReplyTo?: string;
  references: string[];
  headers?: Record<string, string>;
}

/** One interface per outside system kind; this is the SMTP one (nodemailer). */
export interface MailSender {
  send(server: Omit<MailServer, 'username'> & { username: string | null }, mail: OutgoingMail): Promise<void>;
}

const TIMEOUT_MS = 30_000;

export function createSmtpSender(): MailSender {
  return {
    async send(server, mail) {
      const transport = createTransport({
        host: server.host,
        port: server.port,
        secure: server.tls === 'implicit',
        ignoreTLS: server.tls === 'none',
        requireTLS: server.tls === 'starttls',
        auth: !server.username
          ? undefined
          : server.accessToken
            ? { type: 'OAuth2', user: server.username, accessToken: server.accessToken }
            : { user: server.username, pass: server.password },
        connectionTimeout: TIMEOUT_MS,
        greetingTimeout: TIMEOUT_MS,
        socketTimeout: TIMEOUT_MS,
      });
      try {
        await transport.sendMail({
          from: mail.from,
          to: mail.to,
          cc: mail.cc.length ? mail.cc : undefined,
          subject: mail.subject,
          text: mail.text,
          messageId: mail.messageId,
          inReplyTo: mail.inReplyTo,
          references: mail.references.length ? mail.references : undefined,
          headers: mail.headers,
        });
      } finally {
        transport.close();
      }
    },
  };
}
