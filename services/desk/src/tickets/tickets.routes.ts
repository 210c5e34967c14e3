import { IdParams, pageRequestOf, sendPage, toProblem, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  BulkChangesSchema,
  BulkResultsSchema,
  MergeRequestSchema,
  NewTicketSchema,
  TicketChangesSchema,
  TicketFiltersSchema,
  TicketPageSchema,
  TicketRuleProblem,
  TicketSchema,
  SEARCH_WINDOW_TEXT,
} from './ticket.schemas';
import type { TicketsService } from './tickets.service';

const TAGS = ['Tickets'];

export function registerTicketRoutes(api: ApiRouter, tickets: TicketsService) {
  api.route({
    method: 'get',
    path: '/tickets',
    operationId: 'listTickets',
    summary: 'List tickets',
    description:
      'Newest first (`created_at` descending, then `id`). Filters combine with AND. With `q`, a full-text search over title, description and ' +
      'comments, the most relevant first unless `sort` is given, among its ' +
      SEARCH_WINDOW_TEXT +
      ' newest matches (`pagination.total_exact` false when more match); ' +
      'a `q` of only stop words or punctuation is a 400 (`urn:msp:problem:empty-search`).' +
      LIST_PAGES_DOC +
      ' `after` pages the default order only: with `q` or `sort` it is a 400 (deep pages of a search or of `sort=sla_due_at` go by `page`).',
    tags: TAGS,
    scope: 'read:tickets',
    query: TicketFiltersSchema,
    responses: { 200: page('A page of tickets.', TicketPageSchema) },
    handler: async (req, res, { query: { page: pageNumber, per_page, after, ...filters } }) => {
      const paging = pageRequestOf({ page: pageNumber, per_page, after });
      const { items, total, totalExact } = await tickets.list(tenantOf(req), filters, paging);
      sendPage(req, res, items, total, paging, {}, totalExact);
    },
  });

  api.route({
    method: 'post',
    path: '/tickets',
    operationId: 'createTicket',
    summary: 'Open a ticket',
    description: "The ticket starts `open` and gets the tenant's next `number`.",
    tags: TAGS,
    scope: 'write:tickets',
    body: NewTicketSchema,
    responses: {
      201: created('The created ticket.', TicketSchema),
      422: unprocessableResponse(
        '`client_id` names no client of the tenant, or `assignee_id` no active user of it.',
        TicketRuleProblem,
      ),
    },
    handler: async (req, res, { body }) => {
      sendCreated(res, '/tickets', await tickets.create(tenantOf(req), body));
    },
  });

  api.route({
    method: 'get',
    path: '/tickets/:id',
    operationId: 'getTicket',
    summary: 'Read a ticket',
    tags: TAGS,
    scope: 'read:tickets',
    params: IdParams,
    responses: { 200: { description: 'The ticket.', schema: TicketSchema } },
    load: (req, { params }) => tickets.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'patch',
    path: '/tickets/:id',
    operationId: 'updateTicket',
    summary: 'Change a ticket',
    description:
      'Changes the fields given. `status` follows the status machine; entering `resolved` sets `resolved_at`, reopening clears it, ' +
      'closing sets `closed_at`. Setting a field to its current value (the current status included) changes nothing and answers 200. ' +
      'A closed ticket is final: any change to it is a 422. A resolved ticket reopened after its assignee was deactivated comes back unassigned.',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    body: TicketChangesSchema,
    responses: {
      200: { description: 'The ticket after the change.', schema: TicketSchema },
      422: unprocessableResponse(
        'An illegal status move (the problem lists `allowed_transitions`), a change to a closed ticket, or an unknown client or assignee.',
        TicketRuleProblem,
      ),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await tickets.update(tenantOf(req), params.id, body));
    },
  });

  api.route({
    method: 'post',
    path: '/tickets/bulk',
    operationId: 'bulkUpdateTickets',
    summary: 'Change many tickets',
    description:
      'Applies `changes` to each of `ids` by the rules of `PATCH /tickets/{id}` (and its ' +
      '`ticket.updated` event), one ticket after the other, each in its own ' +
      'transaction: the answer is 200 with one result per id, in order, `{id, status: 200, ticket}` or `{id, status: 404|412|422, problem}`; ' +
      'a ticket that fails leaves the others changed. `if_match` gives, per id, the ETag the ticket must still have (else its result is 412). ' +
      'A malformed request, an id given twice, or an `if_match` key not in `ids` is a 400 and changes nothing. ' +
      'Each ticket is changed under the same lock as its `PATCH`: a `PATCH` of it at the same time (on any instance) waits for its change, ' +
      'and the other way round, so an `If-Match` of either is checked against what the other wrote.',
    tags: TAGS,
    scope: 'write:tickets',
    body: BulkChangesSchema,
    responses: { 200: { description: 'One result per id, in the order of `ids`.', schema: BulkResultsSchema } },
    handler: async (req, res, { body }) => {
      const outcomes = await tickets.bulkUpdate(tenantOf(req), body);
      res.json({
        results: outcomes.map((outcome) =>
          'ticket' in outcome
            ? { id: outcome.id, status: 200, ticket: outcome.ticket }
            : { id: outcome.id, status: outcome.error.status, problem: toProblem(outcome.error, req.requestId) },
        ),
      });
    },
  });

  api.route({
    method: 'post',
    path: '/tickets/:id/merge',
    operationId: 'mergeTickets',
    summary: 'Merge tickets into this one',
    description:
      'All or nothing: the comments (author and time kept, `merged_from_ticket_id` naming where each was written) and time entries (which take this ' +
      "ticket's `client_id`) of every source move here; each source becomes `closed` with `merged_into_id`, this ticket lists them in `merged_ids` " +
      'and gets an internal comment recording the merge. Events: `ticket.updated` for each source, `comment.created`, then `ticket.merged`. ' +
      'A source of another tenant (or none) is a 404; a closed target, the target among the sources, or a source merged before is a 422. ' +
      'The merge holds the lock a `PATCH` of each of its tickets takes: a `PATCH` of one of them ' +
      'at the same time waits for the merge (its `If-Match` then fails, 412).',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    body: MergeRequestSchema,
    responses: {
      200: { description: 'The target after the merge.', schema: TicketSchema },
      422: unprocessableResponse(
        'The target is closed (`urn:msp:problem:ticket-closed`), is among `source_ids` ' +
          '(`urn:msp:problem:merge-into-itself`), or a source was merged before (`urn:msp:problem:already-merged`).',
        TicketRuleProblem,
      ),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await tickets.merge(tenantOf(req), params.id, body.source_ids, req.principal!.clientId));
    },
  });
}
