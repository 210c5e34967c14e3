import { pageWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import type { Comment as CommentRow } from '../generated/prisma/client';
import type { Comment } from './comment.schemas';

function toComment(row: CommentRow): Comment {
  return {
    id: row.id,
    ticket_id: row.ticketId,
    body: row.body,
    internal: row.internal,
    author: row.author,
    created_at: row.createdAt.toISOString(),
    merged_from_ticket_id: row.mergedFromTicketId,
  };
}

export function createCommentsRepository(db: DbTx) {
  return {
    /** Oldest first: a conversation reads from the top. */
    async listForTicket(tenantId: string, ticketId: string, page: PageRequest): Promise<{ items: Comment[]; total: number }> {
      const where = { tenantId, ticketId };
      const [rows, total] = await Promise.all([
        db.comment.findMany({ where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], ...pageWindow(page) }),
        db.comment.count({ where }),
      ]);
      return { items: rows.map(toComment), total };
    },

    async findById(tenantId: string, ticketId: string, id: string): Promise<Comment | null> {
      const row = await db.comment.findFirst({ where: { id, ticketId, tenantId } });
      return row && toComment(row);
    },

    async create(tenantId: string, comment: { ticketId: string; body: string; internal: boolean; author: string }): Promise<Comment> {
      return toComment(await db.comment.create({ data: { ...comment, tenantId } }));
    },
  };
}

export type CommentsRepository = ReturnType<typeof createCommentsRepository>;
