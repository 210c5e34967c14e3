// nodemailer ships no types; the little of it desk uses.
declare module 'nodemailer' {
  export interface SendMailOptions {
    from: string;
    to: string[];
    cc?: string[];
    subject: string;
    text: string;
    messageId: string;
    inReplyTo?: string;
    references?: string[];
    headers?: Record<string, string>;
  }
  export interface Transporter {
    sendMail(options: SendMailOptions): Promise<{ messageId: string; accepted: unknown[]; rejected: unknown[] }>;
    close(): void;
  }
  export function createTransport(options: {
    host: string;
    port: number;
    secure: boolean;
    ignoreTLS?: boolean;
    requireTLS?: boolean;
    auth?: { user: string; pass: string } | { type: 'OAuth2'; user: string; accessToken: string };
    connectionTimeout?: number;
    greetingTimeout?: number;
    socketTimeout?: number;
  }): Transporter;
}
