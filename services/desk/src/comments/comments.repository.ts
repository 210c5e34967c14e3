import { inListOrder, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import type { Selectable } from 'kysely';
import { jsonb, type Db } from '../db';
import type { Comment as CommentRow } from '../generated/kysely/database';
import { pageOfList } from '../shared/lists';
import type { AttachmentRef } from '../attachments/attachment.schemas';
import type { Comment } from './comment.schemas';

function toComment(row: Selectable<CommentRow>): Comment {
  return {
    id: row.id,
    ticket_id: row.ticket_id,
    body: row.body,
    internal: row.internal,
    author: row.author,
    created_at: row.created_at.toISOString(),
    merged_from_ticket_id: row.merged_from_ticket_id,
    author_type: row.author_type as Comment['author_type'],
    author_contact_id: row.author_contact_id,
    attachments: (row.attachments ?? []) as unknown as AttachmentRef[],
  };
}

/** Oldest first: a conversation reads from the top. */
const ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'asc' };

/** `reads`: where the list's page and total are read (the read replica with DATABASE_READ_URL); the rest reads `db`. */
export function createCommentsRepository(db: Db, reads: Db = db) {
  return {
    /**
     * Off (ticket_id, created_at, id). The total is count(*) of the ticket's comments through that
     * index: bounded by the one ticket's comments, not by the tenant's (no counter needed).
     */
    async listForTicket(
      tenantId: string,
      ticketId: string,
      page: PageRequest,
    ): Promise<{ items: Comment[]; total: number }> {
      const scope = reads
        .selectFrom('ticket_comments')
        .where('ticket_id', '=', ticketId)
        .where('tenant_id', '=', tenantId);
      const found = await pageOfList(page, {
        scope,
        order: ORDER,
        page: (window, afterKey) => inListOrder(scope.selectAll(), ORDER, window, afterKey).execute(),
        total: async () =>
          (await scope.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count,
      });
      return { items: found.items.map(toComment), total: found.total };
    },

    async findById(tenantId: string, ticketId: string, id: string): Promise<Comment | null> {
      const row = await db
        .selectFrom('ticket_comments')
        .selectAll()
        .where('id', '=', id)
        .where('ticket_id', '=', ticketId)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? toComment(row) : null;
    },

    async create(
      tenantId: string,
      comment: {
        ticketId: string;
        body: string;
        internal: boolean;
        author: string;
        authorType?: Comment['author_type'];
        authorContactId?: string | null;
        attachments?: AttachmentRef[];
      },
    ): Promise<Comment> {
      const row = await db
        .insertInto('ticket_comments')
        .values({
          tenant_id: tenantId,
          ticket_id: comment.ticketId,
          body: comment.body,
          internal: comment.internal,
          author: comment.author,
          ...(comment.authorType === undefined ? {} : { author_type: comment.authorType }),
          ...(comment.authorContactId === undefined ? {} : { author_contact_id: comment.authorContactId }),
          ...(comment.attachments === undefined ? {} : { attachments: jsonb(comment.attachments) }),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toComment(row);
    },
  };
}

export type CommentsRepository = ReturnType<typeof createCommentsRepository>;
