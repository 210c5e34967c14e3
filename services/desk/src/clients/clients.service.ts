import { changesBetween } from '@msp/events';
import { conflict, notFound, unprocessable, type PageRequest } from '@msp/http';
import { unlessDuplicate } from '../db';
import type { Repositories, Store } from '../store';
import type { Client, ClientChanges, NewClient } from './client.schemas';

const clientNotFound = () => notFound('No client with this id exists in your tenant.');
const nameTaken = (name: string) => () =>
  conflict(`A client named "${name}" already exists in your tenant (names are compared case-insensitively).`, { code: 'duplicate-client' });

/** sla_policy_id must name an SLA policy of the tenant (else 422); locked, so that it cannot be deleted before the client commits. */
async function assertPolicy(tx: Repositories, tenantId: string, policyId: string | null | undefined) {
  if (policyId && !(await tx.slaPolicies.findForUpdate(tenantId, policyId))) {
    const message = 'does not name an SLA policy of your tenant';
    throw unprocessable(`sla_policy_id ${message}.`, { code: 'unknown-reference', errors: [{ field: 'sla_policy_id', message }] });
  }
}

export function createClientsService(store: Store) {
  async function get(tenantId: string, id: string): Promise<Client> {
    const client = await store.clients.findById(tenantId, id);
    if (!client) throw clientNotFound();
    return client;
  }

  return {
    get,

    list(tenantId: string, page: PageRequest) {
      return store.clients.list(tenantId, page);
    },

    create(tenantId: string, input: NewClient): Promise<Client> {
      const created = store.transaction(async (tx) => {
        await assertPolicy(tx, tenantId, input.sla_policy_id);
        const client = await tx.clients.create(tenantId, input);
        await tx.events.record({ type: 'client.created', tenantId, resourceType: 'client', resourceId: client.id, object: client });
        return client;
      });
      return unlessDuplicate(created, nameTaken(input.name));
    },

    /** Asking for what the client already is changes nothing, not even `updated_at`, and records no event. */
    update(tenantId: string, id: string, changes: ClientChanges): Promise<Client> {
      const updated = store.transaction(async (tx) => {
        const client = await tx.clients.findForUpdate(tenantId, id);
        if (!client) throw clientNotFound();
        if (Object.keys(changesBetween(client, { ...client, ...changes })).length === 0) return client;
        await assertPolicy(tx, tenantId, changes.sla_policy_id);
        const after = await tx.clients.update(tenantId, id, changes);
        await tx.events.record({ type: 'client.updated', tenantId, resourceType: 'client', resourceId: id, object: after, before: client });
        return after;
      });
      return unlessDuplicate(updated, nameTaken(changes.name ?? ''));
    },
  };
}

export type ClientsService = ReturnType<typeof createClientsService>;
