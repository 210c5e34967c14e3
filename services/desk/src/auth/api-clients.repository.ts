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

/** An api_clients row as an ApiClientRecord. */
const RECORD = [
  'id',
  'tenant_id as tenantId',
  'client_id as clientId',
  'secret_hash as secretHash',
  'previous_secret_hash as previousSecretHash',
  'previous_secret_expires_at as previousSecretExpiresAt',
  'name',
  'scopes',
  'revoked_at as revokedAt',
] as const;

export function createApiClientsRepository(db: Db) {
  return {
    async findByClientId(clientId: string): Promise<ApiClientRecord | null> {
      return (
        (await db.selectFrom('api_clients').select(RECORD).where('client_id', '=', clientId).executeTakeFirst()) ?? null
      );
    },

    async ensureTenant(slug: string, name: string): Promise<{ id: string; slug: string }> {
      const created = await db
        .insertInto('tenants')
        .values({ slug, name })
        .onConflict((oc) => oc.column('slug').doNothing())
        .returning(['id', 'slug'])
        .executeTakeFirst();
      return (
        created ??
        (await db.selectFrom('tenants').select(['id', 'slug']).where('slug', '=', slug).executeTakeFirstOrThrow())
      );
    },

    async tenantExists(tenantId: string): Promise<boolean> {
      return (await db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst()) !== undefined;
    },

    async countInTenant(tenantId: string): Promise<number> {
      const row = await db
        .selectFrom('api_clients')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow();
      return row.count;
    },

    /** Creates the client, or brings an existing one to the given secret and scopes. */
    async upsert(input: {
      tenantId: string | null;
      clientId: string;
      secretHash: string;
      name: string;
      scopes: string[];
    }): Promise<ApiClientRecord> {
      const now = new Date();
      return db
        .insertInto('api_clients')
        .values({
          tenant_id: input.tenantId,
          client_id: input.clientId,
          secret_hash: input.secretHash,
          name: input.name,
          scopes: input.scopes,
        })
        .onConflict((oc) =>
          oc.column('client_id').doUpdateSet({
            tenant_id: input.tenantId,
            secret_hash: input.secretHash,
            name: input.name,
            scopes: input.scopes,
            revoked_at: null,
            updated_at: now,
          }),
        )
        .returning(RECORD)
        .executeTakeFirstOrThrow();
    },
  };
}

export type ApiClientsRepository = ReturnType<typeof createApiClientsRepository>;
