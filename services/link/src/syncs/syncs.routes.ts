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
import { directoryGroupJson, directoryUserJson, syncRunJson } from './sync.mapper';
import {
  ConnectorHealth,
  DirectoryGroupPage,
  DirectoryUserPage,
  MirrorPageQuery,
  PageQuery,
  SyncRun,
  SyncRunPage,
  SyncRunParams,
} from './sync.schemas';
import type { SyncsService } from './syncs.service';

const SCOPE = 'admin:tenant';
const TAGS = ['Connectors'];

export function registerSyncRoutes(api: ApiRouter, deps: { syncs: SyncsService }) {
  const { syncs } = deps;

  api.route({
    method: 'post',
    path: '/connectors/:id/sync',
    operationId: 'startSync',
    summary: 'Synchronise a connector now',
    description:
      "Queues a sync run: the directory's Users and Groups are read over SCIM (paged) into the " +
      'mirror (`GET /connectors/:id/users`, `GET /connectors/:id/groups`). ' +
      "When the directory's ServiceProviderConfig says it filters, a run asks only for what " +
      'changed since the last successful run began (`stats.mode: delta`); ' +
      'a full run (`stats.mode: full`, `stats.mode_reason` says why) comes at least every ' +
      'FULL_SYNC_INTERVAL_HOURS and marks users no longer in the directory deleted. ' +
      'A run already queued or running: 409 naming it (`run_id`). A disabled connector, or one of a suspended managed tenant: 409. ' +
      "link's job queue unavailable: 503 (the run is recorded as failed).",
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
    description: `The connector's sync runs, newest first (\`created_at\` descending, then \`id\`).${LIST_PAGES_DOC}`,
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    query: PageQuery,
    responses: { 200: { description: 'One page of sync runs.', schema: SyncRunPage, headers: LINK_HEADER } },
    handler: async (req, res, { params, query }) => {
      const page = pageRequestOf(query);
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
    summary: "List the directory's users as last synced",
    description:
      'The mirror the syncs left, by `user_name` (then `id`); users a full sync no longer found are kept with `deleted: true`.' +
      `${LIST_PAGES_DOC} \`after\` is a user's \`id\` (the directory's SCIM id).`,
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    query: MirrorPageQuery,
    responses: {
      200: { description: 'One page of directory users.', schema: DirectoryUserPage, headers: LINK_HEADER },
    },
    handler: async (req, res, { params, query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await syncs.users(tenantOf(req), params.id, page);
      sendPage(req, res, items.map(directoryUserJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/connectors/:id/groups',
    operationId: 'listDirectoryGroups',
    summary: "List the directory's groups as last synced",
    description:
      'The groups the syncs mirrored, with their member counts, by `display_name` (then `id`).' +
      `${LIST_PAGES_DOC} \`after\` is a group's \`id\` (the directory's SCIM id).`,
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    query: MirrorPageQuery,
    responses: {
      200: { description: 'One page of directory groups.', schema: DirectoryGroupPage, headers: LINK_HEADER },
    },
    handler: async (req, res, { params, query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await syncs.groups(tenantOf(req), params.id, page);
      sendPage(req, res, items.map(directoryGroupJson), total, page);
    },
  });

  api.route({
    method: 'get',
    path: '/connectors/:id/health',
    operationId: 'getConnectorHealth',
    summary: "Show a connector's health",
    description:
      'Derived from its finished sync runs: `disabled`, `unknown`, `healthy`, `degraded` (1–2 failures in a row) or `failing` (3 or more). ' +
      'An enabled `ldap` connector is also checked at once (bind, read `base_dn` and `users_ou`): a failed check ' +
      'is `failing` with its `reason`; a passing one is at least `healthy` when no run has finished yet.',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 200: { description: "The connector's health.", schema: ConnectorHealth } },
    handler: async (req, res, { params }) => {
      const health = await syncs.health(tenantOf(req), params.id);
      res.json({
        status: health.status,
        last_run: health.lastRun
          ? {
              id: health.lastRun.id,
              status: health.lastRun.status,
              finished_at: health.lastRun.finishedAt?.toISOString() ?? null,
            }
          : null,
        last_success_at: health.lastSuccessAt?.toISOString() ?? null,
        consecutive_failures: health.consecutiveFailures,
        checked_at: health.checkedAt.toISOString(),
        ...(health.reason ? { reason: health.reason } : {}),
      });
    },
  });
}
