import { IdParams, sendPage, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  NewTicketSchema,
  TicketChangesSchema,
  TicketFiltersSchema,
  TicketPageSchema,
  TicketRuleProblem,
  TicketSchema,
} from './ticket.schemas';
import type { TicketsService } from './tickets.service';

const TAGS = ['Tickets'];

export function registerTicketRoutes(api: ApiRouter, tickets: TicketsService) {
  api.route({
    method: 'get',
    path: '/tickets',
    operationId: 'listTickets',
    summary: 'List tickets',
    description: 'Newest first (`created_at` descending, then `id`). Filters combine with AND.',
    tags: TAGS,
    scope: 'read:tickets',
    query: TicketFiltersSchema,
    responses: { 200: page('A page of tickets.', TicketPageSchema) },
    handler: async (req, res, { query: { page: pageNumber, per_page, ...filters } }) => {
      const paging = { page: pageNumber, per_page };
      const { items, total } = await tickets.list(tenantOf(req), filters, paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'post',
    path: '/tickets',
    operationId: 'createTicket',
    summary: 'Open a ticket',
    description: 'The ticket starts `open` and gets the tenant\'s next `number`.',
    tags: TAGS,
    scope: 'write:tickets',
    body: NewTicketSchema,
    responses: {
      201: created('The created ticket.', TicketSchema),
      422: unprocessableResponse('`client_id` names no client of the tenant, or `assignee_id` no active user of it.', TicketRuleProblem),
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
    handler: async (req, res, { params }) => {
      res.json(await tickets.get(tenantOf(req), params.id));
    },
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
      422: unprocessableResponse('An illegal status move (the problem lists `allowed_transitions`), a change to a closed ticket, or an unknown client or assignee.', TicketRuleProblem),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await tickets.update(tenantOf(req), params.id, body));
    },
  });
}
