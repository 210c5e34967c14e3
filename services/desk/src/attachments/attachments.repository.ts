import { inListOrder, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import type { Db } from '../db';
import { pageOfList } from '../shared/lists';
import type { Attachment, AttachmentFilters, AttachmentRef } from './attachment.schemas';

/** A file of a mail, about to be kept: its id is chosen first, so the ticket or comment can list it in its own INSERT. */
export interface NewAttachment {
  id: string;
  filename: string;
  contentType: string;
  content: Buffer;
}

/** What a list shows of a file: everything but its bytes. */
const COLUMNS = [
  'id',
  'filename',
  'content_type',
  'size_bytes',
  'ticket_id',
  'comment_id',
  'inbound_email_id',
  'created_at',
] as const;

/** Newest first, off (tenant_id, created_at, id). */
const ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'desc' };

function toAttachment(row: {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  ticket_id: string | null;
  comment_id: string | null;
  inbound_email_id: string | null;
  created_at: Date;
}): Attachment {
  return {
    id: row.id,
    filename: row.filename,
    content_type: row.content_type,
    size_bytes: row.size_bytes,
    ticket_id: row.ticket_id,
    comment_id: row.comment_id,
    inbound_email_id: row.inbound_email_id,
    created_at: row.created_at.toISOString(),
  };
}

/** How a ticket or comment lists these files. */
export const refsOf = (files: NewAttachment[]): AttachmentRef[] =>
  files.map((file) => ({
    id: file.id,
    filename: file.filename,
    content_type: file.contentType,
    size_bytes: file.content.length,
  }));

export function createAttachmentsRepository(db: Db, reads: Db = db) {
  return {
    /** Keeps the files of a mail, under the ticket (and comment) it became. */
    async saveAll(
      tenantId: string,
      owner: { inboundEmailId: string | null; ticketId: string; commentId: string | null },
      files: NewAttachment[],
    ): Promise<void> {
      if (!files.length) return;
      await db
        .insertInto('attachments')
        .values(
          files.map((file) => ({
            id: file.id,
            tenant_id: tenantId,
            inbound_email_id: owner.inboundEmailId,
            ticket_id: owner.ticketId,
            comment_id: owner.commentId,
            filename: file.filename,
            content_type: file.contentType,
            size_bytes: file.content.length,
            content: file.content,
          })),
        )
        .execute();
    },

    async list(
      tenantId: string,
      filters: AttachmentFilters,
      page: PageRequest,
    ): Promise<{ items: Attachment[]; total: number }> {
      const scope = reads.selectFrom('attachments').where('tenant_id', '=', tenantId);
      let filtered = scope;
      if (filters.ticket_id) filtered = filtered.where('ticket_id', '=', filters.ticket_id);
      if (filters.comment_id) filtered = filtered.where('comment_id', '=', filters.comment_id);
      if (filters.inbound_email_id) filtered = filtered.where('inbound_email_id', '=', filters.inbound_email_id);
      const found = await pageOfList(page, {
        scope,
        order: ORDER,
        page: (window, afterKey) => inListOrder(filtered.select(COLUMNS), ORDER, window, afterKey).execute(),
        total: async () =>
          (await filtered.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count,
      });
      return { items: found.items.map(toAttachment), total: found.total };
    },

    async findContent(
      tenantId: string,
      id: string,
    ): Promise<{ filename: string; contentType: string; content: Buffer } | null> {
      const row = await db
        .selectFrom('attachments')
        .select(['filename', 'content_type', 'content'])
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? { filename: row.filename, contentType: row.content_type, content: row.content } : null;
    },
  };
}

export type AttachmentsRepository = ReturnType<typeof createAttachmentsRepository>;
