import { ImapFlow, type FetchMessageObject } from 'imapflow';
import type { FetchedMessage, MailReader } from './mail-reader';

/** How long a connection or a greeting may take before the poll fails (and backs off). */
const CONNECT_TIMEOUT_MS = 15_000;
/** Messages per batch: one FETCH of their envelopes, one of their bytes, one STORE of \Seen, not one of each per message. */
const BATCH_MESSAGES = 100;
/** Bytes one batch downloads at most (a larger message comes alone): what a poll holds in memory stays bounded. */
const BATCH_BYTES = 4 * 1024 * 1024;

const byUid = (a: FetchMessageObject, b: FetchMessageObject) => a.uid - b.uid;

/** The bytes of the messages of `envelopes` within `maxBytes` (BODY.PEEK[]: reading does not set \Seen), in one FETCH. */
async function download(
  client: ImapFlow,
  envelopes: FetchMessageObject[],
  maxBytes: number,
): Promise<FetchedMessage[]> {
  const wanted = envelopes.filter((meta) => (meta.size ?? 0) <= maxBytes).map((meta) => meta.uid);
  const sources = new Map<number, Buffer>();
  if (wanted.length)
    for (const full of await client.fetchAll(wanted, { uid: true, source: true }, { uid: true }))
      if (full.source) sources.set(full.uid, full.source);
  return envelopes.map((meta) => ({
    uid: meta.uid,
    size: meta.size ?? 0,
    raw: sources.get(meta.uid) ?? null,
    messageId: meta.envelope?.messageId ?? null,
    subject: meta.envelope?.subject ?? '',
    from: meta.envelope?.from?.[0]?.address?.toLowerCase() ?? '',
  }));
}

/** The messages of `uids` in UID order, in batches of at most BATCH_MESSAGES and BATCH_BYTES; a message gone meanwhile is left out. */
async function* batchesOf(client: ImapFlow, uids: number[], maxBytes: number): AsyncGenerator<FetchedMessage[]> {
  for (let start = 0; start < uids.length; start += BATCH_MESSAGES) {
    const envelopes = await client.fetchAll(
      uids.slice(start, start + BATCH_MESSAGES),
      { uid: true, size: true, envelope: true },
      { uid: true },
    );
    let batch: FetchMessageObject[] = [];
    let bytes = 0;
    for (const meta of envelopes.sort(byUid)) {
      const size = (meta.size ?? 0) <= maxBytes ? (meta.size ?? 0) : 0;
      if (batch.length && bytes + size > BATCH_BYTES) {
        yield await download(client, batch, maxBytes);
        batch = [];
        bytes = 0;
      }
      batch.push(meta);
      bytes += size;
    }
    if (batch.length) yield await download(client, batch, maxBytes);
  }
}

/** The MailReader of an IMAP server (imapflow): UID SEARCH UNSEEN, then batches of messages peeked at, then \Seen. */
export function createImapReader(): MailReader {
  return {
    async readUnseen(server, { folder, processedFolder, maxBytes }, handle) {
      const client = new ImapFlow({
        host: server.host,
        port: server.port,
        secure: server.tls === 'implicit',
        doSTARTTLS: server.tls === 'starttls' ? true : server.tls === 'none' ? false : undefined,
        auth: server.accessToken
          ? { user: server.username, accessToken: server.accessToken }
          : { user: server.username, pass: server.password },
        logger: false,
        connectionTimeout: CONNECT_TIMEOUT_MS,
        greetingTimeout: CONNECT_TIMEOUT_MS,
      });
      // A dropped connection emits 'error'; the awaited command fails with it as well.
      client.on('error', () => undefined);
      await client.connect();
      let count = 0;
      try {
        const lock = await client.getMailboxLock(folder);
        try {
          const uids = (await client.search({ seen: false }, { uid: true })) || [];
          const batches = batchesOf(client, uids, maxBytes);
          let next = batches.next();
          try {
            for (;;) {
              const { value: batch, done } = await next;
              if (done) break;
              // The next batch downloads while this one is stored: the server's round trips overlap the database's.
              next = batches.next();
              await handle(batch);
              const handled = batch.map((message) => message.uid);
              await client.messageFlagsAdd(handled, ['\\Seen'], { uid: true });
              if (processedFolder) await client.messageMove(handled, processedFolder, { uid: true });
              count += batch.length;
            }
          } finally {
            // A poll that failed leaves the download under way to fail with the connection.
            next.catch(() => undefined);
          }
        } finally {
          lock.release();
        }
      } finally {
        await client.logout().catch(() => client.close());
      }
      return count;
    },
  };
}
