import { isoOf, listCountSql, sqlRows, type Queryable } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { DbTx } from '../db';
import { Prisma, type User as UserRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { NewUser, User } from './user.schemas';

function toUser(row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    role: row.role,
    active: row.active,
    deactivated_at: isoOf(row.deactivatedAt ?? null),
    created_at: isoOf(row.createdAt),
    updated_at: isoOf(row.updatedAt),
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

/** `connection`: where the SQL of `isActiveLocked` runs when given (the pool); inside a transaction, through it. */
/** `reads`: where the list's page and total are read when given (the read replica's pool, DATABASE_READ_URL); the rest reads the primary. */
export function createUsersRepository(db: DbTx, connection?: Queryable, reads?: Queryable) {
  const rows = sqlRows(db, connection);
  return {
    /** Active users only: a deactivated user has left the list. */
    /**
     * Newest first, off (tenant_id, active, created_at, id); the total from list_counts (active =
     * 'true'). An `after` may name any user of the tenant: one deactivated during a walk still marks its place.
     */
    async listActive(tenantId: string, page: PageRequest): Promise<{ items: User[]; total: number }> {
      const found = await lists.keysetListPage<UserRow>(
        sqlRows(db, reads),
        listWindow(page),
        {
          table: 'users',
          select: Prisma.raw(`id, tenant_id AS "tenantId", name, email::text AS email, role::text AS role, active, deactivated_at AS "deactivatedAt", created_at AS "createdAt", updated_at AS "updatedAt"`),
          scope: Prisma.sql`tenant_id = ${tenantId}::uuid`,
          filters: [Prisma.sql`active`],
          columns: ['created_at', 'id'],
          direction: 'desc',
          total: listCountSql(tenantId, 'users', { dimension: 'active', value: 'true' }),
        },
      );
      return { items: found.items.map(toUser), total: found.total };
    },

    /** Active or not: history refers to deactivated users too. */
    async findById(tenantId: string, id: string): Promise<User | null> {
      const row = await db.user.findFirst({ where: { id, tenantId } });
      return row && toUser(row);
    },

    /**
     * Whether the user is active, holding a share lock until the transaction ends: a concurrent
     * deactivation waits, and then unassigns what this transaction assigned.
     */
    async isActiveLocked(tenantId: string, id: string): Promise<boolean> {
      const found = await rows(Prisma.sql`
        SELECT id FROM users WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid AND active FOR SHARE`);
      return found.length > 0;
    },

    /** Throws a unique violation when the tenant already has a user with that e-mail address. */
    async create(tenantId: string, user: NewUser): Promise<User> {
      return toUser(await db.user.create({ data: { ...user, tenantId } }));
    },

    /** Reads the user, active or not, and locks it until the transaction ends, so changes to one user queue. */
    async findForUpdate(tenantId: string, id: string): Promise<User | null> {
      const [row] = await db.$queryRaw<UserRow[]>`
        SELECT id, tenant_id AS "tenantId", name, email::text AS email, role::text AS role, active, deactivated_at AS "deactivatedAt",
               created_at AS "createdAt", updated_at AS "updatedAt"
          FROM users WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
      return row ? toUser(row) : null;
    },

    /** Throws a unique violation when the new e-mail address is taken in the tenant. */
    async update(tenantId: string, id: string, changes: UserWrite): Promise<User> {
      return toUser(await db.user.update({ where: { id, tenantId }, data: changes }));
    },

    /** The user as deactivated, or null when there is no active user of that id in the tenant. */
    async deactivate(tenantId: string, id: string): Promise<User | null> {
      const [row] = await db.user.updateManyAndReturn({ where: { id, tenantId, active: true }, data: { active: false, deactivatedAt: new Date() } });
      return row ? toUser(row) : null;
    },
  };
}

export type UsersRepository = ReturnType<typeof createUsersRepository>;
