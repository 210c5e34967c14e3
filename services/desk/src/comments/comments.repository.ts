import { inListOrder, isoTimestampSql, type ListOrder } from '@msp/db';
import { announceEventRecorded, type EventHead } from '@msp/events';
import type { PageRequest } from '@msp/http';
import { sql, type Selectable } from 'kysely';
import { jsonb, type Db } from '../db';
import { eventInsertFrom } from '../events/event-insert';
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

/** A comment row `comment` as toComment shows it, as JSON (the event a statement records with it). */
const COMMENT_JSON = sql.raw(`jsonb_build_object(
  'id', comment.id, 'ticket_id', comment.ticket_id, 'body', comment.body, 'internal', comment.internal,
  'author', comment.author, 'created_at', ${isoTimestampSql('comment.created_at')},
  'merged_from_ticket_id', comment.merged_from_ticket_id, 'author_type', comment.author_type,
  'author_contact_id', comment.author_contact_id, 'attachments', COALESCE(comment.attachments, '[]'::jsonb))`);

/** What createRecorded writes: every column it sets is given. */
export interface NewCommentRow {
  ticketId: string;
  body: string;
  internal: boolean;
  author: string;
  authorType: Comment['author_type'];
  authorContactId: string | null;
  attachments: AttachmentRef[];
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

    /**
     * A comment and the event of `event` (its head) recording it, as `create` and `events.record`
     * would, in one statement: one round trip less on a path that writes a comment per message.
     */
    async createRecorded(tenantId: string, comment: NewCommentRow, event: EventHead): Promise<Comment> {
      const { rows } = await sql<Selectable<CommentRow>>`
        WITH comment AS (
          INSERT INTO ticket_comments (tenant_id, ticket_id, body, internal, author, author_type, author_contact_id, attachments)
          VALUES (${tenantId}::uuid, ${comment.ticketId}::uuid, ${comment.body}, ${comment.internal}, ${comment.author},
            ${comment.authorType}, ${comment.authorContactId}::uuid, ${jsonb(comment.attachments)}::jsonb)
          RETURNING *
        ),
        event AS (${eventInsertFrom('comment', tenantId, event, COMMENT_JSON)})
        SELECT * FROM comment`.execute(db);
      announceEventRecorded();
      return toComment(rows[0]!);
    },
  };
}

export type CommentsRepository = ReturnType<typeof createCommentsRepository>;
