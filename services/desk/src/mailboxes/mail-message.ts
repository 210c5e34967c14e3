import type EmailReplyParserClass from 'email-reply-parser' with { 'resolution-mode': 'import' };
import type PostalMimeClass from 'postal-mime' with { 'resolution-mode': 'import' };

// postal-mime's package ships a CommonJS build (its `require` export); TypeScript only resolves its
// types for `import`, which this CommonJS build may not use on an ES module.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const postalMime = require('postal-mime') as typeof PostalMimeClass & { default?: typeof PostalMimeClass };
const PostalMime = postalMime.default ?? postalMime;
// email-reply-parser is an ES module only: Node (20.19 and later) requires it as one; Jest compiles
// it first (jest.config.js).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const replyParser = require('email-reply-parser') as { default: typeof EmailReplyParserClass };
const EmailReplyParser = replyParser.default;

/** What inbound processing reads of a message. */
export interface ParsedMail {
  messageId: string;
  from: string;
  fromName: string;
  to: string[];
  cc: string[];
  subject: string;
  inReplyTo: string[];
  references: string[];
  text: string;
  headers: Map<string, string>;
  isReport: boolean;
  attachments: MailFile[];
}

/** A file of a message, decoded. */
export interface MailFile {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** A file name as a download may carry it: no path, no control characters, at most 255 characters. */
function fileNameOf(given: string | null, mimeType: string, index: number): string {
  // Control characters (below U+0020, and DEL) never make it into a header.
  const cleaned = [...(given ?? '')]
    .filter((c) => c >= ' ' && c !== '\u007f')
    .join('')
    .split(/[\\/]/)
    .pop()!
    .trim()
    .slice(0, 255);
  if (cleaned && cleaned !== '.' && cleaned !== '..') return cleaned;
  const subtype = /^[a-z]+\/([a-z0-9.+-]+)$/i.exec(mimeType)?.[1]?.replace(/^.*[.+]/, '');
  return `attachment-${index + 1}${subtype ? `.${subtype}` : ''}`;
}

/** Message-IDs without angle brackets, as the API shows them. */
export const bareMessageId = (value: string) => value.trim().replace(/^<|>$/g, '');
const messageIdsIn = (value: string | undefined) =>
  value ? (value.match(/<[^<>\s]+>/g) ?? []).map(bareMessageId) : [];

/** Text of an HTML-only mail: tags dropped, block ends as line breaks, entities of the common kind decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|tr|h[1-6])>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * The new text of a reply, by email-reply-parser: the quoted mail ("On … wrote:", "Am … schrieb …:",
 * Outlook's "-----Original Message-----", `>` lines) and the signature ("-- ") cut off.
 */
export function stripReply(text: string): string {
  return new EmailReplyParser().parseReply(text.replace(/\r\n/g, '\n')).trim();
}

/** Parses a raw message; throws when it is no message at all (no From, no headers). */
export async function parseMail(raw: Buffer): Promise<ParsedMail> {
  const mail = await PostalMime.parse(raw);
  const headers = new Map<string, string>();
  for (const header of mail.headers) if (!headers.has(header.key)) headers.set(header.key, header.value);
  const from = mail.from?.address?.toLowerCase();
  if (!from || !from.includes('@') || headers.size === 0) throw new Error('the message has no sender address');
  const addresses = (list: { address?: string }[] | undefined) =>
    (list ?? []).map((entry) => entry.address?.toLowerCase()).filter((a): a is string => !!a);
  const contentType = headers.get('content-type') ?? '';
  return {
    messageId: mail.messageId ? bareMessageId(mail.messageId) : '',
    from,
    fromName: mail.from?.name || from.split('@')[0]!,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    subject: (mail.subject ?? '').trim(),
    inReplyTo: messageIdsIn(headers.get('in-reply-to')),
    references: messageIdsIn(headers.get('references')),
    text: mail.text?.trim() ? mail.text.trim() : mail.html ? htmlToText(mail.html) : '',
    headers,
    isReport: /multipart\/report/i.test(contentType) && /report-type\s*=\s*"?delivery-status/i.test(contentType),
    attachments: mail.attachments.map((file, index) => ({
      filename: fileNameOf(file.filename, file.mimeType, index),
      contentType: (file.mimeType || 'application/octet-stream').toLowerCase().slice(0, 255),
      content:
        typeof file.content === 'string'
          ? Buffer.from(file.content, file.encoding === 'base64' ? 'base64' : 'utf8')
          : Buffer.from(file.content),
    })),
  };
}

/**
 * Why a message is automatic, or null: a bounce (a delivery-status report, or an empty Return-Path
 * from a mailer daemon) or an auto-reply (Auto-Submitted other than `no`, Precedence bulk/junk/list,
 * X-Auto-Response-Suppress, X-Autoreply, X-Autorespond). A bounce is a bounce whatever else it says.
 */
export function automaticReason(mail: ParsedMail): 'bounce' | 'auto_reply' | null {
  const header = (name: string) => mail.headers.get(name);
  const returnPath = header('return-path');
  if (
    mail.isReport ||
    (returnPath !== undefined && /^<\s*>$/.test(returnPath.trim()) && /mailer-daemon|postmaster/i.test(mail.from))
  )
    return 'bounce';
  const autoSubmitted = header('auto-submitted');
  if (autoSubmitted !== undefined && autoSubmitted.trim().toLowerCase() !== 'no') return 'auto_reply';
  if (/^\s*(bulk|junk|list|auto_reply)\s*$/i.test(header('precedence') ?? '')) return 'auto_reply';
  if (
    header('x-auto-response-suppress') !== undefined ||
    header('x-autoreply') !== undefined ||
    header('x-autorespond') !== undefined
  )
    return 'auto_reply';
  return null;
}

/** `[#42]` in a subject: the ticket number, or null. */
export function subjectTicketNumber(subject: string): number | null {
  const match = /\[#(\d{1,9})\]/.exec(subject);
  return match ? Number(match[1]) : null;
}
