import { API_BASE_PATH, IdParams, LINK_HEADER, sendPage, type ApiRouter } from '@msp/http';
import { tenantOf } from '@msp/auth';
import { syncRunJson } from './sync.mapper';
import { ConnectorHealth, DirectoryUserPage, PageQuery, SyncRun, SyncRunPage, SyncRunParams } from './sync.schemas';
import type { MirrorUser } from './syncs.repository';
import type { SyncsService } from './syncs.service';

const SCOPE = 'admin:tenant';
const TAGS = ['Connectors'];

function userJson(user: MirrorUser) {
  return {
    id: user.scimId,
    external_id: user.externalId,
    user_name: user.userName,
    display_name: user.displayName,
    email: user.email,
    active: user.active,
    groups: user.groups,
  };
}

export function registerSyncRoutes(api: ApiRouter, deps: { syncs: SyncsService }) {
  const { syncs } = deps;

  api.route({
    method: 'post',
    path: '/connectors/:id/sync',
    operationId: 'startSync',
    summary: 'Synchronise a connector now',
    description:
      'Queues a sync run: every User and Group of the directory is read over SCIM (paged) into the mirror (`GET /connectors/:id/users`). ' +
      'A run already queued or running: 409 naming it (`run_id`). A disabled connector, or one of a suspended managed tenant: 409. ' +
      'link\'s job queue unavailable: 503 (the run is recorded as failed).',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    errors: [409, 503],
    responses: {
      202: {
        description: 'Queued; `Location` names the run.',
        schema: SyncRun,
        headers: { Location: { description: 'URL of the sync run.', schema: { type: 'string' } } },
      },
    },
    handler: async (req, res, { params }) => {
      const run = await syncs.start(tenantOf(req), params.id);
      res.status(202).location(`${API_BASE_PATH}/connectors/${params.id}/syncs/${run.id}`).json(syncRunJson(run));
    },
  });

  api.route({
    method: 'get',
    path: '/connectors/:id/syncs',
    operationId: 'listSyncs',
    summary: 'List sync runs',
    description: 'The connector\'s sync runs, newest first.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    query: PageQuery,
    responses: { 200: { description: 'One page of sync runs.', schema: SyncRunPage, headers: LINK_HEADER } },
    handler: async (req, res, { params, query }) => {
      const page = { page: query.page, per_page: query.per_page };
      const { items, total } = await syncs.list(tenantOf(req), params.id, page);
      sendPage(req, res, items.map(syncRunJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/connectors/:id/syncs/:run_id',
    operationId: 'getSync',
    summary: 'Show a sync run',
    tags: TAGS,
    scope: SCOPE,
    params: SyncRunParams,
    responses: { 200: { description: 'The sync run.', schema: SyncRun } },
    handler: async (req, res, { params }) => {
      res.json(syncRunJson(await syncs.get(tenantOf(req), params.id, params.run_id)));
    },
  });

  api.route({
    method: 'get',
    path: '/connectors/:id/users',
    operationId: 'listDirectoryUsers',
    summary: 'List the directory\'s users as last synced',
    description: 'The mirror the last successful sync left, by `user_name`.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    query: PageQuery,
    responses: { 200: { description: 'One page of directory users.', schema: DirectoryUserPage, headers: LINK_HEADER } },
    handler: async (req, res, { params, query }) => {
      const page = { page: query.page, per_page: query.per_page };
      const { items, total } = await syncs.users(tenantOf(req), params.id, page);
      sendPage(req, res, items.map(userJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/connectors/:id/health',
    operationId: 'getConnectorHealth',
    summary: 'Show a connector\'s health',
    description: 'Derived from its finished sync runs: `disabled`, `unknown`, `healthy`, `degraded` (1–2 failures in a row) or `failing` (3 or more).',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The connector\'s health.', schema: ConnectorHealth } },
    handler: async (req, res, { params }) => {
      const health = await syncs.health(tenantOf(req), params.id);
      res.json({
        status: health.status,
        last_run: health.lastRun ? { id: health.lastRun.id, status: health.lastRun.status, finished_at: health.lastRun.finishedAt?.toISOString() ?? null } : null,
        last_success_at: health.lastSuccessAt?.toISOString() ?? null,
        consecutive_failures: health.consecutiveFailures,
        checked_at: health.checkedAt.toISOString(),
      });
    },
  });
}
