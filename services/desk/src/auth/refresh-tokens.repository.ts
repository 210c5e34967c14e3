import type { Db } from '../db';

export interface RefreshTokenRecord {
  id: string;
  tenantId: string;
  apiClientId: string;
  familyId: string;
  scope: string;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
}

export interface NewRefreshToken {
  tenantId: string;
  apiClientId: string;
  familyId: string;
  tokenHash: string;
  scope: string;
  expiresAt: Date;
}

export function createRefreshTokensRepository(db: Db) {
  return {
    findByHash(tokenHash: string): Promise<RefreshTokenRecord | null> {
      return db.refreshToken.findUnique({ where: { tokenHash } });
    },

    async create(token: NewRefreshToken): Promise<{ id: string }> {
      return db.refreshToken.create({ data: token, select: { id: true } });
    },

    /**
     * Spends a refresh token and stores its successor atomically. Answers false
     * when the token was already spent or revoked, including by a concurrent
     * request that won the race: the caller treats that as reuse.
     */
    async rotate(oldId: string, successor: NewRefreshToken): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const now = new Date();
        const spent = await tx.refreshToken.updateMany({ where: { id: oldId, usedAt: null, revokedAt: null }, data: { usedAt: now } });
        if (spent.count !== 1) return false;
        const created = await tx.refreshToken.create({ data: successor, select: { id: true } });
        await tx.refreshToken.update({ where: { id: oldId }, data: { replacedById: created.id } });
        return true;
      });
    },

    async revokeFamily(familyId: string): Promise<number> {
      const result = await db.refreshToken.updateMany({ where: { familyId, revokedAt: null }, data: { revokedAt: new Date() } });
      return result.count;
    },
  };
}

export type RefreshTokensRepository = ReturnType<typeof createRefreshTokensRepository>;
