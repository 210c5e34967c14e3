import { notFound, type PageRequest } from '@msp/http';
import { queueReplyIn } from '../mailboxes/outbound';
import type { SlaService } from '../sla/sla.service';
import type { Store } from '../store';
import { isFinal } from '../tickets/ticket-status';
import { ticketNotFound, transitionProblem } from '../tickets/tickets.service';
import type { Comment, NewComment } from './comment.schemas';

export function createCommentsService(store: Store, sla: SlaService) {
  async function existingTicket(tenantId: string, ticketId: string) {
    const ticket = await store.tickets.findById(tenantId, ticketId);
    if (!ticket) throw ticketNotFound();
    return ticket;
  }

  return {
    async list(tenantId: string, ticketId: string, page: PageRequest) {
      await existingTicket(tenantId, ticketId);
      return store.comments.listForTicket(tenantId, ticketId, page);
    },

    async get(tenantId: string, ticketId: string, id: string): Promise<Comment> {
      const comment = await store.comments.findById(tenantId, ticketId, id);
      if (!comment) throw notFound('No comment with this id exists on this ticket in your tenant.');
      return comment;
    },

    /**
     * The author is the API client that calls; a closed ticket takes no more comments. The ticket
     * stays locked until the comment commits, so that it cannot be closed in between.
     */
    create(tenantId: string, ticketId: string, author: string, input: NewComment): Promise<Comment> {
      return store.transaction(async (tx) => {
        const ticket = await tx.tickets.findForUpdate(tenantId, ticketId);
        if (!ticket) throw ticketNotFound();
        if (isFinal(ticket.status))
          throw transitionProblem(
            ticket,
            'The ticket is closed; a closed ticket takes no more comments.',
            'ticket-closed',
          );
        const comment = await tx.comments.create(tenantId, {
          ticketId,
          body: input.body,
          internal: input.internal ?? false,
          author,
        });
        // The clocks before the event, in the order every other writer takes them (the ticket, its
        // clocks, then the event's counters): the breach sweep holds clocks and waits for counters.
        if (!comment.internal) await sla.onPublicComment(tx, tenantId, ticket, new Date(comment.created_at));
        await tx.events.record({
          type: 'comment.created',
          tenantId,
          resourceType: 'comment',
          resourceId: comment.id,
          object: comment,
        });
        await queueReplyIn(tx, tenantId, ticket, comment);
        return comment;
      });
    },
  };
}

export type CommentsService = ReturnType<typeof createCommentsService>;
