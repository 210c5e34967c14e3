import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { ImapFlow, type ImapFlowOptions } from 'imapflow';
import { makeInstanceDir, peersRoot, removeInstanceDir } from './internal/paths';
import { freePort, type PeerProcess, spawnPeer, waitForPorts, waitForPortsClosed } from './internal/process';
import { type CertificateKind, createCertificateAuthority } from './tls';

const START_TIMEOUT_MS = 20_000;
const PORT_ATTEMPTS = 3;

export interface MailUser {
  /** The login name, usually the address (`alice@example.org`). */
  username: string;
  password: string;
}

export interface DovecotOptions {
  /** Static users (default: `alice@example.org` / `alice-secret`). */
  users?: readonly MailUser[];
  /**
   * Accept XOAUTH2 and OAUTHBEARER, checking each bearer token at this RFC 7662 introspection
   * endpoint (`introspection_mode = post`); `startOAuthServer()` gives one. Password logins keep
   * working beside it.
   */
  oauth2?: { introspectionUrl: string; mechanisms?: readonly ('xoauth2' | 'oauthbearer')[] };
  /**
   * Seconds Dovecot waits before answering a failed login (default 0 here, with the growing
   * per-address penalty off too, to keep tests of refused logins fast; Dovecot's own default is
   * 2, then 4, 8 and 15 for further failures from one address).
   */
  authFailureDelaySeconds?: number;
  /** The certificate presented on the TLS port and after STARTTLS (default `valid`). */
  certificate?: CertificateKind;
}

export type MessageFlag = '\\Seen' | '\\Answered' | '\\Flagged' | '\\Deleted' | '\\Draft';

export interface NewMessage {
  /** The whole message as it would arrive (RFC 5322, CRLF or LF line ends). */
  raw: string | Buffer;
  flags?: readonly MessageFlag[];
  /** INTERNALDATE (the file's time); now when left out. */
  internalDate?: Date;
}

export interface ListedMessage {
  uid: number;
  flags: string[];
  size: number;
  messageId: string | undefined;
  subject: string | undefined;
  internalDate: Date | undefined;
}

export interface Dovecot {
  host: string;
  /** Plain IMAP with STARTTLS offered (143-style). */
  port: number;
  /** Implicit TLS (993-style). */
  tlsPort: number;
  caCertificatePem: string;
  users: readonly MailUser[];
  dir: string;
  /** Adds (or changes the password of) a user; Dovecot rereads its passwd file by itself. */
  addUser(user: MailUser): void;
  /** Delivers a message into `folder` (`INBOX`, `Archive`, `Archive/2024`), created when missing. */
  appendMessage(user: string, folder: string, raw: string | Buffer, flags?: readonly MessageFlag[]): void;
  /** Delivers many messages at once (maildir files; ten thousand take about a second). */
  appendMessages(user: string, folder: string, messages: readonly NewMessage[]): void;
  /** What the server shows in `folder` over IMAP, in UID order. */
  listMessages(user: string, folder: string): Promise<ListedMessage[]>;
  /** imapflow options for logging in as `user` (password, or `accessToken` for XOAUTH2). */
  imapOptions(
    user: string,
    options?: { tls?: 'implicit' | 'starttls' | 'none'; accessToken?: string },
  ): ImapFlowOptions;
  /** `true` stops Dovecot (connections refused), `false` starts it again on the same ports. */
  setDown(down: boolean): Promise<void>;
  stop(): Promise<void>;
}

/** uid and gid of a system account (`nobody`), from /etc/passwd and /etc/group. */
function account(user: string, group: string): { uid: number; gid: number } {
  const find = (file: string, name: string): number | undefined => {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const fields = line.split(':');
      if (fields[0] === name) return Number(fields[2]);
    }
    return undefined;
  };
  return { uid: find('/etc/passwd', user) ?? 65534, gid: find('/etc/group', group) ?? 65534 };
}

const FLAG_LETTERS: Record<MessageFlag, string> = {
  '\\Draft': 'D',
  '\\Flagged': 'F',
  '\\Answered': 'R',
  '\\Seen': 'S',
  '\\Deleted': 'T',
};

function validateUser(user: MailUser): void {
  if (!/^[A-Za-z0-9._%+@-]+$/.test(user.username)) throw new Error(`Unsupported mail user name: ${user.username}`);
  if (/[:\n]/.test(user.password)) throw new Error('A mail password must not contain ":" or a line break');
}

function dovecotConf(o: {
  dir: string;
  ports: [number, number];
  certPath: string;
  keyPath: string;
  oauthMechanisms: readonly string[];
  authFailureDelaySeconds: number;
  mailUser: string;
  mailGroup: string;
}): string {
  const { dir } = o;
  const lines = [
    '# Throw-away Dovecot for tests: IMAP only, static users, maildir in this directory.',
    'protocols = imap',
    'listen = 127.0.0.1',
    `base_dir = ${dir}/run`,
    `state_dir = ${dir}/state`,
    `instance_name = msp-peers-${randomBytes(3).toString('hex')}`,
    `log_path = ${dir}/dovecot.log`,
    'ssl = yes',
    `ssl_cert = <${o.certPath}`,
    `ssl_key = <${o.keyPath}`,
    // Plain LOGIN on the non-TLS port too: a mailbox configured with tls "none" must be testable.
    'disable_plaintext_auth = no',
    `auth_mechanisms = ${['plain', 'login', ...o.oauthMechanisms].join(' ')}`,
    `auth_failure_delay = ${o.authFailureDelaySeconds} secs`,
    `mail_location = maildir:${dir}/mail/%u/Maildir`,
    // A test directory need not survive a power cut.
    'mail_fsync = never',
    'passdb {',
    '  driver = passwd-file',
    `  args = scheme=PLAIN username_format=%u ${dir}/passwd`,
    ...(o.oauthMechanisms.length ? ['  mechanisms = plain login'] : []),
    '}',
  ];
  if (o.oauthMechanisms.length) {
    lines.push(
      'passdb {',
      '  driver = oauth2',
      `  mechanisms = ${o.oauthMechanisms.join(' ')}`,
      `  args = ${dir}/oauth2.conf.ext`,
      '}',
    );
  }
  lines.push(
    'userdb {',
    '  driver = static',
    `  args = uid=${o.mailUser} gid=${o.mailGroup} home=${dir}/mail/%u`,
    '}',
    'service imap-login {',
    '  inet_listener imap {',
    `    port = ${o.ports[0]}`,
    '  }',
    '  inet_listener imaps {',
    `    port = ${o.ports[1]}`,
    '    ssl = yes',
    '  }',
    '}',
    // Failed logins from one address would wait 2, 4, 8 then 15 s (anvil's penalty): every test
    // client comes from 127.0.0.1, and tests of refused logins must stay fast.
    ...(o.authFailureDelaySeconds === 0
      ? ['service anvil {', '  unix_listener anvil-auth-penalty {', '    mode = 0', '  }', '}']
      : []),
    // Several pollers of one mailbox from one address (instances of a service under test).
    'protocol imap {',
    '  mail_max_userip_connections = 200',
    '}',
    '',
  );
  return lines.join('\n');
}

/**
 * Starts a throw-away Dovecot (IMAP) on free ports of 127.0.0.1, running as root with mail owned
 * by `nobody` (Dovecot refuses mail access as root), maildir under a temporary directory.
 */
export async function startDovecot(options: DovecotOptions = {}): Promise<Dovecot> {
  const host = '127.0.0.1';
  const users = new Map<string, MailUser>();
  for (const u of options.users ?? [{ username: 'alice@example.org', password: 'alice-secret' }]) {
    validateUser(u);
    users.set(u.username, { ...u });
  }
  // Dovecot's processes run as nobody/dovenull and must traverse to the mail and sockets.
  const dir = makeInstanceDir('dovecot');
  chmodSync(peersRoot(), 0o755);
  chmodSync(join(peersRoot(), 'run'), 0o755);
  chmodSync(dir, 0o755);
  const mailAccount = account('nobody', 'nogroup');
  let proc: PeerProcess | undefined;
  try {
    const ca = await createCertificateAuthority(join(dir, 'tls'), 'dovecot test CA');
    const cert = await ca.issue(['localhost', host], options.certificate ?? 'valid');
    const mailRoot = join(dir, 'mail');
    mkdirSync(mailRoot, { mode: 0o755 });
    chownSync(mailRoot, mailAccount.uid, mailAccount.gid);
    const writePasswd = () =>
      writeFileSync(
        join(dir, 'passwd'),
        [...users.values()].map((u) => `${u.username}:{PLAIN}${u.password}::::::\n`).join(''),
        { mode: 0o644 },
      );
    writePasswd();
    if (options.oauth2) {
      writeFileSync(
        join(dir, 'oauth2.conf.ext'),
        [
          `introspection_url = ${options.oauth2.introspectionUrl}`,
          'introspection_mode = post',
          'username_attribute = username',
          'active_attribute = active',
          'active_value = true',
          '',
        ].join('\n'),
      );
    }
    const config = join(dir, 'dovecot.conf');
    let ports: [number, number] = [0, 0];
    const startProcess = async (reusePorts: boolean) => {
      for (let attempt = 1; ; attempt++) {
        if (!reusePorts) ports = [await freePort(host), await freePort(host)];
        writeFileSync(
          config,
          dovecotConf({
            dir,
            ports,
            certPath: cert.certPath,
            keyPath: cert.keyPath,
            oauthMechanisms: options.oauth2 ? (options.oauth2.mechanisms ?? ['xoauth2', 'oauthbearer']) : [],
            authFailureDelaySeconds: options.authFailureDelaySeconds ?? 0,
            mailUser: 'nobody',
            mailGroup: 'nogroup',
          }),
        );
        const p = spawnPeer('dovecot', ['-F', '-c', config], { logPath: join(dir, 'dovecot.out'), instanceDir: dir });
        try {
          await waitForPorts(p, host, ports, START_TIMEOUT_MS, 'dovecot');
          return p;
        } catch (error) {
          const log = join(dir, 'dovecot.log');
          const detail = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '';
          await p.stop(1000);
          if (reusePorts || attempt >= PORT_ATTEMPTS)
            throw new Error(`${(error as Error).message}\n${detail}`, { cause: error });
        }
      }
    };
    proc = await startProcess(false);
    const [port, tlsPort] = ports;

    let sequence = 0;
    const deliveryStamp = Math.floor(Date.now() / 1000);
    const maildir = (user: string, folder: string): string => {
      if (!users.has(user)) throw new Error(`No such mail user: ${user}`);
      const root = join(mailRoot, user, 'Maildir');
      const isInbox = folder.toUpperCase() === 'INBOX';
      if (!isInbox && !/^[A-Za-z0-9 _-]+(\/[A-Za-z0-9 _-]+)*$/.test(folder))
        throw new Error(`Unsupported folder name: ${folder}`);
      // Maildir++: a folder is a dot directory in the root, levels separated by dots.
      const path = isInbox ? root : join(root, `.${folder.split('/').join('.')}`);
      if (!existsSync(join(path, 'cur'))) {
        for (const d of [join(mailRoot, user), root, path, join(path, 'cur'), join(path, 'new'), join(path, 'tmp')]) {
          if (existsSync(d)) continue;
          mkdirSync(d, { mode: 0o700 });
          chownSync(d, mailAccount.uid, mailAccount.gid);
        }
        if (!isInbox) {
          const marker = join(path, 'maildirfolder');
          writeFileSync(marker, '');
          chownSync(marker, mailAccount.uid, mailAccount.gid);
        }
      }
      return path;
    };

    const appendMessages = (user: string, folder: string, messages: readonly NewMessage[]) => {
      const path = maildir(user, folder);
      for (const message of messages) {
        const body = typeof message.raw === 'string' ? Buffer.from(message.raw) : message.raw;
        const n = sequence++;
        const letters = [...new Set(message.flags ?? [])]
          .map((f) => FLAG_LETTERS[f])
          .sort()
          .join('');
        // Dovecot gives new files UIDs in the order of the time in their names: seconds, then
        // microseconds (M…). One "microsecond" per message keeps UIDs in append order.
        const base = `${deliveryStamp + Math.floor(n / 1_000_000)}.M${n % 1_000_000}P${process.pid}.msp-peers,S=${body.length}`;
        const tmp = join(path, 'tmp', base);
        const fd = openSync(tmp, 'wx', 0o600);
        try {
          writeSync(fd, body);
        } finally {
          closeSync(fd);
        }
        chownSync(tmp, mailAccount.uid, mailAccount.gid);
        if (message.internalDate) utimesSync(tmp, message.internalDate, message.internalDate);
        renameSync(tmp, join(path, 'cur', `${base}:2,${letters}`));
      }
    };

    const imapOptions: Dovecot['imapOptions'] = (user, o = {}) => {
      const tls = o.tls ?? 'implicit';
      const account = users.get(user);
      if (!account && !o.accessToken) throw new Error(`No such mail user: ${user}`);
      return {
        host,
        port: tls === 'implicit' ? tlsPort : port,
        secure: tls === 'implicit',
        // imapflow: true requires STARTTLS, false never tries it
        ...({ doSTARTTLS: tls === 'starttls' } as object),
        tls: { ca: [ca.certPem], servername: 'localhost' },
        auth: o.accessToken ? { user, accessToken: o.accessToken } : { user, pass: account!.password },
        logger: false,
      };
    };

    let stopped = false;
    return {
      host,
      port,
      tlsPort,
      caCertificatePem: ca.certPem,
      get users() {
        return [...users.values()];
      },
      dir,
      addUser(user) {
        validateUser(user);
        users.set(user.username, { ...user });
        writePasswd();
      },
      appendMessage: (user, folder, raw, flags) => appendMessages(user, folder, [{ raw, flags }]),
      appendMessages,
      async listMessages(user, folder) {
        const client = new ImapFlow(imapOptions(user));
        await client.connect();
        try {
          const mailbox = await client.mailboxOpen(folder, { readOnly: true });
          if (mailbox.exists === 0) return [];
          const listed: ListedMessage[] = [];
          for await (const m of client.fetch('1:*', {
            uid: true,
            flags: true,
            size: true,
            envelope: true,
            internalDate: true,
          })) {
            listed.push({
              uid: m.uid,
              // \Recent belongs to the session that looked first, not to the message.
              flags: [...(m.flags ?? [])].filter((f) => f !== '\\Recent'),
              size: m.size ?? 0,
              messageId: m.envelope?.messageId,
              subject: m.envelope?.subject,
              internalDate: m.internalDate ? new Date(m.internalDate) : undefined,
            });
          }
          return listed.sort((a, b) => a.uid - b.uid);
        } finally {
          await client.logout().catch(() => undefined);
        }
      },
      imapOptions,
      async setDown(down) {
        if (down && proc) {
          // Killed outright: Dovecot's own shutdown takes seconds, and its indexes survive a crash.
          await proc.stop(0);
          proc = undefined;
          await waitForPortsClosed(host, ports);
        } else if (!down && !proc) {
          proc = await startProcess(true);
        }
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        if (proc) {
          await proc.stop(0);
          await waitForPortsClosed(host, ports);
        }
        if (!process.env.MSP_PEERS_KEEP) removeInstanceDir(dir);
      },
    };
  } catch (error) {
    await proc?.stop().catch(() => undefined);
    removeInstanceDir(dir);
    throw error;
  }
}
