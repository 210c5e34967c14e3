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
 * A mailbox's unseen messages, one at a time: `handle` stores each (and must have committed it when
 * it returns); then the reader flags it \Seen and moves it to `processedFolder` when given. Nothing is
 * deleted. One interface per outside system kind; imap-reader.ts is the IMAP one.
 */
export interface MailReader {
  readUnseen(
    server: MailServer,
    options: { folder: string; processedFolder: string | null; maxBytes: number },
    handle: (message: FetchedMessage) => Promise<void>,
  ): Promise<number>;
}
