import { Type, type Static } from '@sinclair/typebox';
import {
  DateTime,
  keysetQueryProperties,
  named,
  pageQueryProperties,
  pageSchema,
  strictObject,
  stringEnum,
  Uuid,
} from '@msp/http';

/** `suspended` keeps the record (and, later, its connectors) but stops link acting on the directory. */
export const TENANT_STATUSES = ['active', 'suspended'] as const;
export type TenantStatus = (typeof TENANT_STATUSES)[number];

const domain = (options: { description: string }) =>
  Type.String({
    // `hostname` alone would take single labels ("contoso") and a trailing dot; a directory's
    // domain is a registered name such as contoso.onmicrosoft.com.
    format: 'hostname',
    pattern: '\\.[A-Za-z0-9-]+$',
    maxLength: 253,
    examples: ['contoso.onmicrosoft.com'],
    ...options,
  });

export const Tenant = named(
  'Tenant',
  Type.Object(
    {
      id: Uuid(),
      name: Type.String({ description: 'Display name, e.g. the client company and the directory product.' }),
      domain: Type.String({
        description: 'Primary DNS domain of the directory, in lower case; unique among your managed tenants.',
      }),
      client_id: Uuid({ description: 'The helpdesk client (customer company) this directory belongs to.' }),
      status: stringEnum(TENANT_STATUSES, { description: '`active`, or `suspended` (kept, but not acted on).' }),
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description:
        'A customer directory (e.g. a Microsoft 365 or Google Workspace tenant of one client) that your tenant administers.',
      examples: [
        {
          id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          name: 'Contoso (Microsoft 365)',
          domain: 'contoso.onmicrosoft.com',
          client_id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
          status: 'active',
          created_at: '2026-11-02T10:05:00.000Z',
          updated_at: '2026-11-02T10:05:00.000Z',
        },
      ],
    },
  ),
);
export type TenantJson = Static<typeof Tenant>;

export const TenantPage = pageSchema('TenantPage', Tenant);

export const CreateTenantBody = named(
  'CreateTenantRequest',
  strictObject(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      domain: domain({
        description: 'Primary DNS domain of the directory (at least two labels); compared and stored in lower case.',
      }),
      client_id: Uuid({ description: 'Id of the helpdesk client the directory belongs to; stored as given.' }),
      status: Type.Optional(stringEnum(TENANT_STATUSES, { default: 'active' })),
    },
    {
      examples: [
        {
          name: 'Contoso (Microsoft 365)',
          domain: 'contoso.onmicrosoft.com',
          client_id: 'c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
        },
      ],
    },
  ),
);
export type CreateTenantBody = Static<typeof CreateTenantBody>;

export const UpdateTenantBody = named(
  'UpdateTenantRequest',
  strictObject(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      status: Type.Optional(
        stringEnum(TENANT_STATUSES, {
          description: '`suspended` keeps the tenant but stops link acting on its directory.',
        }),
      ),
    },
    { minProperties: 1, examples: [{ status: 'suspended' }, { name: 'Contoso (Microsoft 365)' }] },
  ),
);
export type UpdateTenantBody = Static<typeof UpdateTenantBody>;

export const ListTenantsQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  status: Type.Optional(stringEnum(TENANT_STATUSES, { description: 'Only tenants in this status.' })),
  client_id: Type.Optional(Uuid({ description: 'Only the tenants of this helpdesk client.' })),
});
export type ListTenantsQuery = Static<typeof ListTenantsQuery>;
