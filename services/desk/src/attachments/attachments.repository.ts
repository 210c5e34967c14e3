import { sqlRows } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { Attachment, AttachmentFilters, AttachmentRef } from './attachment.schemas';

/** A file of a mail, about to be kept: its id is chosen first, so the ticket or comment can list it in its own INSERT. */
export interface NewAttachment {
  id: string;
  filename: string;
  contentType: string;
  content: Buffer;
}

interface AttachmentRow {
  id: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  ticketId: string | null;
  commentId: string | null;
  inboundEmailId: string | null;
  createdAt: Date;
}

const COLUMNS = Prisma.raw(
  `id, filename, content_type AS "contentType", size_bytes AS "sizeBytes", ticket_id AS "ticketId", comment_id AS "commentId", inbound_email_id AS "inboundEmailId", created_at AS "createdAt"`,
);

function toAttachment(row: AttachmentRow): Attachment {
  return {
    id: row.id,
    filename: row.filename,
    content_type: row.contentType,
    size_bytes: row.sizeBytes,
    ticket_id: row.ticketId,
    comment_id: row.commentId,
    inbound_email_id: row.inboundEmailId,
    created_at: new Date(row.createdAt).toISOString(),
  };
}

/** How a ticket or comment lists these files. */
export const refsOf = (files: NewAttachment[]): AttachmentRef[] =>
  files.map((file) => ({ id: file.id, filename: file.filename, content_type: file.contentType, size_bytes: file.content.length }));

export function createAttachmentsRepository(db: DbTx) {
  const rows = sqlRows(db);
  return {
    /** Keeps the files of a mail, under the ticket (and comment) it became. */
    async saveAll(tenantId: string, owner: { inboundEmailId: string | null; ticketId: string; commentId: string | null }, files: NewAttachment[]): Promise<void> {
      if (!files.length) return;
      await db.attachment.createMany({
        data: files.map((file) => ({
          id: file.id,
          tenantId,
          inboundEmailId: owner.inboundEmailId,
          ticketId: owner.ticketId,
          commentId: owner.commentId,
          filename: file.filename,
          contentType: file.contentType,
          sizeBytes: file.content.length,
          content: new Uint8Array(file.content),
        })),
      });
    },

    async list(tenantId: string, filters: AttachmentFilters, page: PageRequest): Promise<{ items: Attachment[]; total: number }> {
      const where: Prisma.Sql[] = [];
      if (filters.ticket_id) where.push(Prisma.sql`ticket_id = ${filters.ticket_id}::uuid`);
      if (filters.comment_id) where.push(Prisma.sql`comment_id = ${filters.comment_id}::uuid`);
      if (filters.inbound_email_id) where.push(Prisma.sql`inbound_email_id = ${filters.inbound_email_id}::uuid`);
      const scope = Prisma.sql`tenant_id = ${tenantId}::uuid`;
      const found = await lists.keysetListPage<AttachmentRow>(rows, listWindow(page), {
        table: 'attachments',
        select: COLUMNS,
        scope,
        filters: where,
        columns: ['created_at', 'id'],
        direction: 'desc',
        total: Prisma.sql`SELECT count(*) FROM attachments WHERE ${Prisma.join([scope, ...where], ' AND ')}`,
      });
      return { items: found.items.map(toAttachment), total: found.total };
    },

    async findContent(tenantId: string, id: string): Promise<{ filename: string; contentType: string; content: Buffer } | null> {
      const row = await db.attachment.findFirst({ where: { id, tenantId }, select: { filename: true, contentType: true, content: true } });
      return row && { filename: row.filename, contentType: row.contentType, content: Buffer.from(row.content) };
    },
  };
}

export type AttachmentsRepository = ReturnType<typeof createAttachmentsRepository>;
