import { conflict, notFound, type PageRequest } from '@msp/http';
import { unlessDuplicate } from '../db';
import type { Repositories, Store } from '../store';
import type { NewUser, User, UserChanges } from './user.schemas';
import type { UserWrite } from './users.repository';

const userNotFound = () => notFound('No active user with this id exists in your tenant.');
const emailTaken = (email: string) => () =>
  conflict(`A user with the e-mail address "${email}" already exists in your tenant.`, { code: 'duplicate-user' });

/** Unassigns the tickets still being worked on by a user just deactivated: a `ticket.updated` for each. */
async function unassignOpenTickets(tx: Repositories, tenantId: string, userId: string) {
  for (const ticket of await tx.tickets.unassignOpen(tenantId, userId)) {
    // The tickets unassigned are exactly those that were assigned to the user.
    await tx.events.record({
      type: 'ticket.updated',
      tenantId,
      resourceType: 'ticket',
      resourceId: ticket.id,
      object: ticket,
      before: { ...ticket, assignee_id: userId },
    });
  }
}

/** The fields of `changes` that differ from the user, in the repository's terms; `active` brings `deactivated_at` along. */
function differences(user: User, changes: UserChanges, now: Date): UserWrite {
  const diff: UserWrite = {};
  if (changes.name !== undefined && changes.name !== user.name) diff.name = changes.name;
  // Addresses compare case-insensitively (citext), as their uniqueness does; a new spelling is a change.
  if (changes.email !== undefined && changes.email !== user.email) diff.email = changes.email;
  if (changes.role !== undefined && changes.role !== user.role) diff.role = changes.role;
  if (changes.active !== undefined && changes.active !== user.active) {
    diff.active = changes.active;
    diff.deactivatedAt = changes.active ? null : now;
  }
  return diff;
}

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
        await tx.events.record({
          type: 'user.created',
          tenantId,
          resourceType: 'user',
          resourceId: user.id,
          object: user,
        });
        return user;
      });
      return unlessDuplicate(created, emailTaken(input.email));
    },

    /**
     * Applies the changes that differ from the user, active or not; asking for what the user
     * already is changes nothing, not even `updated_at`, and records no event. `active: false`
     * deactivates as DELETE does (their open tickets are unassigned, each recording its
     * `ticket.updated`); `active: true` reactivates. Records `user.updated` with the changes.
     */
    update(tenantId: string, id: string, changes: UserChanges): Promise<User> {
      const updated = store.transaction(async (tx) => {
        const before = await tx.users.findForUpdate(tenantId, id);
        if (!before) throw notFound('No user with this id exists in your tenant.');
        const diff = differences(before, changes, new Date());
        if (Object.keys(diff).length === 0) return before;
        const after = await tx.users.update(tenantId, id, diff);
        await tx.events.record({
          type: 'user.updated',
          tenantId,
          resourceType: 'user',
          resourceId: id,
          object: after,
          before,
        });
        if (diff.active === false) await unassignOpenTickets(tx, tenantId, id);
        return after;
      });
      return unlessDuplicate(updated, emailTaken(changes.email ?? ''));
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
        await tx.events.record({
          type: 'user.deactivated',
          tenantId,
          resourceType: 'user',
          resourceId: id,
          object: user,
          before,
        });
        await unassignOpenTickets(tx, tenantId, id);
      });
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
