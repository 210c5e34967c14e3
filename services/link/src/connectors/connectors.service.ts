import { conflict, listWindow, notFound, type PageRequest, unprocessable } from '@msp/http';
import { OutboundBlockedError, type Outbound } from '@msp/outbound';
import type { TenantsRepository } from '../tenants/tenants.repository';
import type { SecretBox } from '@msp/secrets';
import type { ConnectorChanges, ConnectorFilter, ConnectorRecord, ConnectorsRepository, ConnectorType } from './connectors.repository';

export interface NewConnectorInput {
  managedTenantId: string;
  type: ConnectorType;
  name: string;
  enabled: boolean;
  baseUrl: string;
  bearerToken: string;
}

export interface ConnectorUpdate {
  name?: string;
  enabled?: boolean;
  baseUrl?: string;
  bearerToken?: string;
}

/**
 * The rules of connectors: a connector belongs to one of the caller's managed tenants, its token
 * is sealed before it is stored, and one with a sync run queued or running is not deleted.
 */
export function createConnectorsService(deps: { connectors: ConnectorsRepository; tenants: TenantsRepository; secrets: SecretBox; outbound: Outbound }) {
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
      throw unprocessable(`config.base_url: ${error.message}.`, { errors: [{ field: 'config.base_url', message: error.message }] });
    }
  }

  async function get(ownerTenantId: string, id: string): Promise<ConnectorRecord> {
    const connector = await connectors.findById(ownerTenantId, id);
    // Another owner's connector is as unknown as a missing one (SPEC §3).
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
      await assertMayCall(input.baseUrl);
      const { bearerToken, ...rest } = input;
      return connectors.create(ownerTenantId, { ...rest, bearerTokenEncrypted: secrets.seal(bearerToken) });
    },

    async update(ownerTenantId: string, id: string, update: ConnectorUpdate): Promise<ConnectorRecord> {
      if (update.baseUrl !== undefined) await assertMayCall(update.baseUrl);
      const changes: ConnectorChanges = { name: update.name, enabled: update.enabled, baseUrl: update.baseUrl };
      if (update.bearerToken !== undefined) changes.bearerTokenEncrypted = secrets.seal(update.bearerToken);
      const updated = await connectors.update(ownerTenantId, id, changes);
      if (!updated) throw notFound(`No connector ${id}.`);
      return updated;
    },

    async remove(ownerTenantId: string, id: string): Promise<void> {
      const outcome = await connectors.deleteUnlessSyncOpen(ownerTenantId, id);
      if (outcome === 'not_found') throw notFound(`No connector ${id}.`);
      if (outcome !== 'deleted') {
        throw conflict(`Connector ${id} has sync run ${outcome.openRunId} queued or running; delete it when the run has finished.`, {
          extensions: { run_id: outcome.openRunId },
        });
      }
    },
  };
}

export type ConnectorsService = ReturnType<typeof createConnectorsService>;
