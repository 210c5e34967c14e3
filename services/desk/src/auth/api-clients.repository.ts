import type { Db } from '../db';

export interface ApiClientRecord {
  id: string;
  /** null: a service client, which names the tenant in each token request. */
  tenantId: string | null;
  clientId: string;
  secretHash: string;
  /** The replaced secret's hash after a rotation, accepted until previousSecretExpiresAt. */
  previousSecretHash: string | null;
  previousSecretExpiresAt: Date | null;
  name: string;
  scopes: string[];
  revokedAt: Date | null;
}

export function createApiClientsRepository(db: Db) {
  return {
    findByClientId(clientId: string): Promise<ApiClientRecord | null> {
      return db.apiClient.findUnique({ where: { clientId } });
    },

    async ensureTenant(slug: string, name: string): Promise<{ id: string; slug: string }> {
      return db.tenant.upsert({ where: { slug }, create: { slug, name }, update: {}, select: { id: true, slug: true } });
    },

    async tenantExists(tenantId: string): Promise<boolean> {
      return (await db.tenant.count({ where: { id: tenantId } })) > 0;
    },

    async countInTenant(tenantId: string): Promise<number> {
      return db.apiClient.count({ where: { tenantId } });
    },

    /** Creates the client, or brings an existing one to the given secret and scopes. */
    async upsert(input: { tenantId: string | null; clientId: string; secretHash: string; name: string; scopes: string[] }): Promise<ApiClientRecord> {
      return db.apiClient.upsert({
        where: { clientId: input.clientId },
        create: input,
        update: { tenantId: input.tenantId, secretHash: input.secretHash, name: input.name, scopes: input.scopes, revokedAt: null },
      });
    },
  };
}

export type ApiClientsRepository = ReturnType<typeof createApiClientsRepository>;
