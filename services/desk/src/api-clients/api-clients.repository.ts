import { listCountSql, sqlRows } from '@msp/db';
import { listWindow, type PageRequest } from '@msp/http';
import type { Db } from '../db';
import { Prisma, type ApiClient as ApiClientRow } from '../generated/prisma/client';
import { lists } from '../shared/lists';
import type { ApiClient } from './api-client.schemas';

function toApiClient(row: ApiClientRow, now = new Date()): ApiClient {
  const graceLeft = row.previousSecretHash !== null && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now;
  return {
    id: row.id,
    client_id: row.clientId,
    name: row.name,
    scopes: row.scopes,
    previous_secret_expires_at: graceLeft ? row.previousSecretExpiresAt!.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// A tenant's live clients only: deleted clients (revoked_at) and service clients (no tenant) are
// invisible to this API.
const live = (tenantId: string) => ({ tenantId, revokedAt: null });

export function createApiClientsAdminRepository(db: Db) {
  return {
    /**
     * Newest first, off (tenant_id, created_at, id) (deleted clients, few, are skipped on the way);
     * the total from list_counts (live = 'true'). An `after` may name a client deleted during a walk.
     */
    async list(tenantId: string, page: PageRequest): Promise<{ items: ApiClient[]; total: number }> {
      const found = await lists.keysetListPage<ApiClientRow>(
        sqlRows(db),
        listWindow(page),
        {
          table: 'api_clients',
          select: Prisma.raw(
            `id, tenant_id AS "tenantId", client_id AS "clientId", name, scopes, previous_secret_hash AS "previousSecretHash", ` +
              `previous_secret_expires_at AS "previousSecretExpiresAt", created_at AS "createdAt", updated_at AS "updatedAt"`,
          ),
          scope: Prisma.sql`tenant_id = ${tenantId}::uuid`,
          filters: [Prisma.sql`revoked_at IS NULL`],
          columns: ['created_at', 'id'],
          direction: 'desc',
          total: listCountSql(tenantId, 'api_clients', { dimension: 'live', value: 'true' }),
        },
      );
      return { items: found.items.map((row) => toApiClient(row)), total: found.total };
    },

    async findById(tenantId: string, id: string): Promise<ApiClient | null> {
      const row = await db.apiClient.findFirst({ where: { id, ...live(tenantId) } });
      return row && toApiClient(row);
    },

    async create(tenantId: string, input: { clientId: string; secretHash: string; name: string; scopes: string[] }): Promise<ApiClient> {
      return toApiClient(await db.apiClient.create({ data: { tenantId, ...input } }));
    },

    /** A tenant and its first client in one transaction; throws a unique violation when the slug is taken. */
    async createTenant(slug: string, client: { clientId: string; secretHash: string; name: string; scopes: string[] }): Promise<{ tenantId: string; client: ApiClient }> {
      return db.$transaction(async (tx) => {
        const tenant = await tx.tenant.create({ data: { slug, name: slug }, select: { id: true } });
        return { tenantId: tenant.id, client: toApiClient(await tx.apiClient.create({ data: { tenantId: tenant.id, ...client } })) };
      });
    },

    /** Soft delete (refresh tokens point at the row) and revocation of every refresh token, in one transaction. */
    async delete(tenantId: string, id: string): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const now = new Date();
        const deleted = await tx.apiClient.updateMany({ where: { id, ...live(tenantId) }, data: { revokedAt: now, previousSecretHash: null, previousSecretExpiresAt: null } });
        if (deleted.count !== 1) return false;
        await tx.refreshToken.updateMany({ where: { apiClientId: id, revokedAt: null }, data: { revokedAt: now } });
        return true;
      });
    },

    /**
     * Replaces the secret. With a grace period the replaced hash stays valid until then; without
     * one it is dropped at once (and so is any older secret still in its grace period).
     */
    async rotateSecret(tenantId: string, id: string, secretHash: string, graceSeconds: number): Promise<ApiClient | null> {
      return db.$transaction(async (tx) => {
        const current = await tx.apiClient.findFirst({ where: { id, ...live(tenantId) } });
        if (!current) return null;
        const now = new Date();
        const keepOld = graceSeconds > 0;
        const updated = await tx.apiClient.updateMany({
          // Compare-and-swap on the hash: of two concurrent rotations, the second finds nothing to replace.
          where: { id, ...live(tenantId), secretHash: current.secretHash },
          data: {
            secretHash,
            previousSecretHash: keepOld ? current.secretHash : null,
            previousSecretExpiresAt: keepOld ? new Date(now.getTime() + graceSeconds * 1000) : null,
          },
        });
        if (updated.count !== 1) return null;
        return toApiClient(await tx.apiClient.findUniqueOrThrow({ where: { id } }), now);
      });
    },
  };
}

export type ApiClientsAdminRepository = ReturnType<typeof createApiClientsAdminRepository>;
