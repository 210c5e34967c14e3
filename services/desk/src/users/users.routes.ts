import { IdParams, pageRequestOf, sendPage, LIST_PAGES_DOC, type ApiRouter } from '@msp/http';
import { ADMIN_SCOPE, tenantOf } from '@msp/auth';
import { created, page, sendCreated } from '../shared/http.schemas';
import { NewUserSchema, UserChangesSchema, UserListQuery, UserPageSchema, UserSchema } from './user.schemas';
import type { UsersService } from './users.service';

const TAGS = ['Users'];

export function registerUserRoutes(api: ApiRouter, users: UsersService) {
  api.route({
    method: 'get',
    path: '/users',
    operationId: 'listUsers',
    summary: 'List active users',
    description: 'Technicians of the tenant, newest first; deactivated users are not listed.' + LIST_PAGES_DOC,
    tags: TAGS,
    scope: 'read:users',
    query: UserListQuery,
    responses: { 200: page('A page of users.', UserPageSchema) },
    handler: async (req, res, { query }) => {
      const paging = pageRequestOf(query);
      const { items, total } = await users.list(tenantOf(req), paging);
      sendPage(req, res, items, total, paging);
    },
  });

  api.route({
    method: 'get',
    path: '/users/:id',
    operationId: 'getUser',
    summary: 'Read a user',
    description: 'Deactivated users are found too (`active: false`), so that history can show their names.',
    tags: TAGS,
    scope: 'read:users',
    params: IdParams,
    responses: { 200: { description: 'The user.', schema: UserSchema } },
    load: (req, { params }) => users.get(tenantOf(req), params.id),
  });

  api.route({
    method: 'post',
    path: '/users',
    operationId: 'createUser',
    summary: 'Create a technician',
    description: 'Only `name` and `email` are required; `role` defaults to `technician`.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    body: NewUserSchema,
    errors: [409],
    responses: { 201: created('The created user.', UserSchema) },
    handler: async (req, res, { body }) => {
      sendCreated(res, '/users', await users.create(tenantOf(req), body));
    },
  });

  api.route({
    method: 'patch',
    path: '/users/:id',
    operationId: 'updateUser',
    summary: 'Change a user',
    description:
      'Changes `name`, `email`, `role` or `active` of a user, active or deactivated; a field set to its current value changes nothing and answers 200. ' +
      'An e-mail address another user of the tenant has (deactivated ones included, compared case-insensitively) is a 409. ' +
      '`active: false` deactivates the user as `DELETE /users/{id}` does: they leave the list and can no ' +
      'longer be assigned, and their open, in-progress and pending tickets become unassigned ' +
      'in the same transaction (a `ticket.updated` each); `active: true` reactivates a deactivated user. Records `user.updated` with the changes.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    body: UserChangesSchema,
    errors: [409],
    responses: { 200: { description: 'The user after the change.', schema: UserSchema } },
    handler: async (req, res, { params, body }) => {
      res.json(await users.update(tenantOf(req), params.id, body));
    },
  });

  api.route({
    method: 'delete',
    path: '/users/:id',
    operationId: 'deleteUser',
    summary: 'Deactivate a user',
    description:
      'The user leaves the list and can no longer be assigned; their open, in-progress and pending tickets become unassigned in the same ' +
      'transaction. The user stays readable by id. Deleting a deactivated user is a 404.',
    tags: TAGS,
    scope: ADMIN_SCOPE,
    params: IdParams,
    responses: { 204: { description: 'Deactivated.' } },
    handler: async (req, res, { params }) => {
      await users.deactivate(tenantOf(req), params.id);
      res.status(204).end();
    },
  });
}
