// The API JSON of a record, for the answers and the events alike. Beside the schema, not in it:
// a schema file imports no repository, and a repository builds no API JSON.
import type { TenantJson } from './tenant.schemas';
import type { TenantRecord } from './tenants.repository';

/** A managed tenant as the API shows it: the answers and the events' `object` alike. */
export function tenantJson(tenant: TenantRecord): TenantJson {
  return {
    id: tenant.id,
    name: tenant.name,
    domain: tenant.domain,
    client_id: tenant.clientId,
    status: tenant.status,
    created_at: tenant.createdAt.toISOString(),
    updated_at: tenant.updatedAt.toISOString(),
  };
}
