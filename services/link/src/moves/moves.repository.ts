import type { Db } from '../db';

/** What a new move is checked against beyond its own table: the user's leaving, if scheduled. */
export function createMoveChecksRepository(db: Db) {
  return {
    /** The last day (YYYY-MM-DD) of the user's offboarding that is still scheduled or in progress, or null. */
    async scheduledLastDay(ownerTenantId: string, userId: string): Promise<string | null> {
      const offboarding = await db
        .selectFrom('offboardings')
        .select('last_day')
        .where('owner_tenant_id', '=', ownerTenantId)
        .where('user_id', '=', userId)
        .where('status', 'in', ['scheduled', 'in_progress'])
        .orderBy('last_day', 'asc')
        .limit(1)
        .executeTakeFirst();
      return offboarding?.last_day ?? null;
    },
  };
}

export type MoveChecksRepository = ReturnType<typeof createMoveChecksRepository>;
