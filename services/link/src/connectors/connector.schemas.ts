import { Type, type Static } from '@sinclair/typebox';
import { DateTime, keysetQueryProperties, named, pageQueryProperties, pageSchema, strictObject, stringEnum, Uuid } from '@msp/http';

export const CONNECTOR_TYPES = ['scim'] as const;

const baseUrl = Type.String({
  // An http(s) URL and nothing else: the connector calls it with the bearer token.
  pattern: '^https?://[^\\s/?#]+[^\\s]*$',
  format: 'uri',
  maxLength: 2000,
  description: 'The SCIM 2.0 service provider\'s base URL (its `/Users` and `/Groups` are below it), http or https.',
  examples: ['https://scim.contoso.example/scim/v2'],
});
const bearerToken = Type.String({
  minLength: 1,
  maxLength: 4096,
  writeOnly: true,
  description: 'The bearer token link sends to the directory. Write-only: stored encrypted (AES-256-GCM), never returned or logged.',
  examples: ['<the directory\'s SCIM token>'],
});

export const ScimConfigInput = strictObject(
  { base_url: baseUrl, bearer_token: bearerToken },
  { description: 'How to reach the SCIM directory.' },
);

export const Connector = named(
  'Connector',
  Type.Object(
    {
      id: Uuid(),
      tenant_id: Uuid({ description: 'The managed tenant whose directory this is.' }),
      type: stringEnum(CONNECTOR_TYPES, { description: '`scim`: a SCIM 2.0 client (RFC 7643/7644).' }),
      name: Type.String(),
      enabled: Type.Boolean({ description: 'Disabled connectors are kept but neither synchronised nor used by onboarding and offboarding.' }),
      config: Type.Object(
        {
          base_url: Type.String({ description: 'The SCIM base URL.' }),
          bearer_token_set: Type.Boolean({ description: 'Always true: a token is stored (encrypted); it is never returned.' }),
        },
        { additionalProperties: false },
      ),
      created_at: DateTime(),
      updated_at: DateTime(),
    },
    {
      additionalProperties: false,
      description: 'How link reaches a managed tenant\'s directory.',
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
      type: stringEnum(CONNECTOR_TYPES),
      name: Type.String({ minLength: 1, maxLength: 200 }),
      enabled: Type.Optional(Type.Boolean({ default: true })),
      config: ScimConfigInput,
    },
    {
      examples: [
        {
          tenant_id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
          type: 'scim',
          name: 'Contoso Entra ID',
          config: { base_url: 'https://scim.contoso.example/scim/v2', bearer_token: '<the directory\'s SCIM token>' },
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
      config: Type.Optional(
        strictObject(
          { base_url: Type.Optional(baseUrl), bearer_token: Type.Optional(bearerToken) },
          { description: 'Either or both; an omitted member keeps its value.' },
        ),
      ),
    },
    { minProperties: 1, examples: [{ enabled: false }, { config: { bearer_token: '<a new token>' } }] },
  ),
);
export type UpdateConnectorBody = Static<typeof UpdateConnectorBody>;

export const ListConnectorsQuery = strictObject({
  ...pageQueryProperties,
  ...keysetQueryProperties,
  include_disabled: Type.Optional(Type.Boolean({ default: false, description: 'Also list disabled connectors (by default only enabled ones are listed).' })),
  tenant_id: Type.Optional(Uuid({ description: 'Only the connectors of this managed tenant.' })),
});
export type ListConnectorsQuery = Static<typeof ListConnectorsQuery>;
