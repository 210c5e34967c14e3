import {
  API_BASE_PATH,
  IdParams,
  LINK_HEADER,
  pageRequestOf,
  sendPage,
  unprocessableResponse,
  type ApiRouter,
  LIST_PAGES_DOC,
} from '@msp/http';
import { tenantOf } from '@msp/auth';
import {
  Connector,
  ConnectorPage,
  CreateConnectorBody,
  ListConnectorsQuery,
  UpdateConnectorBody,
  type ConnectorJson,
} from './connector.schemas';
import type { ConnectorRecord } from './connectors.repository';
import type { ConnectorsService } from './connectors.service';
import { connectorTypeOf } from './connector-types';

const SCOPE = 'admin:tenant';
const TAGS = ['Connectors'];

/** The secret is write-only: a response only ever says that one is set (each type's configJson). */
export function connectorJson(connector: ConnectorRecord): ConnectorJson {
  return {
    id: connector.id,
    tenant_id: connector.managedTenantId,
    type: connector.type,
    name: connector.name,
    enabled: connector.enabled,
    config: connectorTypeOf(connector.type).configJson(connector),
    created_at: connector.createdAt.toISOString(),
    updated_at: connector.updatedAt.toISOString(),
  };
}

export function registerConnectorRoutes(api: ApiRouter, deps: { connectors: ConnectorsService }) {
  const { connectors } = deps;

  api.route({
    method: 'get',
    path: '/connectors',
    operationId: 'listConnectors',
    summary: 'List connectors',
    description:
      'The enabled connectors of your managed tenants, newest first (`created_at` descending, then `id`); `include_disabled=true` lists disabled ones too.' +
      LIST_PAGES_DOC,
    tags: TAGS,
    scope: SCOPE,
    query: ListConnectorsQuery,
    responses: { 200: { description: 'One page of connectors.', schema: ConnectorPage, headers: LINK_HEADER } },
    handler: async (req, res, { query }) => {
      const page = pageRequestOf(query);
      const { items, total } = await connectors.list(
        tenantOf(req),
        { enabledOnly: !query.include_disabled, managedTenantId: query.tenant_id },
        page,
      );
      sendPage(req, res, items.map(connectorJson), total, page);
    },
  });

  api.route({
    method: 'post',
    path: '/connectors',
    operationId: 'createConnector',
    summary: 'Create a connector',
    description:
      'A SCIM 2.0 (`type: scim`) or Active Directory / OpenLDAP (`type: ldap`) connector of one of ' +
      'your managed tenants. `config.bearer_token` and `config.bind_password` are stored encrypted and ' +
      'never returned (`bearer_token_set`, `bind_password_set: true`). ' +
      'An `ldap` URL that would bind in clear (`ldap://` without `start_tls`, not on an allowed loopback) is 422 `insecure_transport`. ' +
      'In production, a `base_url` on a loopback, link-local or private address is refused (422 here, and again ' +
      'at every call, whatever the name resolves to then), unless OUTBOUND_ALLOWLIST names it.',
    tags: TAGS,
    scope: SCOPE,
    body: CreateConnectorBody,
    responses: {
      201: {
        description: 'Created; `Location` names the new connector.',
        schema: Connector,
        headers: { Location: { description: 'URL of the new connector.', schema: { type: 'string' } } },
      },
      422: unprocessableResponse(
        '`tenant_id` is not one of your managed tenants, `config` does not fit `type`, the URL would bind in ' +
          'clear (`insecure_transport`), or `config.base_url` / `config.url` is a loopback, link-local or ' +
          'private address not in OUTBOUND_ALLOWLIST or OUTBOUND_ALLOWED_NETWORKS.',
      ),
    },
    handler: async (req, res, { body }) => {
      const connector = await connectors.create(tenantOf(req), {
        managedTenantId: body.tenant_id,
        type: body.type,
        name: body.name,
        enabled: body.enabled ?? true,
        config: body.config,
      });
      res.status(201).location(`${API_BASE_PATH}/connectors/${connector.id}`).json(connectorJson(connector));
    },
  });

  api.route({
    method: 'get',
    path: '/connectors/:id',
    operationId: 'getConnector',
    summary: 'Show a connector',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    responses: { 200: { description: 'The connector.', schema: Connector } },
    load: async (req, { params }) => connectorJson(await connectors.get(tenantOf(req), params.id)),
  });

  api.route({
    method: 'patch',
    path: '/connectors/:id',
    operationId: 'updateConnector',
    summary: 'Change a connector',
    description:
      'Renames, enables or disables a connector, or changes its `config` (`scim`: `base_url` and/or a new ' +
      '`bearer_token`; `ldap`: any of its settings but `flavor`; an omitted member keeps its value).',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    body: UpdateConnectorBody,
    responses: {
      200: { description: 'The changed connector.', schema: Connector },
      422: unprocessableResponse(
        "`config` does not fit the connector's type, the URL would bind in clear " +
          '(`insecure_transport`), or the URL is a loopback, link-local or private address not allowed.',
      ),
    },
    handler: async (req, res, { params, body }) => {
      const connector = await connectors.update(tenantOf(req), params.id, {
        name: body.name,
        enabled: body.enabled,
        config: body.config,
      });
      res.json(connectorJson(connector));
    },
  });

  api.route({
    method: 'delete',
    path: '/connectors/:id',
    operationId: 'deleteConnector',
    summary: 'Delete a connector',
    description:
      'Deletes the connector with its sync runs and its mirror of the directory. While a sync run is queued or running: 409 naming it (`run_id`).',
    tags: TAGS,
    scope: SCOPE,
    params: IdParams,
    errors: [409],
    responses: { 204: { description: 'Deleted.' } },
    handler: async (req, res, { params }) => {
      await connectors.remove(tenantOf(req), params.id);
      res.status(204).end();
    },
  });
}
