import { inListOrder, listCount, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import type { Selectable } from 'kysely';
import type { Db } from '../db';
import type { User as UserRow } from '../generated/kysely/database';
import { pageOfList } from '../shared/lists';
import type { NewUser, User } from './user.schemas';

function toUser(row: Selectable<UserRow>): User {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    role: row.role,
    active: row.active,
    deactivated_at: row.deactivated_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** What a change writes: the fields that differ, in the columns' terms. */
export interface UserWrite {
  name?: string;
  email?: string;
  role?: User['role'];
  active?: boolean;
  deactivatedAt?: Date | null;
}

/** Newest first, off (tenant_id, active, created_at, id). */
const ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'desc' };

/** `reads`: where the list's page and total are read (the read replica with DATABASE_READ_URL); the rest reads `db`. */
export function createUsersRepository(db: Db, reads: Db = db) {
  return {
    /**
     * Active users only: a deactivated user has left the list. Newest first, off (tenant_id,
     * active, created_at, id); the total from list_counts (active = 'true'). An `after` may name
     * any user of the tenant: one deactivated during a walk still marks its place.
     */
    async listActive(tenantId: string, page: PageRequest): Promise<{ items: User[]; total: number }> {
      const scope = reads.selectFrom('users').where('tenant_id', '=', tenantId);
      const found = await pageOfList(page, {
        scope,
        order: ORDER,
        page: (window, afterKey) =>
          inListOrder(scope.selectAll().where('active', '=', true), ORDER, window, afterKey).execute(),
        total: () => listCount(reads, { tenantId, list: 'users', dimension: 'active', value: 'true' }),
      });
      return { items: found.items.map(toUser), total: found.total };
    },

    /** Active or not: history refers to deactivated users too. */
    async findById(tenantId: string, id: string): Promise<User | null> {
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .executeTakeFirst();
      return row ? toUser(row) : null;
    },

    /**
     * Whether the user is active, holding a share lock until the transaction ends: a concurrent
     * deactivation waits, and then unassigns what this transaction assigned.
     */
    async isActiveLocked(tenantId: string, id: string): Promise<boolean> {
      const found = await db
        .selectFrom('users')
        .select('id')
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('active', '=', true)
        .forShare()
        .executeTakeFirst();
      return found !== undefined;
    },

    /** Throws a unique violation when the tenant already has a user with that e-mail address. */
    async create(tenantId: string, user: NewUser): Promise<User> {
      return toUser(
        await db
          .insertInto('users')
          .values({ ...user, tenant_id: tenantId })
          .returningAll()
          .executeTakeFirstOrThrow(),
      );
    },

    /** Reads the user, active or not, and locks it until the transaction ends, so changes to one user queue. */
    async findForUpdate(tenantId: string, id: string): Promise<User | null> {
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .forUpdate()
        .executeTakeFirst();
      return row ? toUser(row) : null;
    },

    /** Throws a unique violation when the new e-mail address is taken in the tenant. */
    async update(tenantId: string, id: string, changes: UserWrite): Promise<User> {
      const { deactivatedAt, ...fields } = changes;
      const row = await db
        .updateTable('users')
        .set({ ...fields, deactivated_at: deactivatedAt, updated_at: new Date() })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toUser(row);
    },

    /** The user as deactivated, or null when there is no active user of that id in the tenant. */
    async deactivate(tenantId: string, id: string): Promise<User | null> {
      const now = new Date();
      const row = await db
        .updateTable('users')
        .set({ active: false, deactivated_at: now, updated_at: now })
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('active', '=', true)
        .returningAll()
        .executeTakeFirst();
      return row ? toUser(row) : null;
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
