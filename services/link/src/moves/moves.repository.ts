import type { Db } from '../db';

/** What a new move is checked against beyond its own table: the user's leaving, if scheduled. */
export function createMoveChecksRepository(db: Db) {
  return {
    /** The last day of the user's offboarding that is still scheduled or in progress, or null. */
    async scheduledLastDay(ownerTenantId: string, userId: string): Promise<Date | null> {
      const offboarding = await db.offboarding.findFirst({
        where: { ownerTenantId, userId, status: { in: ['scheduled', 'in_progress'] } },
        select: { lastDay: true },
        orderBy: { lastDay: 'asc' },
      });
      return offboarding?.lastDay ?? null;
    },
  };
}

export type MoveChecksRepository = ReturnType<typeof createMoveChecksRepository>;
