import {
  type AppError,
  conflict,
  currentContext,
  listWindow,
  notFound,
  type PageRequest,
  unprocessable,
  validationFailed,
} from '@msp/http';
import type { Outbound } from '@msp/outbound';
import type { TenantsRepository } from '../tenants/tenants.repository';
import type { SecretBox } from '@msp/secrets';
import type {
  ConnectorChanges,
  ConnectorFilter,
  ConnectorRecord,
  ConnectorsRepository,
  ConnectorType,
} from './connectors.repository';
import type { ConnectorTypeDefinition } from './connector-type';
import { connectorTypeOf } from './connector-types';

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

/**
 * The request schema takes any type's `config` (a union), so whether it fits the connector's own
 * type is checked here, against that type's create schema: its members, and on create its required ones.
 */
function wrongConfig(
  type: ConnectorTypeDefinition,
  config: Record<string, unknown>,
  required: boolean,
): AppError | undefined {
  const allowed = Object.keys(type.schemas.create.properties);
  const errors = Object.keys(config)
    .filter((key) => !allowed.includes(key))
    .map((key) => ({ field: `config.${key}`, message: `is not a setting of ${type.type} connectors` }));
  if (required) {
    for (const key of type.schemas.create.required ?? [])
      if (config[key] === undefined)
        errors.push({ field: `config.${key}`, message: `is required for ${type.type} connectors` });
  }
  return errors.length ? validationFailed(errors, `config does not fit ${type.type} connectors.`) : undefined;
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
      const type = connectorTypeOf(input.type);
      const invalid = wrongConfig(type, input.config, true);
      if (invalid) throw invalid;
      const settings = type.settingsFrom(input.config);
      await type.assertReachable(settings, outbound);
      return connectors.create(ownerTenantId, {
        managedTenantId: input.managedTenantId,
        type: input.type,
        name: input.name,
        enabled: input.enabled,
        ...settings,
        bearerTokenEncrypted: secrets.seal(String(input.config[type.secret.field])),
        idempotencyClaim: currentContext()?.idempotencyClaim ?? null,
      });
    },

    async update(ownerTenantId: string, id: string, update: ConnectorUpdate): Promise<ConnectorRecord> {
      const changes: ConnectorChanges = { name: update.name, enabled: update.enabled };
      const { config } = update;
      if (config) {
        const current = await get(ownerTenantId, id);
        const type = connectorTypeOf(current.type);
        const invalid = wrongConfig(type, config, false);
        if (invalid) throw invalid;
        const settings = type.changesFrom(config, current);
        if (type.reachedThrough.some((field) => config[field] !== undefined))
          await type.assertReachable({ ...current, ...settings }, outbound);
        Object.assign(changes, settings);
        if (config[type.secret.field] !== undefined)
          changes.bearerTokenEncrypted = secrets.seal(String(config[type.secret.field]));
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
