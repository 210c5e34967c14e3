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
      return unlessDuplicate(store.clients.create(tenantId, input), nameTaken(input.name));
    },

    async update(tenantId: string, id: string, changes: ClientChanges): Promise<Client> {
      await get(tenantId, id); // clients are never deleted: it still exists when the update runs
      return unlessDuplicate(store.clients.update(tenantId, id, changes), nameTaken(changes.name ?? ''));
    },
  };
}

export type ClientsService = ReturnType<typeof createClientsService>;
