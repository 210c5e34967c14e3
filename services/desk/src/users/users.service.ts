import { conflict, notFound, type PageRequest } from '@msp/http';
import { unlessDuplicate } from '../db';
import type { Store } from '../store';
import type { NewUser, User } from './user.schemas';

const userNotFound = () => notFound('No active user with this id exists in your tenant.');

export function createUsersService(store: Store) {
  return {
    list(tenantId: string, page: PageRequest) {
      return store.users.listActive(tenantId, page);
    },

    /** Deactivated users are still found by id, so that history can show their names. */
    async get(tenantId: string, id: string): Promise<User> {
      const user = await store.users.findById(tenantId, id);
      if (!user) throw notFound('No user with this id exists in your tenant.');
      return user;
    },

    create(tenantId: string, input: NewUser): Promise<User> {
      return unlessDuplicate(store.users.create(tenantId, input), () =>
        conflict(`A user with the e-mail address "${input.email}" already exists in your tenant.`, { code: 'duplicate-user' }),
      );
    },

    /** Deactivates the user and, in the same transaction, unassigns the tickets still being worked on. */
    async deactivate(tenantId: string, id: string): Promise<void> {
      await store.transaction(async (tx) => {
        if (!(await tx.users.deactivate(tenantId, id))) throw userNotFound();
        await tx.tickets.unassignOpen(tenantId, id);
      });
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
