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
      const created = store.transaction(async (tx) => {
        const user = await tx.users.create(tenantId, input);
        await tx.events.record({ type: 'user.created', tenantId, resourceType: 'user', resourceId: user.id, object: user });
        return user;
      });
      return unlessDuplicate(created, () =>
        conflict(`A user with the e-mail address "${input.email}" already exists in your tenant.`, { code: 'duplicate-user' }),
      );
    },

    /**
     * Deactivates the user and, in the same transaction, unassigns the tickets still being worked
     * on: one `user.deactivated`, and a `ticket.updated` for each ticket it unassigned.
     */
    async deactivate(tenantId: string, id: string): Promise<void> {
      await store.transaction(async (tx) => {
        const before = await tx.users.findById(tenantId, id);
        const user = before && (await tx.users.deactivate(tenantId, id));
        if (!before || !user) throw userNotFound();
        await tx.events.record({ type: 'user.deactivated', tenantId, resourceType: 'user', resourceId: id, object: user, before });
        for (const ticket of await tx.tickets.unassignOpen(tenantId, id)) {
          // The tickets unassigned are exactly those that were assigned to the user.
          await tx.events.record({ type: 'ticket.updated', tenantId, resourceType: 'ticket', resourceId: ticket.id, object: ticket, before: { ...ticket, assignee_id: id } });
        }
      });
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
