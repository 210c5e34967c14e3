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

const columnsOf = (token: NewRefreshToken) => ({
  tenant_id: token.tenantId,
  api_client_id: token.apiClientId,
  family_id: token.familyId,
  token_hash: token.tokenHash,
  scope: token.scope,
  expires_at: token.expiresAt,
});

export function createRefreshTokensRepository(db: Db) {
  return {
    async findByHash(tokenHash: string): Promise<RefreshTokenRecord | null> {
      const row = await db
        .selectFrom('refresh_tokens')
        .select([
          'id',
          'tenant_id as tenantId',
          'api_client_id as apiClientId',
          'family_id as familyId',
          'scope',
          'expires_at as expiresAt',
          'used_at as usedAt',
          'revoked_at as revokedAt',
        ])
        .where('token_hash', '=', tokenHash)
        .executeTakeFirst();
      return row ?? null;
    },

    async create(token: NewRefreshToken): Promise<{ id: string }> {
      return db.insertInto('refresh_tokens').values(columnsOf(token)).returning('id').executeTakeFirstOrThrow();
    },

    /**
     * Spends a refresh token and stores its successor atomically. Answers false
     * when the token was already spent or revoked, including by a concurrent
     * request that won the race: the caller treats that as reuse.
     */
    async rotate(oldId: string, successor: NewRefreshToken): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const spent = await tx
          .updateTable('refresh_tokens')
          .set({ used_at: new Date() })
          .where('id', '=', oldId)
          .where('used_at', 'is', null)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (Number(spent.numUpdatedRows) !== 1) return false;
        const created = await tx
          .insertInto('refresh_tokens')
          .values(columnsOf(successor))
          .returning('id')
          .executeTakeFirstOrThrow();
        await tx.updateTable('refresh_tokens').set({ replaced_by_id: created.id }).where('id', '=', oldId).execute();
        return true;
      });
    },

    async revokeFamily(familyId: string): Promise<number> {
      const result = await db
        .updateTable('refresh_tokens')
        .set({ revoked_at: new Date() })
        .where('family_id', '=', familyId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type RefreshTokensRepository = ReturnType<typeof createRefreshTokensRepository>;
