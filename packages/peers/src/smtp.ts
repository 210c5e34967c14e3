import { EventEmitter, once } from 'node:events';
import { join } from 'node:path';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { makeInstanceDir, removeInstanceDir } from './internal/paths';
import { freePort } from './internal/process';
import { createCertificateAuthority } from './tls';

export interface SmtpReceiverOptions {
  /** Refuse the first `n` messages at the end of DATA with `failCode` (retries must follow). */
  failFirst?: number;
  /** The reply code of a refusal (default 451, temporary; 5xx for permanent). */
  failCode?: number;
  /** Start with the port closed (connections refused) until `setDown(false)`. */
  down?: boolean;
  /** `none` (default: STARTTLS not offered), `starttls` (offered), `implicit` (TLS from the first byte). */
  tls?: 'none' | 'starttls' | 'implicit';
  /**
   * Accounts for AUTH PLAIN/LOGIN. Given: AUTH is required and checked. Left out: AUTH is
   * offered, optional, and any credentials are taken (and recorded).
   */
  users?: Readonly<Record<string, string>>;
  /** Accept XOAUTH2 with tokens this checks (an `OAuthServer` fits). */
  oauth?: { isValid(token: string, username?: string): boolean };
  /** Largest message accepted, in bytes (default 50 MB); larger ones get 552. */
  maxMessageBytes?: number;
}

export interface ReceivedMessage {
  /** MAIL FROM (empty for a bounce's null sender). */
  from: string;
  /** RCPT TO, in order. */
  to: string[];
  /** The message exactly as transmitted. */
  raw: Buffer;
  /** The authenticated user, if the client authenticated. */
  user: string | undefined;
  /** Whether the session was encrypted. */
  secure: boolean;
  receivedAt: Date;
}

export interface SmtpReceiver {
  host: string;
  port: number;
  /** The CA that issued the receiver's certificate (for `starttls`/`implicit`). */
  caCertificatePem: string;
  /** Every message accepted, in order of acceptance (a live array). */
  readonly messages: readonly ReceivedMessage[];
  /** How many deliveries were refused (failFirst / failNext). */
  readonly refused: number;
  /** Refuse the next `n` messages with `code` (default the configured failCode). */
  failNext(n: number, code?: number): void;
  /** `true` closes the port (and drops open sessions), `false` listens on the same port again. */
  setDown(down: boolean): Promise<void>;
  /** Resolves once at least `count` messages were accepted; rejects after `timeoutMs`. */
  waitForMessages(count: number, timeoutMs?: number): Promise<readonly ReceivedMessage[]>;
  stop(): Promise<void>;
}

/** An SMTP server (smtp-server, from the nodemailer project) on a free port of 127.0.0.1 that records what it is sent. */
export async function startSmtpReceiver(options: SmtpReceiverOptions = {}): Promise<SmtpReceiver> {
  const host = '127.0.0.1';
  const tlsMode = options.tls ?? 'none';
  const dir = makeInstanceDir('smtp');
  const ca = await createCertificateAuthority(join(dir, 'tls'), 'smtp receiver test CA');
  const cert = await ca.issue(['localhost', host]);
  const messages: ReceivedMessage[] = [];
  const events = new EventEmitter();
  let failRemaining = options.failFirst ?? 0;
  let failCode = options.failCode ?? 451;
  let refused = 0;

  const serverOptions: SMTPServerOptions = {
    secure: tlsMode === 'implicit',
    hideSTARTTLS: tlsMode === 'none',
    key: cert.keyPem,
    cert: cert.certPem,
    name: 'smtp-receiver.test',
    banner: 'msp peers SMTP receiver',
    logger: false,
    size: options.maxMessageBytes ?? 50 * 1024 * 1024,
    authMethods: ['PLAIN', 'LOGIN', ...(options.oauth ? ['XOAUTH2'] : [])],
    authOptional: !options.users && !options.oauth,
    allowInsecureAuth: true,
    // Sessions end at once when the receiver goes down or stops.
    closeTimeout: 100,
    onAuth(auth, _session, callback) {
      if (auth.method === 'XOAUTH2') {
        const ok = !!options.oauth && !!auth.accessToken && options.oauth.isValid(auth.accessToken, auth.username);
        return ok
          ? callback(null, { user: auth.username })
          : callback(null, { data: { status: '401', schemes: 'bearer' } });
      }
      if (!options.users) return callback(null, { user: auth.username });
      if (auth.username !== undefined && options.users[auth.username] === auth.password)
        return callback(null, { user: auth.username });
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded) {
          return callback(Object.assign(new Error('Message too large'), { responseCode: 552 }));
        }
        if (failRemaining > 0) {
          failRemaining--;
          refused++;
          const temporary = failCode < 500;
          return callback(
            Object.assign(new Error(temporary ? 'Try again later' : 'Delivery refused'), { responseCode: failCode }),
          );
        }
        const message: ReceivedMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          user: typeof session.user === 'string' ? session.user : undefined,
          secure: session.secure,
          receivedAt: new Date(),
        };
        messages.push(message);
        events.emit('message');
        return callback(null, 'Queued');
      });
    },
  };

  const port = await freePort(host);
  let server: SMTPServer | undefined;
  const listen = async () => {
    const s = new SMTPServer(serverOptions);
    s.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      s.server.once('error', reject);
      s.listen(port, host, () => resolve());
    });
    s.server.unref();
    server = s;
  };
  const close = async () => {
    const s = server;
    server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  if (!options.down) await listen();

  let stopped = false;
  return {
    host,
    port,
    caCertificatePem: ca.certPem,
    messages,
    get refused() {
      return refused;
    },
    failNext(n, code) {
      failRemaining = n;
      if (code !== undefined) failCode = code;
    },
    async setDown(down) {
      if (down) await close();
      else if (!server) await listen();
    },
    async waitForMessages(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`Expected ${count} messages, received ${messages.length} within ${timeoutMs} ms`);
        const timeout = new AbortController();
        const timer = setTimeout(() => timeout.abort(), left);
        try {
          await once(events, 'message', { signal: timeout.signal });
        } catch {
          // timed out: the loop reports it
        } finally {
          clearTimeout(timer);
        }
      }
      return messages;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await close();
      removeInstanceDir(dir);
    },
  };
}
