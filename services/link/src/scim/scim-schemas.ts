import { Type, type Static } from '@sinclair/typebox';
import { strictObject } from '@msp/http';

// A `scim` connector's `config`: as created, as changed by PATCH, and as shown (its token only said to be set).

const baseUrl = Type.String({
  // An http(s) URL and nothing else: the connector calls it with the bearer token.
  pattern: '^https?://[^\\s/?#]+[^\\s]*$',
  format: 'uri',
  maxLength: 2000,
  description: "The SCIM 2.0 service provider's base URL (its `/Users` and `/Groups` are below it), http or https.",
  examples: ['https://scim.contoso.example/scim/v2'],
});
const bearerToken = Type.String({
  minLength: 1,
  maxLength: 4096,
  writeOnly: true,
  description:
    'The bearer token link sends to the directory. Write-only: stored encrypted (AES-256-GCM), never returned or logged.',
  examples: ["<the directory's SCIM token>"],
});

export const ScimConfigInput = strictObject(
  { base_url: baseUrl, bearer_token: bearerToken },
  { description: 'How to reach the SCIM directory.' },
);

export const ScimConfigPatch = strictObject(
  { base_url: Type.Optional(baseUrl), bearer_token: Type.Optional(bearerToken) },
  { description: '`scim` connectors: either or both; an omitted member keeps its value.' },
);

export const ScimConfigOutput = Type.Object(
  {
    base_url: Type.String({ description: 'The SCIM base URL.' }),
    bearer_token_set: Type.Boolean({
      description: 'Always true: a token is stored (encrypted); it is never returned.',
    }),
  },
  { additionalProperties: false, description: '`scim` connectors.' },
);
export type ScimConfigOutput = Static<typeof ScimConfigOutput>;
