'use strict';
// The e-mail benchmark (`pnpm bench:email`): a backlog of messages in a real Dovecot (from
// Debian's dovecot-imapd, started by @msp/peers), drained twice from two mailboxes of identical
// content:
//   bare  a bare imapflow + postal-mime loop, one message at a time (UID SEARCH UNSEEN, a peek at
//         each message, \Seen), one INSERT per message into a table of the same PostgreSQL;
//   desk  the built desk, as production starts it, polling its mailbox once (POST
//         /mailboxes/{id}/poll): each message stored raw, threaded or made a ticket, its contact
//         found or created, its attachments kept, in one transaction per message.
// A third of the messages are replies to earlier ones (In-Reply-To), one in twenty carries an
// attachment. Target: desk drains at ≥ 0.5× the bare loop's rate, with its RSS flat (within 20 MB
// between the first tenth of the backlog and its end).
// Writes bench/results/<date>-email.json and bench/results/latest-email.md. Environment (optional):
//   BENCH_DATABASE_URL  a PostgreSQL server URL (default the local one)
//   BENCH_MESSAGES      size of the backlog (default 10000)
//   BENCH_STRICT        1: a missed target fails the run
const { generateKeyPairSync, randomBytes } = require('node:crypto');
const { mkdirSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const {
  apiCall,
  ROOT,
  round,
  databaseUrlFor,
  withClient,
  startService,
  stopService,
  memory,
  clientToken,
  describeMachine,
  machine,
} = require('../support');
const { startDovecot } = require(`${ROOT}/packages/peers/dist/index.js`);

const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
if (!Number.isInteger(MESSAGES) || MESSAGES < 100) {
  console.error(
    `BENCH_MESSAGES must be a whole number of 100 or more (got ${JSON.stringify(process.env.BENCH_MESSAGES)})`,
  );
  process.exit(2);
}
const TARGET = { rate: 0.5, rssGrowthMb: 20 };
const CLIENT_ID = 'bench-email';
const CLIENT_SECRET = randomBytes(24).toString('hex');
const DOMAIN = 'contoso.example';
const BOX = { username: 'desk@bench.example', password: 'bench-desk' };
const BARE = { username: 'bare@bench.example', password: 'bench-bare' };
const RESULTS = path.join(ROOT, 'bench/results');

/** The backlog: messages from 50 senders of the client's domain; every third a reply, every twentieth with an attachment. */
function backlog() {
  const attachment = randomBytes(12_000).toString('base64').replace(/.{76}/g, '$&\r\n');
  const messages = [];
  for (let n = 0; n < MESSAGES; n++) {
    const id = `bench-${n}@${DOMAIN}`;
    const reply =
      n % 3 === 2 ? `In-Reply-To: <bench-${n - 1}@${DOMAIN}>\r\nReferences: <bench-${n - 1}@${DOMAIN}>\r\n` : '';
    const headers = `From: User ${n % 50} <user${n % 50}@${DOMAIN}>\r\nTo: ${BOX.username}\r\nSubject: ${reply ? 'Re: ' : ''}Printer ${n - (reply ? 1 : 0)} fails\r\nMessage-ID: <${id}>\r\n${reply}Date: ${new Date(Date.UTC(2026, 10, 1, 8) + n * 1000).toUTCString()}\r\nMIME-Version: 1.0\r\n`;
    const text = `Hello,\r\n\r\nthe printer on floor ${n % 7} stopped printing this morning (message ${n}).\r\n\r\nRegards\r\nUser ${n % 50}\r\n`;
    const raw =
      n % 20 === 19
        ? `${headers}Content-Type: multipart/mixed; boundary="b${n}"\r\n\r\n--b${n}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${text}--b${n}\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="log-${n}.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${attachment}\r\n--b${n}--\r\n`
        : `${headers}Content-Type: text/plain; charset=utf-8\r\n\r\n${text}`;
    messages.push({ raw });
  }
  return messages;
}

/** The bare loop: each message on its own on the wire (desk's reader takes batches), then one INSERT per parsed message. */
async function drainBare(dovecot, databaseUrl) {
  const { ImapFlow } = require(require.resolve('imapflow', { paths: [path.join(ROOT, 'services/desk')] }));
  const PostalMime = require(require.resolve('postal-mime', { paths: [path.join(ROOT, 'services/desk')] }));
  const { Client } = require('pg');
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query(
    'CREATE TABLE IF NOT EXISTS bare_messages (message_id text PRIMARY KEY, sender text, subject text, body text, raw bytea, received_at timestamptz DEFAULT now())',
  );
  const client = new ImapFlow({
    host: dovecot.host,
    port: dovecot.port,
    secure: false,
    doSTARTTLS: false,
    auth: { user: BARE.username, pass: BARE.password },
    logger: false,
  });
  const began = process.hrtime.bigint();
  await client.connect();
  const lock = await client.getMailboxLock('INBOX');
  let count = 0;
  try {
    for (const uid of (await client.search({ seen: false }, { uid: true })) || []) {
      await client.fetchOne(String(uid), { size: true, envelope: true }, { uid: true });
      const full = await client.fetchOne(String(uid), { source: true }, { uid: true });
      const parsed = await PostalMime.parse(full.source);
      await db.query('INSERT INTO bare_messages (message_id, sender, subject, body, raw) VALUES ($1, $2, $3, $4, $5)', [
        parsed.messageId,
        parsed.from?.address,
        parsed.subject,
        parsed.text,
        full.source,
      ]);
      await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
      count++;
    }
  } finally {
    lock.release();
    await client.logout();
    await db.end();
  }
  return { messages: count, seconds: Number(process.hrtime.bigint() - began) / 1e9 };
}

const api = (desk, method, urlPath, body) => apiCall(desk, desk.auth, method, urlPath, body);

/** desk's drain: one poll of the mailbox, timed until the inbound log holds every message; RSS sampled meanwhile. */
async function drainDesk(dovecot, databaseUrl) {
  const desk = await startService('desk', {
    DATABASE_URL: databaseUrl,
    // Production's required secrets, made for this run.
    JWT_PRIVATE_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }),
    WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    OUTBOUND_ALLOW_LOOPBACK: 'true',
    RATE_LIMIT_PER_MINUTE: '1000000000',
    BOOTSTRAP_CLIENT_ID: CLIENT_ID,
    BOOTSTRAP_CLIENT_SECRET: CLIENT_SECRET,
    BOOTSTRAP_TENANT: 'bench',
    LOG_LEVEL: 'warn',
  });
  try {
    desk.auth = await clientToken(desk.url, CLIENT_ID, CLIENT_SECRET);
    await api(desk, 'POST', '/clients', { name: 'Contoso', email_domains: [DOMAIN] });
    const box = await api(desk, 'POST', '/mailboxes', {
      address: BOX.username,
      imap: { host: dovecot.host, port: dovecot.port, tls: 'none', username: BOX.username, password: BOX.password },
      smtp: { host: '127.0.0.1', port: 25, tls: 'none' },
      poll_interval_seconds: 3600,
      unknown_sender: 'create_contact',
    });
    const startRss = memory(desk.child.pid).rss_mb;
    const samples = [];
    const began = process.hrtime.bigint();
    await api(desk, 'POST', `/mailboxes/${box.id}/poll`);
    let done = 0;
    for (let waited = 0; done < MESSAGES; waited++) {
      if (waited > 20 * 60 * 4) throw new Error(`desk processed ${done} of ${MESSAGES} messages in 20 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      // Stored raw first, then processed: done once every message is stored and none waits.
      const stored = (await api(desk, 'GET', `/inbound-emails?mailbox_id=${box.id}&per_page=1`)).pagination.total;
      const waiting = (await api(desk, 'GET', `/inbound-emails?mailbox_id=${box.id}&status=received&per_page=1`))
        .pagination.total;
      done = stored - waiting;
      samples.push({ done, rss_mb: memory(desk.child.pid).rss_mb });
    }
    const seconds = Number(process.hrtime.bigint() - began) / 1e9;
    const statuses = await withClient(
      databaseUrl,
      async (db) =>
        (await db.query('SELECT status, count(*)::int AS n FROM inbound_emails GROUP BY status ORDER BY status')).rows,
    );
    const tenth = samples.find((s) => s.done >= MESSAGES / 10) ?? samples[0];
    const end = samples[samples.length - 1];
    return {
      messages: done,
      seconds,
      statuses,
      rss_mb: {
        after_start: round(startRss),
        at_tenth: round(tenth.rss_mb),
        at_end: round(end.rss_mb),
        peak: round(memory(desk.child.pid).hwm_mb),
      },
    };
  } finally {
    await stopService(desk);
  }
}

async function main() {
  const messages = backlog();
  const dovecot = await startDovecot({ users: [BOX, BARE] });
  const names = { bare: `bench_email_bare_${process.pid}`, desk: `bench_email_desk_${process.pid}` };
  try {
    for (const user of [BARE.username, BOX.username]) dovecot.appendMessages(user, 'INBOX', messages);
    for (const name of Object.values(names)) await withClient(SERVER_URL, (db) => db.query(`CREATE DATABASE ${name}`));
    const bare = await drainBare(dovecot, databaseUrlFor(SERVER_URL, names.bare));
    const desk = await drainDesk(dovecot, databaseUrlFor(SERVER_URL, names.desk));
    const ratio = bare.seconds / desk.seconds;
    const growth = desk.rss_mb.at_end - desk.rss_mb.at_tenth;
    const report = {
      date: new Date().toISOString(),
      machine: machine(
        await withClient(
          SERVER_URL,
          async (db) => `PostgreSQL ${(await db.query('SHOW server_version')).rows[0].server_version}`,
        ),
      ),
      settings: { messages: MESSAGES, replies: Math.floor(MESSAGES / 3), with_attachment: Math.floor(MESSAGES / 20) },
      bare: { ...bare, per_second: round(bare.messages / bare.seconds) },
      desk: { ...desk, per_second: round(desk.messages / desk.seconds) },
      rate_ratio: round(ratio, 2),
      rss_growth_mb: round(growth),
      targets: {
        rate: TARGET.rate,
        rss_growth_mb: TARGET.rssGrowthMb,
        met: ratio >= TARGET.rate && growth <= TARGET.rssGrowthMb,
      },
    };
    mkdirSync(RESULTS, { recursive: true });
    writeFileSync(path.join(RESULTS, `${report.date.slice(0, 10)}-email.json`), `${JSON.stringify(report, null, 2)}\n`);
    const md = [
      `# pnpm bench:email (${report.date.slice(0, 10)})`,
      '',
      describeMachine(report.machine),
      '',
      `${MESSAGES.toLocaleString('en')} messages in Dovecot (a third replies, one in twenty with a 12 KB attachment).`,
      '',
      '| | messages/s | seconds | RSS after start → at a tenth → at the end (peak), MB |',
      '| --- | ---: | ---: | --- |',
      `| bare imapflow + postal-mime + INSERT | ${report.bare.per_second} | ${round(bare.seconds)} | |`,
      `| desk (one poll) | ${report.desk.per_second} | ${round(desk.seconds)} | ${desk.rss_mb.after_start} → ${desk.rss_mb.at_tenth} → ${desk.rss_mb.at_end} (${desk.rss_mb.peak}) |`,
      '',
      `Rate ×${report.rate_ratio} of the bare loop (target ≥ ${TARGET.rate}); RSS growth ${report.rss_growth_mb} MB (target ≤ ${TARGET.rssGrowthMb}).`,
      `desk's inbound log: ${desk.statuses.map((s) => `${s.n} ${s.status}`).join(', ')}.`,
      '',
    ].join('\n');
    writeFileSync(path.join(RESULTS, 'latest-email.md'), md);
    console.log(md);
    if (process.env.BENCH_STRICT === '1' && !report.targets.met) process.exitCode = 1;
  } finally {
    await dovecot.stop();
    for (const name of Object.values(names))
      await withClient(SERVER_URL, (db) => db.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(
        () => undefined,
      );
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
