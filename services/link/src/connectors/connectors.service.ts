import {
  type AppError,
  conflict,
  listWindow,
  notFound,
  type PageRequest,
  unprocessable,
  validationFailed,
} from '@msp/http';
import { LDAP_FIELDS, LDAP_REQUIRED, ldapSettingsFrom, transportProblem } from '../ldap/ldap-config';
import { OutboundBlockedError, type Outbound } from '@msp/outbound';
import type { TenantsRepository } from '../tenants/tenants.repository';
import type { SecretBox } from '@msp/secrets';
import type {
  ConnectorChanges,
  ConnectorFilter,
  ConnectorRecord,
  ConnectorsRepository,
  ConnectorType,
} from './connectors.repository';

export interface NewConnectorInput {
  managedTenantId: string;
  type: ConnectorType;
  name: string;
  enabled: boolean;
  /** The request's `config`, as validated by the schema (either type's). */
  config: Record<string, unknown>;
}

export interface ConnectorUpdate {
  name?: string;
  enabled?: boolean;
  config?: Record<string, unknown>;
}

const SCIM_FIELDS = ['base_url', 'bearer_token'];

function wrongConfig(type: ConnectorType, config: Record<string, unknown>, required: boolean): AppError | undefined {
  const allowed = type === 'scim' ? SCIM_FIELDS : LDAP_FIELDS;
  const errors = Object.keys(config)
    .filter((key) => !allowed.includes(key))
    .map((key) => ({ field: `config.${key}`, message: `is not a setting of ${type} connectors` }));
  if (required) {
    const needed = type === 'scim' ? SCIM_FIELDS : LDAP_REQUIRED;
    for (const key of needed)
      if (config[key] === undefined)
        errors.push({ field: `config.${key}`, message: `is required for ${type} connectors` });
  }
  return errors.length ? validationFailed(errors, `config does not fit ${type} connectors.`) : undefined;
}

/**
 * The rules of connectors: a connector belongs to one of the caller's managed tenants, its token
 * is sealed before it is stored, and one with a sync run queued or running is not deleted.
 */
export function createConnectorsService(deps: {
  connectors: ConnectorsRepository;
  tenants: TenantsRepository;
  secrets: SecretBox;
  outbound: Outbound;
}) {
  const { connectors, tenants, secrets, outbound } = deps;

  /**
   * A base_url production may not call (loopback, link-local, private) is refused when it is set,
   * not only when a run calls it. A name that does not resolve yet is let through: every call
   * checks again.
   */
  async function assertMayCall(baseUrl: string) {
    try {
      await outbound.check(baseUrl);
    } catch (error) {
      if (!(error instanceof OutboundBlockedError) || error.reason === 'unresolvable') return;
      throw unprocessable(`config.base_url: ${error.message}.`, {
        errors: [{ field: 'config.base_url', message: error.message }],
      });
    }
  }

  /** The LDAP server's host: refused as a base_url would be, and a cleartext bind refused unless on loopback. */
  async function assertLdapReachable(url: string, startTls: boolean) {
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    let addresses: string[] | undefined;
    try {
      addresses = await outbound.addressesFor(host);
    } catch (error) {
      if (!(error instanceof OutboundBlockedError) || error.reason === 'unresolvable') addresses = undefined;
      else
        throw unprocessable(`config.url: ${error.message}.`, {
          errors: [{ field: 'config.url', message: error.message }],
        });
    }
    const problem = transportProblem(url, startTls, addresses, outbound.allowsLoopback);
    if (problem)
      throw unprocessable(problem, { code: 'insecure_transport', errors: [{ field: 'config.url', message: problem }] });
  }

  async function get(ownerTenantId: string, id: string): Promise<ConnectorRecord> {
    const connector = await connectors.findById(ownerTenantId, id);
    // Another owner's connector is as unknown as a missing one: no existence leaks across tenants.
    if (!connector) throw notFound(`No connector ${id}.`);
    return connector;
  }

  return {
    get,

    list(ownerTenantId: string, filter: ConnectorFilter, page: PageRequest) {
      return connectors.list(ownerTenantId, filter, listWindow(page));
    },

    async create(ownerTenantId: string, input: NewConnectorInput): Promise<ConnectorRecord> {
      if (!(await tenants.findById(ownerTenantId, input.managedTenantId))) {
        throw unprocessable(`tenant_id ${input.managedTenantId} is not one of your managed tenants.`, {
          errors: [{ field: 'tenant_id', message: 'is not one of your managed tenants' }],
        });
      }
      const invalid = wrongConfig(input.type, input.config, true);
      if (invalid) throw invalid;
      const base = {
        managedTenantId: input.managedTenantId,
        type: input.type,
        name: input.name,
        enabled: input.enabled,
      };
      if (input.type === 'ldap') {
        const { url, settings } = ldapSettingsFrom(input.config);
        await assertLdapReachable(url, settings.startTls);
        return connectors.create(ownerTenantId, {
          ...base,
          baseUrl: url,
          ldap: settings,
          bearerTokenEncrypted: secrets.seal(String(input.config.bind_password)),
        });
      }
      const baseUrl = String(input.config.base_url);
      await assertMayCall(baseUrl);
      return connectors.create(ownerTenantId, {
        ...base,
        baseUrl,
        bearerTokenEncrypted: secrets.seal(String(input.config.bearer_token)),
      });
    },

    async update(ownerTenantId: string, id: string, update: ConnectorUpdate): Promise<ConnectorRecord> {
      const changes: ConnectorChanges = { name: update.name, enabled: update.enabled };
      if (update.config) {
        const current = await get(ownerTenantId, id);
        const invalid = wrongConfig(current.type, update.config, false);
        if (invalid) throw invalid;
        if (current.type === 'ldap' && current.ldap) {
          const { url, settings } = ldapSettingsFrom(update.config, { url: current.baseUrl, settings: current.ldap });
          if (update.config.url !== undefined || update.config.start_tls !== undefined)
            await assertLdapReachable(url, settings.startTls);
          changes.baseUrl = url;
          changes.ldap = settings;
          if (update.config.bind_password !== undefined)
            changes.bearerTokenEncrypted = secrets.seal(String(update.config.bind_password));
        } else {
          if (update.config.base_url !== undefined) {
            changes.baseUrl = String(update.config.base_url);
            await assertMayCall(changes.baseUrl);
          }
          if (update.config.bearer_token !== undefined)
            changes.bearerTokenEncrypted = secrets.seal(String(update.config.bearer_token));
        }
      }
      const updated = await connectors.update(ownerTenantId, id, changes);
      if (!updated) throw notFound(`No connector ${id}.`);
      return updated;
    },

    async remove(ownerTenantId: string, id: string): Promise<void> {
      const outcome = await connectors.deleteUnlessSyncOpen(ownerTenantId, id);
      if (outcome === 'not_found') throw notFound(`No connector ${id}.`);
      if (outcome !== 'deleted') {
        throw conflict(
          `Connector ${id} has sync run ${outcome.openRunId} queued or running; delete it when the run has finished.`,
          {
            extensions: { run_id: outcome.openRunId },
          },
        );
      }
    },
  };
}

export type ConnectorsService = ReturnType<typeof createConnectorsService>;
