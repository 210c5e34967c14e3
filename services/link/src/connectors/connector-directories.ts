import type { Outbound } from '@msp/outbound';
import type { SecretBox } from '@msp/secrets';
import type { Directory } from '../runs/directory';
import type { SyncSource } from '../syncs/sync.mirror';
import type { DirectoryFailure } from './connector-type';
import { connectorTypeOf, connectorTypes, secretUnreadable } from './connector-types';
import type { ConnectorRecord, ConnectorsRepository } from './connectors.repository';

/**
 * Opens a connector's directory: the stored secret (SCIM bearer token, LDAP bind password)
 * decrypted only here, in memory, for the client that sends it. Nothing else ever sees it in clear.
 * What differs by type is the type's definition (connector-types.ts); nothing here branches on it.
 */
export interface ConnectorDirectories {
  /** What a sync reads from the connector's directory, whatever its type. */
  syncSourceOf(
    connector: Pick<ConnectorRecord, 'type' | 'baseUrl' | 'bearerTokenEncrypted' | 'settings'>,
    options?: { signal?: AbortSignal; pageSize?: number },
  ): SyncSource;
  /**
   * A live check of the connector's directory, for the types that can be checked at once (`ldap`:
   * bind and read the base): null when it works, else why not; undefined for the others.
   */
  probe(connector: ConnectorRecord): Promise<string | null | undefined>;
  /** The enabled connector of a managed tenant, or null. */
  enabledConnectorOf(managedTenantId: string): Promise<ConnectorRecord | null>;
  /** Whether the managed tenant has an enabled connector. */
  hasEnabledConnector(managedTenantId: string): Promise<boolean>;
  /** The directory of the managed tenant's enabled connector (SCIM or LDAP); a NoConnectorError when there is none. */
  open(managedTenantId: string): Promise<Directory>;
  /** Network, timeout, 429 and 5xx from a directory: worth another try. */
  isRetryable(error: unknown): boolean;
  /** An LDAP failure's name (password_policy, account_exists, ou_missing, …); null for the others. */
  failureName(error: unknown): string | null;
  /** A directory's failure in words, whether to try again, and how long it asked to wait; null for errors that are not a directory's. */
  failureOf(error: unknown): DirectoryFailure | null;
}

export class NoConnectorError extends Error {
  constructor(readonly managedTenantId: string) {
    super(`managed tenant ${managedTenantId} has no enabled connector: create one (POST /connectors) or enable it`);
    this.name = 'NoConnectorError';
  }
}

export function createConnectorDirectories(deps: {
  connectors: ConnectorsRepository;
  secrets: SecretBox;
  outbound: Outbound;
}): ConnectorDirectories {
  const { connectors, secrets, outbound } = deps;

  /** Throws when the secret was sealed under another key: GCM refuses it. */
  const connectionOf = (connector: Pick<ConnectorRecord, 'baseUrl' | 'bearerTokenEncrypted' | 'settings'>) => ({
    settings: { baseUrl: connector.baseUrl, settings: connector.settings },
    secret: secrets.open(connector.bearerTokenEncrypted),
    outbound,
  });

  function failureOf(error: unknown): DirectoryFailure | null {
    for (const type of connectorTypes) {
      const failure = type.failureOf(error);
      if (failure) return failure;
    }
    return null;
  }

  return {
    syncSourceOf: (connector, options = {}) =>
      connectorTypeOf(connector.type).syncSource(connectionOf(connector), options),
    async probe(connector) {
      const type = connectorTypeOf(connector.type);
      if (!type.probe) return undefined;
      let connection;
      try {
        connection = connectionOf(connector);
      } catch {
        return secretUnreadable(connector.type);
      }
      return type.probe(connection);
    },
    enabledConnectorOf: (managedTenantId) => connectors.findEnabledForManagedTenant(managedTenantId),
    async hasEnabledConnector(managedTenantId) {
      return (await connectors.findEnabledForManagedTenant(managedTenantId)) !== null;
    },
    async open(managedTenantId) {
      const connector = await connectors.findEnabledForManagedTenant(managedTenantId);
      if (!connector) throw new NoConnectorError(managedTenantId);
      return connectorTypeOf(connector.type).open(connectionOf(connector), (clear) => secrets.seal(clear));
    },
    isRetryable: (error) => failureOf(error)?.retryable ?? false,
    failureName: (error) => failureOf(error)?.name ?? null,
    failureOf,
  };
}
