import { unprocessable } from '@msp/http';
import { OutboundBlockedError, type Outbound } from '@msp/outbound';
import type { ConnectorTypeDefinition, Connection } from '../connectors/connector-type';
import { modifiedSinceFilter } from '../syncs/sync.mirror';
import { createScimClient, ScimError } from './scim-client';
import { ScimConfigInput, ScimConfigOutput, ScimConfigPatch } from './scim-schemas';

/**
 * A base_url production may not call (loopback, link-local, private) is refused when it is set,
 * not only when a run calls it. A name that does not resolve yet is let through: every call
 * checks again.
 */
async function assertMayCall(baseUrl: string, outbound: Outbound) {
  try {
    await outbound.check(baseUrl);
  } catch (error) {
    if (!(error instanceof OutboundBlockedError) || error.reason === 'unresolvable') return;
    throw unprocessable(`config.base_url: ${error.message}.`, {
      errors: [{ field: 'config.base_url', message: error.message }],
    });
  }
}

function clientOf(connection: Connection, options: { signal?: AbortSignal; pageSize?: number } = {}) {
  return createScimClient({
    baseUrl: connection.settings.baseUrl,
    bearerToken: connection.secret,
    outbound: connection.outbound,
    ...options,
  });
}

/** `scim`: a SCIM 2.0 service provider at `base_url`, called with a bearer token. */
export const scimType: ConnectorTypeDefinition<'scim'> = {
  type: 'scim',
  describe: { type: 'a SCIM 2.0 client (RFC 7643/7644)', config: 'base_url and bearer_token' },
  schemas: { create: ScimConfigInput, patch: ScimConfigPatch, view: ScimConfigOutput },
  secret: { field: 'bearer_token', name: 'bearer token' },

  settingsFrom: (config) => ({ baseUrl: String(config.base_url), settings: null }),
  changesFrom: (config) => (config.base_url !== undefined ? { baseUrl: String(config.base_url) } : {}),
  reachedThrough: ['base_url'],
  assertReachable: (settings, outbound) => assertMayCall(settings.baseUrl, outbound),
  configJson: (settings): ScimConfigOutput => ({ base_url: settings.baseUrl, bearer_token_set: true }),

  syncSource(connection, options) {
    const client = clientOf(connection, options);
    return {
      serviceProviderConfig: () => client.serviceProviderConfig(),
      listUsers: (since) => client.listUsers(since ? modifiedSinceFilter(since) : undefined),
      listGroups: (since) => client.listGroups(since ? modifiedSinceFilter(since) : undefined),
    };
  },
  open: (connection) => clientOf(connection),
  failureOf: (error) =>
    error instanceof ScimError
      ? { message: error.message, kind: error.kind, retryable: error.retryable, retryAfterMs: error.retryAfterMs }
      : null,
};
