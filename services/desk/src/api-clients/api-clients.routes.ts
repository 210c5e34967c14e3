import { IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { ADMIN_SCOPE, tenantOf } from '@msp/auth';
import { created, page, sendCreated, unprocessableResponse } from '../shared/http.schemas';
import {
  ApiClientListQuery,
  ApiClientPageSchema,
  ApiClientSchema,
  ApiClientWithSecretSchema,
  NewApiClientSchema,
  SecretRotationSchema,
} from './api-client.schemas';
import type { ApiClientsService } from './api-clients.service';

const TAGS = ['API clients'];

export function registerApiClientRoutes(api: ApiRouter, clients: ApiClientsService) {
  api.route({
    method: 'get',
    path: '/api-clients',
    operationId: 'listApiClients',
    summary: 'List API clients',
    description:
      "The tenant's API clients, newest first. Deleted clients and the platform's service clients are never listed; secrets never appear." +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: ADMIN_SCOPE,
    query: ApiClientListQuery,
    responses: { 200: page('A page of API clients.', ApiClientPageSchema) },
    handler: async (req, res, { query }) => {
      const paging = pageRequestOf(query);
      const { items, total } = await clients.list(tenantOf(req), paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'post',
    path: '/api-clients',
    operationId: 'createApiClient',
    summary: 'Create an API client',
    description:
      'Answers the new client with its `client_secret`, shown only in this response (desk stores a salted scrypt hash). ' +
      "The client may hold only scopes that the caller's own access token names: granting any other is a 422 `scope-not-held`.",
    tags: TAGS,
    scope: ADMIN_SCOPE,
    body: NewApiClientSchema,
    // Its answer holds the secret, which is never kept anywhere but as desk's hash: no replay store.
    idempotent: false,
    responses: {
      201: created('The created client with its secret (shown once).', ApiClientWithSecretSchema),
      422: unprocessableResponse("A scope the caller's token does not hold (`scope-not-held`)."),
    },
    handler: async (req, res, { body }) => {
      res.set('Cache-Control', 'no-store');
      sendCreated(res, '/api-clients', await clients.create(tenantOf(req), req.principal!.scopes, body));
    },
  });

  api.route({
    method: 'get',
    path: '/api-clients/:id',
    operationId: 'getApiClient',
    summary: 'Read an API client',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The client (without its secret).', schema: ApiClientSchema } },
    load: (req, { params }) => clients.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'delete',
    path: '/api-clients/:id',
    operationId: 'deleteApiClient',
    summary: 'Delete an API client',
    description:
      'The token endpoint refuses the client from now on and every refresh token it holds is revoked at once. ' +
      'Access tokens already issued are self-contained JWTs: they keep working until they expire, ' +
      'at the latest one hour (`expires_in` 3600) after they were issued. ' +
      'Deleting a deleted client is a 404.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: { 204: { description: 'Deleted; its refresh tokens are revoked.' } },
    handler: async (req, res, { params }) => {
      await clients.delete(tenantOf(req), params.id);
      res.status(204).end();
    },
  });

  api.route({
    method: 'post',
    path: '/api-clients/:id/secret',
    operationId: 'rotateApiClientSecret',
    summary: "Rotate an API client's secret",
    description:
      'Answers a new `client_secret`, shown only in this response. The replaced secret keeps working for `grace_period_seconds` ' +
      '(0 to 604800, i.e. up to 7 days; default 0: it stops at once), so the deployments using it can be switched over; ' +
      '`previous_secret_expires_at` says until when. A secret replaced earlier and still in its grace period stops working now. ' +
      'Refresh tokens already issued stay valid.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    body: SecretRotationSchema,
    responses: {
      200: { description: 'The client with its new secret (shown once).', schema: ApiClientWithSecretSchema },
    },
    handler: async (req, res, { params, body }) => {
      res.set('Cache-Control', 'no-store');
      res.json(await clients.rotateSecret(tenantOf(req), params.id, body.grace_period_seconds ?? 0));
    },
  });
}
