import { AppError, conflict, listWindow, notFound, type PageRequest } from '@msp/http';
import type { ConnectorDirectories } from '../connectors/connector-directories';
import type { ConnectorsService } from '../connectors/connectors.service';
import type { TenantsRepository } from '../tenants/tenants.repository';
import { QueueUnavailableError, type SyncRunner } from './sync.runner';
import { OpenRunExistsError, type SyncRunRecord, type SyncsRepository } from './syncs.repository';

/** A run of 3 or more failures in a row is `failing`, fewer `degraded`. */
const FAILING_AFTER = 3;

export function createSyncsService(deps: {
  connectors: ConnectorsService;
  tenants: TenantsRepository;
  syncs: SyncsRepository;
  runner: SyncRunner;
  directories: Pick<ConnectorDirectories, 'probe'>;
}) {
  const { connectors, tenants, syncs, runner, directories } = deps;

  return {
    async start(ownerTenantId: string, connectorId: string): Promise<SyncRunRecord> {
      const connector = await connectors.get(ownerTenantId, connectorId);
      if (!connector.enabled)
        throw conflict(`Connector ${connectorId} is disabled; enable it (PATCH enabled: true) to synchronise it.`);
      // A suspended managed tenant is kept but not acted on.
      const tenant = await tenants.findById(ownerTenantId, connector.managedTenantId);
      if (tenant?.status === 'suspended')
        throw conflict(
          `Managed tenant ${tenant.id} is suspended; set it active (PATCH /tenants/${tenant.id}) to synchronise its connector.`,
        );
      try {
        return await runner.start(connectorId, 'manual');
      } catch (error) {
        if (error instanceof QueueUnavailableError) {
          throw new AppError(
            503,
            `Sync run ${error.runId} could not be queued: link's job queue is unavailable. Try again shortly.`,
            { code: 'queue-unavailable', headers: { 'Retry-After': '30' } },
          );
        }
        if (!(error instanceof OpenRunExistsError)) throw error;
        const open = error.openRun;
        throw conflict(
          `Sync run ${open?.id ?? '(unknown)'} of connector ${connectorId} is already ${open?.status ?? 'open'}.`,
          {
            extensions: { run_id: open?.id ?? null, run_status: open?.status ?? null },
          },
        );
      }
    },

    async list(ownerTenantId: string, connectorId: string, page: PageRequest) {
      await connectors.get(ownerTenantId, connectorId);
      return syncs.list(connectorId, listWindow(page));
    },

    async get(ownerTenantId: string, connectorId: string, runId: string): Promise<SyncRunRecord> {
      await connectors.get(ownerTenantId, connectorId);
      const run = await syncs.find(connectorId, runId);
      if (!run) throw notFound(`No sync run ${runId} of connector ${connectorId}.`);
      return run;
    },

    async users(ownerTenantId: string, connectorId: string, page: PageRequest) {
      await connectors.get(ownerTenantId, connectorId);
      return syncs.listMirror(connectorId, listWindow(page));
    },

    async groups(ownerTenantId: string, connectorId: string, page: PageRequest) {
      await connectors.get(ownerTenantId, connectorId);
      return syncs.listGroups(connectorId, listWindow(page));
    },

    async health(ownerTenantId: string, connectorId: string) {
      const connector = await connectors.get(ownerTenantId, connectorId);
      const checkedAt = new Date();
      // Enough finished runs to see the streak of failures up to "failing" (and one success).
      const latest = await syncs.latestFinished(connectorId, 50);
      let consecutiveFailures = 0;
      for (const run of latest) {
        if (run.status !== 'failed') break;
        consecutiveFailures++;
      }
      const lastSuccess =
        latest.find((run) => run.status === 'succeeded')?.finishedAt ??
        (await syncs.lastSuccessAt(connectorId))?.finishedAt ??
        null;
      const last = latest[0];
      // A directory that can be checked at once is: a wrong password shows now, not after three runs.
      const probed = connector.enabled ? await directories.probe(connector) : undefined;
      const derived = !connector.enabled
        ? 'disabled'
        : !last
          ? 'unknown'
          : consecutiveFailures === 0
            ? 'healthy'
            : consecutiveFailures >= FAILING_AFTER
              ? 'failing'
              : 'degraded';
      const status =
        typeof probed === 'string' ? 'failing' : probed === null && derived === 'unknown' ? 'healthy' : derived;
      return {
        status,
        reason: typeof probed === 'string' ? probed : undefined,
        lastRun: last ? { id: last.id, status: last.status, finishedAt: last.finishedAt } : null,
        lastSuccessAt: lastSuccess,
        consecutiveFailures,
        checkedAt,
      } as const;
    },
  };
}

export type SyncsService = ReturnType<typeof createSyncsService>;
