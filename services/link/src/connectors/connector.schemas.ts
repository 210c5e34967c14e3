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
import { connectorTypeNames, connectorTypes } from './connector-types';

// Every type's words joined as the one description of `type` and of `config` the OpenAPI document shows.
const describeTypes = (part: 'type' | 'config') =>
  connectorTypes.map((type) => `\`${type.type}\`: ${type.describe[part]}`).join('; ') + '.';

export const Connector = named(
  'Connector',
  Type.Object(
    {
      id: Uuid(),
      tenant_id: Uuid({ description: 'The managed tenant whose directory this is.' }),
      type: stringEnum(connectorTypeNames, { description: describeTypes('type') }),
      name: Type.String(),
      enabled: Type.Boolean({
        description: 'Disabled connectors are kept but neither synchronised nor used by onboarding and offboarding.',
      }),
      config: Type.Union(connectorTypes.map((type) => type.schemas.view)),
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: "How link reaches a managed tenant's directory.",
      examples: [
        {
          id: '3f1c2b9e-7d4a-4e5f-9a1b-2c3d4e5f6a7b',
          tenant_id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          type: 'scim',
          name: 'Contoso Entra ID',
          enabled: true,
          config: { base_url: 'https://scim.contoso.example/scim/v2', bearer_token_set: true },
          created_at: '2026-11-23T09:00:00.000Z',
          updated_at: '2026-11-23T09:00:00.000Z',
        },
      ],
    },
  ),
);
export type ConnectorJson = Static<typeof Connector>;

export const ConnectorPage = pageSchema('ConnectorPage', Connector);

export const CreateConnectorBody = named(
  'CreateConnectorRequest',
  strictObject(
    {
      tenant_id: Uuid({ description: 'One of your managed tenants.' }),
      type: stringEnum(connectorTypeNames),
      name: Type.String({ minLength: 1, maxLength: 200 }),
      enabled: Type.Optional(Type.Boolean({ default: true })),
      config: Type.Union(
        connectorTypes.map((type) => type.schemas.create),
        { description: describeTypes('config') },
      ),
    },
    {
      examples: [
        {
          tenant_id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          type: 'ldap',
          name: 'Corp Active Directory',
          config: {
            flavor: 'active_directory',
            url: 'ldaps://dc1.corp.example',
            bind_dn: 'CN=link-svc,OU=Service Accounts,DC=corp,DC=example',
            bind_password: "<the bind account's password>",
            base_dn: 'DC=corp,DC=example',
            users_ou: 'OU=Staff,DC=corp,DC=example',
            disabled_ou: 'OU=Disabled,DC=corp,DC=example',
            groups_base: 'OU=Groups,DC=corp,DC=example',
            bundle_groups: { vpn: 'CN=VPN,OU=Groups,DC=corp,DC=example' },
            upn_suffix: 'corp.example',
          },
        },
        {
          tenant_id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          type: 'scim',
          name: 'Contoso Entra ID',
          config: { base_url: 'https://scim.contoso.example/scim/v2', bearer_token: "<the directory's SCIM token>" },
        },
      ],
    },
  ),
);
export type CreateConnectorBody = Static<typeof CreateConnectorBody>;

export const UpdateConnectorBody = named(
  'UpdateConnectorRequest',
  strictObject(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      enabled: Type.Optional(Type.Boolean()),
      config: Type.Optional(Type.Union(connectorTypes.map((type) => type.schemas.patch))),
    },
    { minProperties: 1, examples: [{ enabled: false }, { config: { bearer_token: '<a new token>' } }] },
  ),
);
export type UpdateConnectorBody = Static<typeof UpdateConnectorBody>;

export const ListConnectorsQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  include_disabled: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Also list disabled connectors (by default only enabled ones are listed).',
    }),
  ),
  tenant_id: Type.Optional(Uuid({ description: 'Only the connectors of this managed tenant.' })),
});
export type ListConnectorsQuery = Static<typeof ListConnectorsQuery>;
