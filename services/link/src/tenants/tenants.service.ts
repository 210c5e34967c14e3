import { changesBetween } from '@msp/events';
import { conflict, listWindow, notFound, type PageRequest } from '@msp/http';
import { linkEvents } from '../events/link-events';
import { tenantJson } from './tenant.mapper';
import {
  DuplicateDomainError,
  type NewTenant,
  type TenantFilter,
  type TenantRecord,
  type TenantsRepository,
} from './tenants.repository';

export function createTenantsService(tenants: TenantsRepository) {
  return {
    list(ownerTenantId: string, filter: TenantFilter, page: PageRequest) {
      return tenants.list(ownerTenantId, filter, listWindow(page));
    },

    async get(ownerTenantId: string, id: string): Promise<TenantRecord> {
      const tenant = await tenants.findById(ownerTenantId, id);
      // Another owner's tenant is as unknown as a missing one: no existence leaks across tenants.
      if (!tenant) throw notFound(`No managed tenant ${id}.`);
      return tenant;
    },

    /** `tenant.updated` is recorded only when a field changed. */
    async update(
      ownerTenantId: string,
      id: string,
      changes: { name?: string; status?: TenantRecord['status'] },
    ): Promise<TenantRecord> {
      const tenant = await tenants.update(ownerTenantId, id, changes, async (tx, { before, after }) => {
        const [was, is] = [tenantJson(before), tenantJson(after)];
        if (Object.keys(changesBetween(was, is)).length === 0) return;
        await linkEvents.record(tx, {
          type: 'tenant.updated',
          tenantId: ownerTenantId,
          resourceType: 'tenant',
          resourceId: id,
          object: is,
          before: was,
        });
      });
      if (!tenant) throw notFound(`No managed tenant ${id}.`);
      return tenant;
    },

    async register(ownerTenantId: string, input: NewTenant): Promise<TenantRecord> {
      // DNS names are case-insensitive: one spelling is stored, so uniqueness holds however it is typed.
      const domain = input.domain.toLowerCase();
      try {
        return await tenants.create(ownerTenantId, { ...input, domain }, (tx, tenant) =>
          linkEvents.record(tx, {
            type: 'tenant.created',
            tenantId: ownerTenantId,
            resourceType: 'tenant',
            resourceId: tenant.id,
            object: tenantJson(tenant),
          }),
        );
      } catch (error) {
        if (error instanceof DuplicateDomainError) {
          throw conflict(`A managed tenant with domain ${domain} is already registered.`, {
            errors: [{ field: 'domain', message: 'is already registered' }],
          });
        }
        throw error;
      }
    },
  };
}

export type TenantsService = ReturnType<typeof createTenantsService>;
