import {
  AppError,
  badRequest,
  conflict,
  etagOf,
  isAppError,
  notFound,
  resourceLockKey,
  transitionProblem as illegalMove,
  unprocessable,
  validationFailed,
  type PageRequest,
  type ResourceLock,
} from '@msp/http';
import { deskEvents } from '../events/desk-events';
import type { SlaService } from '../sla/sla.service';
import type { SlaListing } from '../sla/sla.schemas';
import type { Repositories, Store } from '../store';
import {
  SEARCH_WINDOW,
  SEARCH_WINDOW_TEXT,
  type BulkChanges,
  type NewTicket,
  type Ticket,
  type TicketChanges,
  type TicketFilters,
} from './ticket.schemas';
import { allowedTransitions, canTransition, isFinal, isWorking, timestampsFor } from './ticket-status';
import type { NewTicketRow, TicketWrite } from './tickets.repository';
import { createContactIn } from '../contacts/contacts.service';
import { isUniqueViolation } from '../db';

export const ticketNotFound = () => notFound('No ticket with this id exists in your tenant.');

function unknownReference(field: 'client_id' | 'assignee_id' | 'requester_id', message: string) {
  return unprocessable(`${field} ${message}.`, { code: 'unknown-reference', errors: [{ field, message }] });
}

/** client_id must name a client of the tenant, assignee_id an active user of it (else 422). */
async function assertReferences(
  tx: Pick<Repositories, 'clients' | 'users' | 'contacts'>,
  tenantId: string,
  refs: { client_id?: string; assignee_id?: string | null; requester_id?: string | null },
) {
  if (refs.client_id !== undefined && !(await tx.clients.exists(tenantId, refs.client_id))) {
    throw unknownReference('client_id', 'does not name a client of your tenant');
  }
  if (refs.requester_id && !(await tx.contacts.findById(tenantId, refs.requester_id))) {
    throw unknownReference('requester_id', 'does not name a contact of your tenant');
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
} as const satisfies Record<Exclude<keyof TicketChanges, 'requester_id' | 'cc'>, keyof TicketWrite>;

/** Addresses as stored: lower-cased, each once, in the order given. */
export const ccOf = (addresses: string[]) => [...new Set(addresses.map((address) => address.toLowerCase()))];

/** The fields of `changes` that differ from the ticket, in the repository's terms. */
function differences(ticket: Ticket, changes: TicketChanges): TicketWrite {
  const diff: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(CHANGEABLE) as [keyof typeof CHANGEABLE, keyof TicketWrite][]) {
    const value = changes[field];
    if (value !== undefined && value !== ticket[field]) diff[column] = value;
  }
  if (changes.requester_id !== undefined && changes.requester_id !== (ticket.requester?.id ?? null))
    diff.requesterId = changes.requester_id;
  if (changes.cc !== undefined) {
    const cc = ccOf(changes.cc);
    if (cc.join('\n') !== ticket.cc.join('\n')) diff.cc = cc;
  }
  return diff as TicketWrite;
}

/**
 * Deactivating a user unassigns the tickets still being worked on, not the resolved and closed
 * ones. A resolved ticket reopened later comes back unassigned if its assignee has left since.
 */
async function reopensForAnInactiveAssignee(
  tx: Repositories,
  tenantId: string,
  ticket: Ticket,
  diff: TicketWrite,
): Promise<boolean> {
  if (!diff.status || !isWorking(diff.status) || isWorking(ticket.status)) return false;
  if (diff.assigneeId !== undefined || !ticket.assignee_id) return false;
  return !(await tx.users.isActiveLocked(tenantId, ticket.assignee_id));
}

/** A strong comparison, as If-Match's (RFC 9110 §13.1.1): `*` matches any ticket. */
function preconditionHolds(ifMatch: string, ticket: Ticket): boolean {
  return ifMatch.trim() === '*' || ifMatch.trim() === etagOf(ticket);
}

const preconditionFailed = () =>
  new AppError(
    412,
    'The ticket has changed since the ETag given in if_match: GET it again and retry with its current ETag. It was not changed.',
    {
      code: 'precondition-failed',
    },
  );

/** What a bulk change answers for one id: the ticket after its change, or why it was not changed. */
export type BulkOutcome = { id: string; ticket: Ticket } | { id: string; error: AppError };

/** The statuses a bulk change reports per id; anything else (a 500, a database outage) fails the whole request. */
const BULK_ERROR_STATUSES = new Set([404, 412, 422]);

/**
 * The lock key of a ticket: PATCH /tickets/{id}'s, which the API router takes around the PATCH's
 * If-Match check and change. A bulk change takes it for each ticket it changes, a merge for every
 * ticket it writes (target and sources at once), so a PATCH racing either on the same ticket waits
 * for it, then checks its If-Match against what it wrote (and the other way round).
 */
const ticketLockKey = (tenantId: string, id: string) => resourceLockKey(tenantId, '/tickets/:id', { id });

/**
 * Opens a ticket inside the caller's transaction: in one statement when no SLA policy applies,
 * else with its clocks; records ticket.created. Null when a reference does not hold.
 */
export async function openTicketIn(
  tx: Repositories,
  sla: SlaService,
  tenantId: string,
  ticket: NewTicketRow,
): Promise<Ticket | null> {
  const created = await tx.tickets.create(
    tenantId,
    ticket,
    deskEvents.head({ type: 'ticket.created', resourceType: 'ticket' }),
  );
  return created ?? openUnderPolicy(tx, sla, tenantId, ticket);
}

async function openUnderPolicy(
  tx: Repositories,
  sla: SlaService,
  tenantId: string,
  ticket: NewTicketRow,
): Promise<Ticket | null> {
  const policy = await sla.policyFor(tx, tenantId, ticket.clientId);
  const opened = policy && (await tx.tickets.createUnderPolicy(tenantId, ticket));
  if (!policy || !opened) return null;
  const withSla = await sla.onTicketCreated(tx, tenantId, opened, policy);
  await tx.events.record({
    type: 'ticket.created',
    tenantId,
    resourceType: 'ticket',
    resourceId: withSla.id,
    object: withSla,
  });
  return withSla;
}

/** `lock`: the service's resource lock (the API router's; @msp/db's advisoryResourceLock in production). */
export function createTicketsService(store: Store, sla: SlaService, lock: ResourceLock) {
  /**
   * The ticket's requester and client: `requester_id` names a contact; `requester_email` finds one
   * or creates one under the ticket's client (which must then be given and exist). `client_id` may
   * be left out when the contact has a client.
   */
  async function requesterOf(
    tenantId: string,
    input: NewTicket,
  ): Promise<{ requesterId: string | null; clientId: string }> {
    if (input.requester_id !== undefined && input.requester_email !== undefined) {
      throw validationFailed([{ field: 'requester_email', message: 'must not be given with requester_id' }]);
    }
    let contact = null;
    if (input.requester_id !== undefined) {
      contact = await store.contacts.findById(tenantId, input.requester_id);
      if (!contact) throw unknownReference('requester_id', 'does not name a contact of your tenant');
    } else if (input.requester_email !== undefined) {
      contact = await store.contacts.findByEmail(tenantId, input.requester_email);
      if (!contact) {
        if (input.client_id === undefined)
          throw validationFailed([
            { field: 'client_id', message: 'is required when requester_email names no contact yet' },
          ]);
        const email = input.requester_email;
        const made = store.transaction(async (tx) => {
          await assertReferences(tx, tenantId, { client_id: input.client_id });
          return createContactIn(tx, tenantId, { name: email.split('@')[0]!, email, client_id: input.client_id });
        });
        // Created by another request meanwhile: that contact is the requester.
        contact = await made.catch(async (error: unknown) => {
          if (!isUniqueViolation(error)) throw error;
          return (await store.contacts.findByEmail(tenantId, email))!;
        });
      }
    }
    const clientId = input.client_id ?? contact?.client_id ?? undefined;
    if (clientId === undefined) {
      throw validationFailed([
        {
          field: 'client_id',
          message: contact ? "is required: the requester's contact has no client" : 'is required without a requester',
        },
      ]);
    }
    return { requesterId: contact?.id ?? null, clientId };
  }

  const service = {
    async list(tenantId: string, { q, ...filters }: TicketFilters & SlaListing & { q?: string }, page: PageRequest) {
      if (page.after !== undefined && (q !== undefined || filters.sort !== undefined)) {
        // A keyset is the list's default order (created_at, id); a rank or a due time is none.
        throw validationFailed([
          { field: 'after', message: 'pages the default order only: not with q or sort (use page)' },
        ]);
      }
      if (q === undefined) return store.tickets.list(tenantId, filters, page);
      const words = q.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
      const search = words.length ? await store.tickets.searchQuery(tenantId, words) : null;
      if (search === null) {
        throw badRequest('q has no word to search for: only stop words (like "der", "the") or punctuation.', {
          code: 'empty-search',
          errors: [{ field: 'q', message: 'must contain a word that is not a stop word' }],
        });
      }
      const found = await store.tickets.list(tenantId, { ...filters, ...search }, page);
      if (found.totalExact === false && (page.page - 1) * page.per_page >= SEARCH_WINDOW) {
        // More tickets match than the search serves (tickets.repository's searchPage): a page past
        // its window would answer an empty page as if the matches had ended. (With fewer matches
        // than the window, a page past them is empty, as on every list.)
        throw validationFailed([
          {
            field: 'page',
            message: `a search pages through its ${SEARCH_WINDOW_TEXT} newest matches: page × per_page must stay within them (narrow q or add filters)`,
          },
        ]);
      }
      return found;
    },

    async get(tenantId: string, id: string): Promise<Ticket> {
      const ticket = await store.tickets.findById(tenantId, id);
      if (!ticket) throw ticketNotFound();
      return ticket;
    },

    /**
     * One statement opens the ticket, checking its references and recording the ticket.created
     * decided here (the tickets repository's create: the hottest write, docs/performance.md). When it
     * writes nothing, a reference did not hold, and the same checks as an update's say which
     * (422). Should both hold by then (the client was created, the user reactivated in between),
     * it tries again.
     * That statement opens only tickets no SLA policy applies to; one that a policy applies to is
     * opened in a transaction that also starts its SLA clocks, and records its event after them.
     */
    async create(tenantId: string, input: NewTicket): Promise<Ticket> {
      const { requesterId, clientId } = await requesterOf(tenantId, input);
      const ticket: NewTicketRow = {
        title: input.title,
        description: input.description,
        priority: input.priority,
        category: input.category,
        clientId,
        assigneeId: input.assignee_id ?? null,
        requesterId,
        cc: input.cc ? ccOf(input.cc) : undefined,
      };
      // Which event, and whose; its object is the ticket as the statement inserts it.
      const event = deskEvents.head({ type: 'ticket.created', resourceType: 'ticket' });
      for (let attempt = 0; attempt < 3; attempt++) {
        const created = await store.tickets.create(tenantId, ticket, event);
        if (created) return created;
        const underPolicy = await store.transaction(async (tx) => {
          await assertReferences(tx, tenantId, { client_id: clientId, assignee_id: input.assignee_id });
          return openUnderPolicy(tx, sla, tenantId, ticket);
        });
        if (underPolicy) return underPolicy;
      }
      throw conflict(
        'client_id or assignee_id kept changing while the ticket was being opened; send the request again.',
      );
    },

    /**
     * Applies the changes that differ from the stored ticket. A closed ticket is final; a status
     * change must be a legal move of the machine and brings its timestamps along. Asking for what
     * the ticket already is changes nothing, not even `updated_at`.
     */
    update(tenantId: string, id: string, changes: TicketChanges, ifMatch?: string): Promise<Ticket> {
      return store.transaction(async (tx) => {
        const ticket = await tx.tickets.findForUpdate(tenantId, id);
        if (!ticket) throw ticketNotFound();
        if (ifMatch !== undefined && !preconditionHolds(ifMatch, ticket)) throw preconditionFailed();
        const diff = differences(ticket, changes);
        if (Object.keys(diff).length === 0) return ticket;
        if (isFinal(ticket.status))
          throw transitionProblem(ticket, 'The ticket is closed; a closed ticket cannot change.', 'ticket-closed');
        if (diff.status && !canTransition(ticket.status, diff.status)) {
          const allowed = allowedTransitions(ticket.status).join(', ');
          throw transitionProblem(
            ticket,
            `A ticket cannot move from ${ticket.status} to ${diff.status}; allowed: ${allowed}.`,
            'illegal-transition',
          );
        }
        await assertReferences(tx, tenantId, {
          client_id: diff.clientId,
          assignee_id: diff.assigneeId,
          requester_id: diff.requesterId,
        });
        if (await reopensForAnInactiveAssignee(tx, tenantId, ticket, diff)) diff.assigneeId = null;
        const now = new Date();
        const timestamps = diff.status ? timestampsFor(ticket.status, diff.status, now) : {};
        const written = await tx.tickets.update(tenantId, id, { ...diff, ...timestamps }, now);
        const updated = await sla.onTicketChanged(tx, tenantId, ticket, { ...written, sla: ticket.sla }, now);
        // The changes are taken between the API shapes, so the timestamps a status move set are in them too.
        await tx.events.record({
          type: 'ticket.updated',
          tenantId,
          resourceType: 'ticket',
          resourceId: id,
          object: updated,
          before: ticket,
        });
        return updated;
      });
    },

    /**
     * Changes each ticket as its PATCH would (same rules, same `ticket.updated`), one after the
     * other in the order given, each in its own transaction: one that fails (404, 412, 422) leaves
     * the others changed. `if_match` holds the ETag a ticket must still have. Each change holds the
     * ticket's resource lock (ticketLockKey), as its PATCH would.
     */
    async bulkUpdate(tenantId: string, { ids, changes, if_match: ifMatch = {} }: BulkChanges): Promise<BulkOutcome[]> {
      const strangers = Object.keys(ifMatch).filter((id) => !ids.includes(id));
      if (strangers.length) {
        throw validationFailed(
          strangers.map((id) => ({ field: `if_match.${id}`, message: 'is not in ids' })),
          'if_match names ids that are not in ids.',
        );
      }
      const outcomes: BulkOutcome[] = [];
      for (const id of ids) {
        try {
          outcomes.push({
            id,
            ticket: await lock(ticketLockKey(tenantId, id), () => service.update(tenantId, id, changes, ifMatch[id])),
          });
        } catch (error) {
          if (!isAppError(error) || !BULK_ERROR_STATUSES.has(error.status)) throw error;
          outcomes.push({ id, error });
        }
      }
      return outcomes;
    },

    /**
     * Merges the sources into the target, all or nothing: their comments (each marked with
     * `merged_from_ticket_id`, author and time kept) and time entries (which take the target's
     * client) move to the target; each source is closed with `merged_into_id` (its SLA clocks stop
     * as a closing stops them) and records `ticket.updated`; the target lists them in `merged_ids`,
     * gets an internal comment by `author` saying so (`comment.created`) and records
     * `ticket.merged`. All the tickets stay locked (in id order, so that two merges cannot
     * deadlock) until the commit, and their resource locks (ticketLockKey) are held around the
     * transaction, so a PATCH of one of them waits and then checks its If-Match against the merge.
     */
    merge(tenantId: string, targetId: string, sourceIds: string[], author: string): Promise<Ticket> {
      const keys = [targetId, ...sourceIds].map((id) => ticketLockKey(tenantId, id));
      return lock(keys, () =>
        store.transaction(async (tx) => {
          const locked = await tx.tickets.findManyForUpdate(tenantId, [targetId, ...sourceIds]);
          const target = locked.get(targetId);
          if (!target) throw ticketNotFound();
          const missing = sourceIds.filter((id) => !locked.has(id));
          if (missing.length) {
            throw notFound(`source_ids name tickets that do not exist in your tenant: ${missing.join(', ')}.`, {
              errors: missing.map((id) => ({ field: 'source_ids', message: `${id} names no ticket of your tenant` })),
            });
          }
          if (sourceIds.includes(targetId)) {
            throw unprocessable('A ticket cannot be merged into itself: source_ids holds the target.', {
              code: 'merge-into-itself',
              errors: [{ field: 'source_ids', message: 'must not contain the target ticket' }],
            });
          }
          if (isFinal(target.status))
            throw transitionProblem(target, 'The ticket is closed; a closed ticket takes no merges.', 'ticket-closed');
          const merged = sourceIds.map((id) => locked.get(id)!).filter((source) => source.merged_into_id !== null);
          if (merged.length) {
            throw unprocessable(
              `Already merged into another ticket: ${merged.map((source) => source.id).join(', ')}.`,
              {
                code: 'already-merged',
                errors: merged.map((source) => ({
                  field: 'source_ids',
                  message: `${source.id} was merged into ${source.merged_into_id}`,
                })),
              },
            );
          }
          const now = new Date();
          await tx.tickets.moveActivity(tenantId, sourceIds, target);
          for (const id of sourceIds) {
            const source = locked.get(id)!;
            const timestamps = timestampsFor(source.status, 'closed', now);
            const written = await tx.tickets.update(
              tenantId,
              id,
              { status: 'closed', ...timestamps, mergedIntoId: targetId },
              now,
            );
            const closed = await sla.onTicketChanged(tx, tenantId, source, { ...written, sla: source.sla }, now);
            await tx.events.record({
              type: 'ticket.updated',
              tenantId,
              resourceType: 'ticket',
              resourceId: id,
              object: closed,
              before: source,
            });
          }
          await tx.tickets.update(tenantId, targetId, { mergedIds: [...target.merged_ids, ...sourceIds] }, now);
          const numbers = sourceIds.map((id) => `#${locked.get(id)!.number}`).join(', ');
          const note = await tx.comments.create(tenantId, {
            ticketId: targetId,
            body: `Merged ${numbers} into this ticket: their comments and time entries are now here.`,
            internal: true,
            author,
          });
          await tx.events.record({
            type: 'comment.created',
            tenantId,
            resourceType: 'comment',
            resourceId: note.id,
            object: note,
          });
          const result = (await tx.tickets.findById(tenantId, targetId))!;
          await tx.events.record({
            type: 'ticket.merged',
            tenantId,
            resourceType: 'ticket',
            resourceId: targetId,
            object: result,
            extra: { source_ids: sourceIds },
          });
          return result;
        }),
      );
    },
  };
  return service;
}

export type TicketsService = ReturnType<typeof createTicketsService>;
