import { badRequest, conflict, notFound, transitionProblem as illegalMove, unprocessable, type PageRequest } from '@msp/http';
import { deskEvents } from '../events/desk-events';
import type { SlaService } from '../sla/sla.service';
import type { SlaListing } from '../sla/sla.schemas';
import type { Repositories, Store } from '../store';
import type { NewTicket, Ticket, TicketChanges, TicketFilters } from './ticket.schemas';
import { allowedTransitions, canTransition, isFinal, isWorking, timestampsFor } from './ticket-status';
import type { TicketWrite } from './tickets.repository';

export const ticketNotFound = () => notFound('No ticket with this id exists in your tenant.');

function unknownReference(field: 'client_id' | 'assignee_id', message: string) {
  return unprocessable(`${field} ${message}.`, { code: 'unknown-reference', errors: [{ field, message }] });
}

/** client_id must name a client of the tenant, assignee_id an active user of it (else 422). */
async function assertReferences(tx: Pick<Repositories, 'clients' | 'users'>, tenantId: string, refs: { client_id?: string; assignee_id?: string | null }) {
  if (refs.client_id !== undefined && !(await tx.clients.exists(tenantId, refs.client_id))) {
    throw unknownReference('client_id', 'does not name a client of your tenant');
  }
  if (refs.assignee_id && !(await tx.users.isActiveLocked(tenantId, refs.assignee_id))) {
    throw unknownReference('assignee_id', 'does not name an active user of your tenant');
  }
}

export function transitionProblem(ticket: Ticket, detail: string, code: string) {
  return illegalMove(ticket.status, allowedTransitions(ticket.status), detail, code);
}

/** The API's name of each changeable field, and the repository's. */
const CHANGEABLE = {
  title: 'title',
  description: 'description',
  priority: 'priority',
  category: 'category',
  status: 'status',
  client_id: 'clientId',
  assignee_id: 'assigneeId',
} as const satisfies Record<keyof TicketChanges, keyof TicketWrite>;

/** The fields of `changes` that differ from the ticket, in the repository's terms. */
function differences(ticket: Ticket, changes: TicketChanges): TicketWrite {
  const diff: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(CHANGEABLE) as [keyof TicketChanges, keyof TicketWrite][]) {
    const value = changes[field];
    if (value !== undefined && value !== ticket[field]) diff[column] = value;
  }
  return diff as TicketWrite;
}

/**
 * Deactivating a user unassigns the tickets still being worked on, not the resolved and closed
 * ones. A resolved ticket reopened later comes back unassigned if its assignee has left since.
 */
async function reopensForAnInactiveAssignee(tx: Repositories, tenantId: string, ticket: Ticket, diff: TicketWrite): Promise<boolean> {
  if (!diff.status || !isWorking(diff.status) || isWorking(ticket.status)) return false;
  if (diff.assigneeId !== undefined || !ticket.assignee_id) return false;
  return !(await tx.users.isActiveLocked(tenantId, ticket.assignee_id));
}

export function createTicketsService(store: Store, sla: SlaService) {
  return {
    async list(tenantId: string, { q, ...filters }: TicketFilters & SlaListing & { q?: string }, page: PageRequest) {
      if (q === undefined) return store.tickets.list(tenantId, filters, page);
      const words = q.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
      const query = words.length ? await store.tickets.searchQuery(words) : null;
      if (query === null) {
        throw badRequest('q has no word to search for: only stop words (like "der", "the") or punctuation.', {
          code: 'empty-search',
          errors: [{ field: 'q', message: 'must contain a word that is not a stop word' }],
        });
      }
      return store.tickets.list(tenantId, { ...filters, query }, page);
    },

    async get(tenantId: string, id: string): Promise<Ticket> {
      const ticket = await store.tickets.findById(tenantId, id);
      if (!ticket) throw ticketNotFound();
      return ticket;
    },

    /**
     * One statement opens the ticket, checking its references and recording the ticket.created
     * decided here (the tickets repository's create: the hottest write, bench/README.md). When it
     * writes nothing, a reference did not hold, and the same checks as an update's say which
     * (422). Should both hold by then (the client was created, the user reactivated in between),
     * it tries again.
     * That statement opens only tickets no SLA policy applies to; one that a policy applies to is
     * opened in a transaction that also starts its SLA clocks, and records its event after them.
     */
    async create(tenantId: string, input: NewTicket): Promise<Ticket> {
      const ticket = {
        title: input.title,
        description: input.description,
        priority: input.priority,
        category: input.category,
        clientId: input.client_id,
        assigneeId: input.assignee_id ?? null,
      };
      // Which event, and whose; its object is the ticket as the statement inserts it.
      const event = deskEvents.head({ type: 'ticket.created', resourceType: 'ticket' });
      for (let attempt = 0; attempt < 3; attempt++) {
        const created = await store.tickets.create(tenantId, ticket, event);
        if (created) return created;
        const underPolicy = await store.transaction(async (tx) => {
          await assertReferences(tx, tenantId, input);
          const policy = await sla.policyFor(tx, tenantId, input.client_id);
          const opened = policy && (await tx.tickets.createUnderPolicy(tenantId, ticket));
          if (!policy || !opened) return null;
          const withSla = await sla.onTicketCreated(tx, tenantId, opened, policy);
          await tx.events.record({ type: 'ticket.created', tenantId, resourceType: 'ticket', resourceId: withSla.id, object: withSla });
          return withSla;
        });
        if (underPolicy) return underPolicy;
      }
      throw conflict('client_id or assignee_id kept changing while the ticket was being opened; send the request again.');
    },

    /**
     * Applies the changes that differ from the stored ticket. A closed ticket is final; a status
     * change must be a legal move of the machine and brings its timestamps along. Asking for what
     * the ticket already is changes nothing, not even `updated_at`.
     */
    update(tenantId: string, id: string, changes: TicketChanges): Promise<Ticket> {
      return store.transaction(async (tx) => {
        const ticket = await tx.tickets.findForUpdate(tenantId, id);
        if (!ticket) throw ticketNotFound();
        const diff = differences(ticket, changes);
        if (Object.keys(diff).length === 0) return ticket;
        if (isFinal(ticket.status)) throw transitionProblem(ticket, 'The ticket is closed; a closed ticket cannot change.', 'ticket-closed');
        if (diff.status && !canTransition(ticket.status, diff.status)) {
          const allowed = allowedTransitions(ticket.status).join(', ');
          throw transitionProblem(ticket, `A ticket cannot move from ${ticket.status} to ${diff.status}; allowed: ${allowed}.`, 'illegal-transition');
        }
        await assertReferences(tx, tenantId, { client_id: diff.clientId, assignee_id: diff.assigneeId });
        if (await reopensForAnInactiveAssignee(tx, tenantId, ticket, diff)) diff.assigneeId = null;
        const now = new Date();
        const timestamps = diff.status ? timestampsFor(ticket.status, diff.status, now) : {};
        const written = await tx.tickets.update(tenantId, id, { ...diff, ...timestamps }, now);
        const updated = await sla.onTicketChanged(tx, tenantId, ticket, { ...written, sla: ticket.sla }, now);
        // The changes are taken between the API shapes, so the timestamps a status move set are in them too.
        await tx.events.record({ type: 'ticket.updated', tenantId, resourceType: 'ticket', resourceId: id, object: updated, before: ticket });
        return updated;
      });
    },
  };
}

export type TicketsService = ReturnType<typeof createTicketsService>;
