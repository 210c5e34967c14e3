import { changesBetween } from '@msp/events';
import { violatedUniqueConstraint, type Db } from '../db';
import { lockRow, recordLinkEvent } from '../events/link-events';
import { tenantJson, type TenantStatus } from './tenant.schemas';

export interface TenantRecord {
  id: string;
  name: string;
  domain: string;
  clientId: string;
  status: TenantStatus;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewTenant {
  name: string;
  domain: string;
  clientId: string;
  status: TenantStatus;
}

export interface TenantFilter {
  status?: TenantStatus;
  clientId?: string;
}

/** The owner already manages a tenant with this domain. */
export class DuplicateDomainError extends Error {
  constructor(readonly domain: string) {
    super(`duplicate managed tenant domain ${domain}`);
    this.name = 'DuplicateDomainError';
  }
}

// Named in the migration by Prisma's convention for @@unique([ownerTenantId, domain]).
const DOMAIN_PER_OWNER_KEY = 'managed_tenants_owner_tenant_id_domain_key';

const columns = { id: true, name: true, domain: true, clientId: true, status: true, createdAt: true, updatedAt: true } as const;

/**
 * Every query is bounded by the owner, the MSP tenant named by the caller's token: another
 * owner's rows are simply not found.
 */
export function createTenantsRepository(db: Db) {
  return {
    async list(ownerTenantId: string, filter: TenantFilter, window: { skip: number; take: number }): Promise<{ items: TenantRecord[]; total: number }> {
      const where = { ownerTenantId, status: filter.status, clientId: filter.clientId };
      const [items, total] = await db.$transaction([
        db.managedTenant.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], select: columns, ...window }),
        db.managedTenant.count({ where }),
      ]);
      return { items, total };
    },

    async findById(ownerTenantId: string, id: string): Promise<TenantRecord | null> {
      return db.managedTenant.findFirst({ where: { id, ownerTenantId }, select: columns });
    },

    /** Null when the owner has no such tenant. `tenant.updated` is recorded only when a field changed. */
    update(ownerTenantId: string, id: string, changes: { name?: string; status?: TenantStatus }): Promise<TenantRecord | null> {
      return db.$transaction(async (tx) => {
        const before = (await lockRow(tx, 'managed_tenants', id)) && (await tx.managedTenant.findFirst({ where: { id, ownerTenantId }, select: columns }));
        if (!before) return null;
        const after = await tx.managedTenant.update({ where: { id }, data: changes, select: columns });
        if (Object.keys(changesBetween(tenantJson(before), tenantJson(after))).length) {
          await recordLinkEvent(tx, { type: 'tenant.updated', tenantId: ownerTenantId, resourceType: 'tenant', resourceId: id, object: tenantJson(after), before: tenantJson(before) });
        }
        return after;
      });
    },

    async create(ownerTenantId: string, input: NewTenant): Promise<TenantRecord> {
      try {
        return await db.$transaction(async (tx) => {
          const tenant = await tx.managedTenant.create({ data: { ownerTenantId, ...input }, select: columns });
          await recordLinkEvent(tx, { type: 'tenant.created', tenantId: ownerTenantId, resourceType: 'tenant', resourceId: tenant.id, object: tenantJson(tenant) });
          return tenant;
        });
      } catch (error) {
        if (violatedUniqueConstraint(error) === DOMAIN_PER_OWNER_KEY) throw new DuplicateDomainError(input.domain);
        throw error;
      }
    },
  };
}

export type TenantsRepository = ReturnType<typeof createTenantsRepository>;
