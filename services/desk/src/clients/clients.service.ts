import { changesBetween } from '@msp/events';
import { conflict, notFound, type PageRequest } from '@msp/http';
import { unlessDuplicate } from '../db';
import type { Store } from '../store';
import type { Client, ClientChanges, NewClient } from './client.schemas';

const clientNotFound = () => notFound('No client with this id exists in your tenant.');
const nameTaken = (name: string) => () =>
  conflict(`A client named "${name}" already exists in your tenant (names are compared case-insensitively).`, { code: 'duplicate-client' });

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
        const after = await tx.clients.update(tenantId, id, changes);
        await tx.events.record({ type: 'client.updated', tenantId, resourceType: 'client', resourceId: id, object: after, before: client });
        return after;
      });
      return unlessDuplicate(updated, nameTaken(changes.name ?? ''));
    },
  };
}

export type ClientsService = ReturnType<typeof createClientsService>;
