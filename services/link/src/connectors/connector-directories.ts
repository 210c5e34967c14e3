import type { Outbound } from '@msp/outbound';
import { createScimClient, ScimError, type ScimClient } from '../scim/scim-client';
import type { SecretBox } from '@msp/secrets';
import type { ConnectorRecord, ConnectorsRepository } from './connectors.repository';

/**
 * Opens a connector's directory: the stored bearer token decrypted only here, in memory, for the
 * SCIM client that sends it. Nothing else ever sees it in clear.
 */
export interface ConnectorDirectories {
  /** The SCIM client of a connector. */
  clientOf(connector: Pick<ConnectorRecord, 'baseUrl' | 'bearerTokenEncrypted'>, options?: { signal?: AbortSignal; pageSize?: number }): ScimClient;
  /** The enabled connector of a managed tenant, or null. */
  enabledConnectorOf(managedTenantId: string): Promise<ConnectorRecord | null>;
  /** Whether the managed tenant has an enabled connector. */
  hasEnabledConnector(managedTenantId: string): Promise<boolean>;
  /** The SCIM client of the managed tenant's enabled connector; a NoConnectorError when there is none. */
  open(managedTenantId: string): Promise<ScimClient>;
  /** Network, timeout, 429 and 5xx from a directory: worth another try. */
  isRetryable(error: unknown): boolean;
}

export class NoConnectorError extends Error {
  constructor(readonly managedTenantId: string) {
    super(`managed tenant ${managedTenantId} has no enabled connector: create one (POST /connectors) or enable it`);
    this.name = 'NoConnectorError';
  }
}

export function createConnectorDirectories(deps: { connectors: ConnectorsRepository; secrets: SecretBox; outbound: Outbound }): ConnectorDirectories {
  const { connectors, secrets, outbound } = deps;

  function clientOf(connector: Pick<ConnectorRecord, 'baseUrl' | 'bearerTokenEncrypted'>, options: { signal?: AbortSignal; pageSize?: number } = {}) {
    return createScimClient({ baseUrl: connector.baseUrl, bearerToken: secrets.open(connector.bearerTokenEncrypted), outbound, ...options });
  }

  return {
    clientOf,
    enabledConnectorOf: (managedTenantId) => connectors.findEnabledForManagedTenant(managedTenantId),
    async hasEnabledConnector(managedTenantId) {
      return (await connectors.findEnabledForManagedTenant(managedTenantId)) !== null;
    },
    async open(managedTenantId) {
      const connector = await connectors.findEnabledForManagedTenant(managedTenantId);
      if (!connector) throw new NoConnectorError(managedTenantId);
      return clientOf(connector);
    },
    isRetryable: (error) => error instanceof ScimError && error.retryable,
  };
}
