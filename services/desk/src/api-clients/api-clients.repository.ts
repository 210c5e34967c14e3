import { inListOrder, listCount, type ListOrder } from '@msp/db';
import type { PageRequest } from '@msp/http';
import type { Selectable } from 'kysely';
import type { Db } from '../db';
import type { ApiClient as ApiClientRow } from '../generated/kysely/database';
import { pageOfList } from '../shared/lists';
import type { ApiClient } from './api-client.schemas';

function toApiClient(row: Selectable<ApiClientRow>, now = new Date()): ApiClient {
  const graceLeft =
    row.previous_secret_hash !== null &&
    row.previous_secret_expires_at !== null &&
    row.previous_secret_expires_at > now;
  return {
    id: row.id,
    client_id: row.client_id,
    name: row.name,
    scopes: row.scopes,
    previous_secret_expires_at: graceLeft ? row.previous_secret_expires_at!.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Newest first, off (tenant_id, created_at, id). */
const ORDER: ListOrder = { columns: ['created_at', 'id'], direction: 'desc' };

export function createApiClientsAdminRepository(db: Db) {
  // A tenant's live clients only: deleted clients (revoked_at) and service clients (no tenant) are
  // invisible to this API.
  const live = (on: Db, tenantId: string) =>
    on.selectFrom('api_clients').where('tenant_id', '=', tenantId).where('revoked_at', 'is', null);

  return {
    /**
     * Newest first, off (tenant_id, created_at, id) (deleted clients, few, are skipped on the way);
     * the total from list_counts (live = 'true'). An `after` may name a client deleted during a walk.
     */
    async list(tenantId: string, page: PageRequest): Promise<{ items: ApiClient[]; total: number }> {
      const scope = db.selectFrom('api_clients').where('tenant_id', '=', tenantId);
      const found = await pageOfList(page, {
        scope,
        order: ORDER,
        page: (window, afterKey) =>
          inListOrder(scope.selectAll().where('revoked_at', 'is', null), ORDER, window, afterKey).execute(),
        total: () => listCount(db, { tenantId, list: 'api_clients', dimension: 'live', value: 'true' }),
      });
      return { items: found.items.map((row) => toApiClient(row)), total: found.total };
    },

    async findById(tenantId: string, id: string): Promise<ApiClient | null> {
      const row = await live(db, tenantId).selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toApiClient(row) : null;
    },

    async create(
      tenantId: string,
      input: { clientId: string; secretHash: string; name: string; scopes: string[] },
    ): Promise<ApiClient> {
      const row = await db
        .insertInto('api_clients')
        .values({
          tenant_id: tenantId,
          client_id: input.clientId,
          secret_hash: input.secretHash,
          name: input.name,
          scopes: input.scopes,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toApiClient(row);
    },

    /** A tenant and its first client in one transaction; throws a unique violation when the slug is taken. */
    async createTenant(
      slug: string,
      client: { clientId: string; secretHash: string; name: string; scopes: string[] },
    ): Promise<{ tenantId: string; client: ApiClient }> {
      return db.transaction().execute(async (tx) => {
        const tenant = await tx
          .insertInto('tenants')
          .values({ slug, name: slug })
          .returning('id')
          .executeTakeFirstOrThrow();
        const row = await tx
          .insertInto('api_clients')
          .values({
            tenant_id: tenant.id,
            client_id: client.clientId,
            secret_hash: client.secretHash,
            name: client.name,
            scopes: client.scopes,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        return { tenantId: tenant.id, client: toApiClient(row) };
      });
    },

    /** Soft delete (refresh tokens point at the row) and revocation of every refresh token, in one transaction. */
    async delete(tenantId: string, id: string): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const now = new Date();
        const deleted = await tx
          .updateTable('api_clients')
          .set({ revoked_at: now, previous_secret_hash: null, previous_secret_expires_at: null, updated_at: now })
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (Number(deleted.numUpdatedRows) !== 1) return false;
        await tx
          .updateTable('refresh_tokens')
          .set({ revoked_at: now })
          .where('api_client_id', '=', id)
          .where('revoked_at', 'is', null)
          .execute();
        return true;
      });
    },

    /**
     * Replaces the secret. With a grace period the replaced hash stays valid until then; without
     * one it is dropped at once (and so is any older secret still in its grace period).
     */
    async rotateSecret(
      tenantId: string,
      id: string,
      secretHash: string,
      graceSeconds: number,
    ): Promise<ApiClient | null> {
      return db.transaction().execute(async (tx) => {
        const current = await live(tx, tenantId).select('secret_hash').where('id', '=', id).executeTakeFirst();
        if (!current) return null;
        const now = new Date();
        const keepOld = graceSeconds > 0;
        // Compare-and-swap on the hash: of two concurrent rotations, the second finds nothing to replace.
        const updated = await tx
          .updateTable('api_clients')
          .set({
            secret_hash: secretHash,
            previous_secret_hash: keepOld ? current.secret_hash : null,
            previous_secret_expires_at: keepOld ? new Date(now.getTime() + graceSeconds * 1000) : null,
            updated_at: now,
          })
          .where('id', '=', id)
          .where('tenant_id', '=', tenantId)
          .where('revoked_at', 'is', null)
          .where('secret_hash', '=', current.secret_hash)
          .returningAll()
          .executeTakeFirst();
        return updated ? toApiClient(updated, now) : null;
      });
    },
  };
}

export type ApiClientsAdminRepository = ReturnType<typeof createApiClientsAdminRepository>;
