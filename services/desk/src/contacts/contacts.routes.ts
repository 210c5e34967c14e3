import { groupDigits, IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  CONTACT_SEARCH_COUNT_LIMIT,
  ContactChangesSchema,
  ContactListQuery,
  ContactPageSchema,
  ContactSchema,
  NewContactSchema,
} from './contact.schemas';
import type { ContactsService } from './contacts.service';

const TAGS = ['Contacts'];

export function registerContactRoutes(api: ApiRouter, contacts: ContactsService) {
  api.route({
    method: 'get',
    path: '/contacts',
    operationId: 'listContacts',
    summary: 'List contacts',
    description:
      'Newest first (`created_at` descending, then `id`). Filters combine with AND. With `q`, `pagination.total` counts at most ' +
      `${groupDigits(CONTACT_SEARCH_COUNT_LIMIT)} matches and \`pagination.total_exact\` says whether more match.` +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:tickets',
    query: ContactListQuery,
    responses: { 200: page('A page of contacts.', ContactPageSchema) },
    handler: async (req, res, { query: { page: pageNumber, per_page, after, ...filters } }) => {
      const paging = pageRequestOf({ page: pageNumber, per_page, after });
      const { items, total, totalExact } = await contacts.list(tenantOf(req), filters, paging);
      sendPage(req, res, items, total, paging, {}, totalExact);
    },
  });

  api.route({
    method: 'post',
    path: '/contacts',
    operationId: 'createContact',
    summary: 'Create a contact',
    description:
      'An address another contact of the tenant has (any letter case) is a 409 (`urn:msp:problem:email-taken`).',
    tags: TAGS,
    scope: 'write:tickets',
    body: NewContactSchema,
    errors: [409],
    responses: {
      201: created('The created contact.', ContactSchema),
      422: unprocessableResponse('`client_id` names no client of the tenant.'),
    },
    handler: async (req, res, { body }) => {
      sendCreated(res, '/contacts', await contacts.create(tenantOf(req), body));
    },
  });

  api.route({
    method: 'get',
    path: '/contacts/:id',
    operationId: 'getContact',
    summary: 'Read a contact',
    tags: TAGS,
    scope: 'read:tickets',
    params: IdParams,
    responses: { 200: { description: 'The contact.', schema: ContactSchema } },
    load: (req, { params }) => contacts.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'patch',
    path: '/contacts/:id',
    operationId: 'updateContact',
    summary: 'Change a contact',
    description:
      'An address another contact of the tenant has is a 409 (`urn:msp:problem:email-taken`). Any ' +
      'change sets `email_status` to `ok`: mail goes to the contact again.',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    body: ContactChangesSchema,
    errors: [409],
    responses: {
      200: { description: 'The contact after the change.', schema: ContactSchema },
      422: unprocessableResponse('`client_id` names no client of the tenant.'),
    },
    handler: async (req, res, { params, body }) => {
      res.json(await contacts.update(tenantOf(req), params.id, body));
    },
  });

  api.route({
    method: 'delete',
    path: '/contacts/:id',
    operationId: 'deleteContact',
    summary: 'Delete a contact',
    description:
      'A contact that requested tickets is a 409 (`urn:msp:problem:contact-in-use`). Comments it wrote keep their text.',
    tags: TAGS,
    scope: 'write:tickets',
    params: IdParams,
    errors: [409],
    responses: { 204: { description: 'Deleted.' } },
    handler: async (req, res, { params }) => {
      await contacts.delete(tenantOf(req), params.id);
      res.status(204).end();
    },
  });
}
