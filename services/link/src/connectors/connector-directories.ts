import type { Outbound } from '@msp/outbound';
import { createScimClient, ScimError, type ScimClient } from '../scim/scim-client';
import type { SecretBox } from '@msp/secrets';
import { createLdapDirectory } from '../ldap/ldap-directory';
import { createLdapAccounts } from '../ldap/ldap-accounts';
import type { Directory } from '../runs/directory';
import { LdapError } from '../ldap/ldap-connection';
import { modifiedSinceFilter, type SyncSource } from '../syncs/sync.mirror';
import type { ConnectorRecord, ConnectorsRepository } from './connectors.repository';

/**
 * Opens a connector's directory: the stored secret (SCIM bearer token, LDAP bind password)
 * decrypted only here, in memory, for the client that sends it. Nothing else ever sees it in clear.
 * Each connector type is one file (src/scim, src/ldap); this is the only place that chooses.
 */
export interface ConnectorDirectories {
  /** The SCIM client of a connector. */
  clientOf(
    connector: Pick<ConnectorRecord, 'baseUrl' | 'bearerTokenEncrypted'>,
    options?: { signal?: AbortSignal; pageSize?: number },
  ): ScimClient;
  /** What a sync reads from the connector's directory, whatever its type. */
  syncSourceOf(
    connector: Pick<ConnectorRecord, 'type' | 'baseUrl' | 'bearerTokenEncrypted' | 'ldap'>,
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
  failureOf(error: unknown): { message: string; kind: string; retryable: boolean; retryAfterMs?: number } | null;
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

  function clientOf(
    connector: Pick<ConnectorRecord, 'baseUrl' | 'bearerTokenEncrypted'>,
    options: { signal?: AbortSignal; pageSize?: number } = {},
  ) {
    return createScimClient({
      baseUrl: connector.baseUrl,
      bearerToken: secrets.open(connector.bearerTokenEncrypted),
      outbound,
      ...options,
    });
  }

  function ldapOf(
    connector: Pick<ConnectorRecord, 'baseUrl' | 'bearerTokenEncrypted' | 'ldap'>,
    options: { pageSize?: number } = {},
  ) {
    if (!connector.ldap) throw new Error('an ldap connector without its settings');
    return createLdapDirectory({
      url: connector.baseUrl,
      settings: connector.ldap,
      bindPassword: secrets.open(connector.bearerTokenEncrypted),
      outbound,
      pageSize: options.pageSize,
    });
  }

  return {
    clientOf,
    syncSourceOf(connector, options = {}) {
      if (connector.type === 'ldap') return ldapOf(connector, options);
      const client = clientOf(connector, options);
      return {
        serviceProviderConfig: () => client.serviceProviderConfig(),
        listUsers: (since) => client.listUsers(since ? modifiedSinceFilter(since) : undefined),
        listGroups: (since) => client.listGroups(since ? modifiedSinceFilter(since) : undefined),
      };
    },
    async probe(connector) {
      if (connector.type !== 'ldap') return undefined;
      let directory;
      try {
        directory = ldapOf(connector);
      } catch {
        return "the connector's bind password cannot be decrypted (was CONNECTOR_ENCRYPTION_KEY changed?); set it again with PATCH config.bind_password";
      }
      try {
        await directory.health();
        return null;
      } catch (error) {
        if (error instanceof LdapError) return error.message;
        throw error;
      }
    },
    enabledConnectorOf: (managedTenantId) => connectors.findEnabledForManagedTenant(managedTenantId),
    async hasEnabledConnector(managedTenantId) {
      return (await connectors.findEnabledForManagedTenant(managedTenantId)) !== null;
    },
    async open(managedTenantId) {
      const connector = await connectors.findEnabledForManagedTenant(managedTenantId);
      if (!connector) throw new NoConnectorError(managedTenantId);
      if (connector.type === 'ldap' && connector.ldap) {
        const accounts = createLdapAccounts({
          url: connector.baseUrl,
          settings: connector.ldap,
          bindPassword: secrets.open(connector.bearerTokenEncrypted),
          outbound,
        });
        return {
          ...accounts,
          // The password leaves the LDAP client sealed: the run stores it so, and only the
          // credentials endpoint opens it.
          async createUser(user) {
            const { id, userName, initialPassword, managerDn } = await accounts.createUser(user);
            return {
              id,
              userName,
              initialPasswordSealed: secrets.seal(initialPassword),
              ...(user.managerUserName ? { managerSet: managerDn !== null } : {}),
            };
          },
        };
      }
      return clientOf(connector);
    },
    isRetryable: (error) => (error instanceof ScimError || error instanceof LdapError) && error.retryable,
    failureName: (error) => (error instanceof LdapError ? error.kind : null),
    failureOf(error) {
      if (error instanceof ScimError)
        return {
          message: error.message,
          kind: error.kind,
          retryable: error.retryable,
          retryAfterMs: error.retryAfterMs,
        };
      if (error instanceof LdapError) return { message: error.message, kind: error.kind, retryable: error.retryable };
      return null;
    },
  };
}
