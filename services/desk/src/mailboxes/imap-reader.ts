import { ImapFlow } from 'imapflow';
import type { MailReader } from './mail-reader';

/** How long a connection or a greeting may take before the poll fails (and backs off). */
const CONNECT_TIMEOUT_MS = 15_000;

/** The MailReader of an IMAP server (imapflow): UID SEARCH UNSEEN, a peek at each, then \Seen. */
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
          for (const uid of uids) {
            const meta = await client.fetchOne(String(uid), { size: true, envelope: true }, { uid: true });
            if (!meta) continue;
            const size = meta.size ?? 0;
            // BODY.PEEK[]: reading does not set \Seen; only a stored message is flagged.
            const full = size <= maxBytes ? await client.fetchOne(String(uid), { source: true }, { uid: true }) : null;
            await handle({
              uid,
              size,
              raw: full && full.source ? full.source : null,
              messageId: meta.envelope?.messageId ?? null,
              subject: meta.envelope?.subject ?? '',
              from: meta.envelope?.from?.[0]?.address?.toLowerCase() ?? '',
            });
            await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
            if (processedFolder) await client.messageMove(String(uid), processedFolder, { uid: true });
            count++;
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
