import { IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  ClientChangesSchema,
  ClientListQuery,
  ClientPageSchema,
  ClientSchema,
  NewClientSchema,
} from './client.schemas';
import type { ClientsService } from './clients.service';

const TAGS = ['Clients'];

export function registerClientRoutes(api: ApiRouter, clients: ClientsService) {
  api.route({
    method: 'get',
    path: '/clients',
    operationId: 'listClients',
    summary: 'List clients',
    description: 'Newest first (`created_at` descending, then `id`).' + LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:tickets',
    query: ClientListQuery,
    responses: { 200: page('A page of clients.', ClientPageSchema) },
    handler: async (req, res, { query }) => {
      const paging = pageRequestOf(query);
      const { items, total } = await clients.list(tenantOf(req), paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'post',
    path: '/clients',
    operationId: 'createClient',
    summary: 'Create a client',
    tags: TAGS,
    scope: 'write:tickets',
    body: NewClientSchema,
    errors: [409],
    responses: {
      201: created('The created client.', ClientSchema),
      422: unprocessableResponse(
        '`sla_policy_id` names no SLA policy of the tenant (`urn:msp:problem:unknown-reference`), or ' +
          '`email_domains` holds a free-mail domain (`urn:msp:problem:free-mail-domain`).',
      ),
    },
    handler: async (req, res, { body }) => {
      sendCreated(res, '/clients', await clients.create(tenantOf(req), body));
    },
  });

  api.route({
    method: 'get',
    path: '/clients/:id',
    operationId: 'getClient',
    summary: 'Read a client',
    tags: TAGS,
    scope: 'read:tickets',
    params: IdParams,
    responses: { 200: { description: 'The client.', schema: ClientSchema } },
    load: (req, { params }) => clients.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'patch',
    path: '/clients/:id',
    operationId: 'updateClient',
    summary: 'Change a client',
    description:
      '`null` clears `email`, `phone`, `notes` or `sla_policy_id`. A name another client of the tenant ' +
      'has is a 409, as is a domain of `email_domains` another client owns ' +
      '(`urn:msp:problem:email-domain-taken`). `sla_policy_id` applies to tickets opened afterwards.',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    body: ClientChangesSchema,
    errors: [409],
    responses: {
      200: { description: 'The client after the change.', schema: ClientSchema },
      422: unprocessableResponse(
        '`sla_policy_id` names no SLA policy of the tenant (`urn:msp:problem:unknown-reference`), or ' +
          '`email_domains` holds a free-mail domain (`urn:msp:problem:free-mail-domain`).',
      ),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await clients.update(tenantOf(req), params.id, body));
    },
  });
}
