import { isoOf, sqlRows, type Queryable } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type Comment as CommentRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { AttachmentRef } from '../attachments/attachment.schemas';
import type { Comment } from './comment.schemas';

function toComment(row: CommentRow): Comment {
  return {
    id: row.id,
    ticket_id: row.ticketId,
    body: row.body,
    internal: row.internal,
    author: row.author,
    created_at: isoOf(row.createdAt),
    merged_from_ticket_id: row.mergedFromTicketId,
    author_type: row.authorType as Comment['author_type'],
    author_contact_id: row.authorContactId,
    attachments: (row.attachments ?? []) as unknown as AttachmentRef[],
  };
}

/** `reads`: where the list's page and total are read when given (the read replica's pool, DATABASE_READ_URL); the rest reads the primary. */
export function createCommentsRepository(db: DbTx, reads?: Queryable) {
  return {
    /** Oldest first: a conversation reads from the top. */
    /**
     * Off (ticket_id, created_at, id). The total is count(*) of the ticket's comments through that
     * index: bounded by the one ticket's comments, not by the tenant's (no counter needed).
     */
    async listForTicket(tenantId: string, ticketId: string, page: PageRequest): Promise<{ items: Comment[]; total: number }> {
      const scope = Prisma.sql`ticket_id = ${ticketId}::uuid AND tenant_id = ${tenantId}::uuid`;
      const found = await lists.keysetListPage<CommentRow>(
        sqlRows(db, reads),
        listWindow(page),
        {
          table: 'ticket_comments',
          select: Prisma.raw(
            `id, tenant_id AS "tenantId", ticket_id AS "ticketId", body, internal, author, created_at AS "createdAt", merged_from_ticket_id AS "mergedFromTicketId", author_type AS "authorType", author_contact_id AS "authorContactId", attachments`,
          ),
          scope,
          columns: ['created_at', 'id'],
          direction: 'asc',
          total: Prisma.sql`SELECT count(*) FROM ticket_comments WHERE ${scope}`,
        },
      );
      return { items: found.items.map(toComment), total: found.total };
    },

    async findById(tenantId: string, ticketId: string, id: string): Promise<Comment | null> {
      const row = await db.comment.findFirst({ where: { id, ticketId, tenantId } });
      return row && toComment(row);
    },

    async create(
      tenantId: string,
      comment: { ticketId: string; body: string; internal: boolean; author: string; authorType?: Comment['author_type']; authorContactId?: string | null; attachments?: AttachmentRef[] },
    ): Promise<Comment> {
      return toComment(await db.comment.create({ data: { ...comment, attachments: comment.attachments as Prisma.InputJsonValue | undefined, tenantId } }));
    },
  };
}

export type CommentsRepository = ReturnType<typeof createCommentsRepository>;
