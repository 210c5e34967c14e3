import type { Db } from '../db';

export interface RunTenant {
  id: string;
  domain: string;
  clientId: string;
  status: 'active' | 'suspended';
}

const columns = { id: true, domain: true, clientId: true, status: true } as const;

/** The managed tenants as onboarding and offboarding look them up (by id, or by an e-mail's domain). */
export function createRunTenantsRepository(db: Db) {
  return {
    async findById(ownerTenantId: string, id: string): Promise<RunTenant | null> {
      return db.managedTenant.findFirst({ where: { id, ownerTenantId }, select: columns });
    },

    async findByDomain(ownerTenantId: string, domain: string): Promise<RunTenant | null> {
      return db.managedTenant.findFirst({ where: { ownerTenantId, domain: domain.toLowerCase() }, select: columns });
    },

  };
}

export type RunTenantsRepository = ReturnType<typeof createRunTenantsRepository>;
