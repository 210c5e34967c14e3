import {
  API_BASE_PATH,
  IdParams,
  LINK_HEADER,
  pageRequestOf,
  sendPage,
  type ApiRouter,
  LIST_PAGES_DOC,
} from '@msp/http';
import { tenantOf } from '@msp/auth';
import { tenantJson } from './tenant.mapper';
import { CreateTenantBody, ListTenantsQuery, Tenant, TenantPage, UpdateTenantBody } from './tenant.schemas';
import type { TenantsService } from './tenants.service';

const SCOPE = 'admin:tenant';
const TAGS = ['Tenants'];

export function registerTenantRoutes(api: ApiRouter, deps: { tenants: TenantsService }) {
  const { tenants } = deps;

  api.route({
    method: 'get',
    path: '/tenants',
    operationId: 'listTenants',
    summary: 'List managed tenants',
    description:
      'The customer directories your tenant administers, newest first (`created_at` descending, then `id`).' +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: SCOPE,
    query: ListTenantsQuery,
    responses: { 200: { description: 'One page of managed tenants.', schema: TenantPage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await tenants.list(
        tenantOf(req),
        { status: query.status, clientId: query.client_id },
        page,
      );
      sendPage(req, res, items.map(tenantJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/tenants/:id',
    operationId: 'getTenant',
    summary: 'Show a managed tenant',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The managed tenant.', schema: Tenant } },
    load: async (req, { params }) => tenantJson(await tenants.get(tenantOf(req), params.id)),
  });

  api.route({
    method: 'patch',
    path: '/tenants/:id',
    operationId: 'updateTenant',
    summary: 'Change a managed tenant',
    description:
      'Renames a managed tenant or changes its `status` (`active` or `suspended`); `domain` and `client_id` do not change.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    body: UpdateTenantBody,
    responses: { 200: { description: 'The changed managed tenant.', schema: Tenant } },
    handler: async (req, res, { params, body }) => {
      res.json(tenantJson(await tenants.update(tenantOf(req), params.id, { name: body.name, status: body.status })));
    },
  });

  api.route({
    method: 'post',
    path: '/tenants',
    operationId: 'registerTenant',
    summary: 'Register a managed tenant',
    description:
      'Registers a customer directory for one helpdesk client. `client_id` is stored as given (link does not look it up in the helpdesk). ' +
      '`domain` is unique among your managed tenants, compared in lower case: a second registration is a 409.',
    tags: TAGS,
    scope: SCOPE,
    body: CreateTenantBody,
    errors: [409],
    responses: {
      201: {
        description: 'Registered; `Location` names the new tenant.',
        schema: Tenant,
        headers: { Location: { description: 'URL of the new managed tenant.', schema: { type: 'string' } } },
      },
    },
    handler: async (req, res, { body }) => {
      const tenant = await tenants.register(tenantOf(req), {
        name: body.name,
        domain: body.domain,
        clientId: body.client_id,
        status: body.status ?? 'active',
      });
      res.status(201).location(`${API_BASE_PATH}/tenants/${tenant.id}`).json(tenantJson(tenant));
    },
  });
}
