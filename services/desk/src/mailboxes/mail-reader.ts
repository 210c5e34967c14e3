/** One message of a mailbox folder, as a poll reads it: its raw bytes unless it is over the size limit. */
export interface FetchedMessage {
  uid: number;
  size: number;
  /** Null when the message is larger than asked for (it is not downloaded). */
  raw: Buffer | null;
  /** The envelope's Message-ID and subject and sender, read even when the message is not downloaded. */
  messageId: string | null;
  subject: string;
  from: string;
}

export interface MailServer {
  host: string;
  port: number;
  tls: 'implicit' | 'starttls' | 'none';
  username: string;
  password: string;
  /** XOAUTH2 instead of the password when given. */
  accessToken?: string;
}

/**
 * A mailbox's unseen messages, a batch at a time in UID order: `handle` stores each message of the
 * batch (and must have committed them all when it returns); then the reader flags the batch \Seen
 * and moves it to `processedFolder` when given. A batch `handle` fails is left unseen (its messages
 * already stored are recognised by their Message-ID on the next poll). Nothing is deleted. One
 * interface per outside system kind; imap-reader.ts is the IMAP one.
 */
export interface MailReader {
  readUnseen(
    server: MailServer,
    options: { folder: string; processedFolder: string | null; maxBytes: number },
    handle: (batch: FetchedMessage[]) => Promise<void>,
  ): Promise<number>;
}
