import { Type } from '@sinclair/typebox';
import { named } from '@msp/http';

// OAuth lets clients send parameters the server does not know (RFC 6749 §3.2):
// they are ignored, so these objects stay open.
export const TokenRequestBody = named(
  'TokenRequest',
  Type.Object(
    {
      grant_type: Type.String({ description: '`client_credentials` or `refresh_token`.', examples: ['client_credentials'] }),
      client_id: Type.Optional(Type.String({ description: 'Omit when using HTTP Basic.' })),
      client_secret: Type.Optional(Type.String({ description: 'Omit when using HTTP Basic.' })),
      scope: Type.Optional(Type.String({ description: 'Space-separated subset of the client\'s scopes; all of them when omitted.' })),
      refresh_token: Type.Optional(Type.String({ description: 'With grant_type=refresh_token.' })),
    },
    { additionalProperties: true },
  ),
);

export const TokenResponseBody = named(
  'TokenResponse',
  Type.Object({
    access_token: Type.String({ description: 'A JWT signed by desk (ES256 or RS256), accepted by desk, link and hr.' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Literal(3600),
    refresh_token: Type.String({ description: 'Single use: each refresh returns a new one; reusing an old one revokes the grant.' }),
    scope: Type.String(),
  }),
);

export const RevokeRequestBody = named(
  'RevocationRequest',
  Type.Object(
    {
      token: Type.String({ description: 'The refresh token to revoke.' }),
      token_type_hint: Type.Optional(Type.String()),
      client_id: Type.Optional(Type.String()),
      client_secret: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  ),
);

export const OAuthProblem = named(
  'OAuthProblem',
  Type.Object(
    {
      type: Type.String(),
      title: Type.String(),
      status: Type.Integer(),
      detail: Type.String(),
      request_id: Type.String(),
      error: Type.String({ enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'invalid_scope'] }),
      error_description: Type.String(),
    },
    { additionalProperties: true, description: 'RFC 9457 problem document carrying the RFC 6749 §5.2 error members.' },
  ),
);

export const Jwks = named(
  'JsonWebKeySet',
  Type.Object({ keys: Type.Array(Type.Object({ kty: Type.String(), kid: Type.String(), use: Type.String(), alg: Type.String() }, { additionalProperties: true })) }),
);

export const ServerMetadata = named(
  'AuthorizationServerMetadata',
  Type.Object(
    {
      issuer: Type.String(),
      token_endpoint: Type.String(),
      jwks_uri: Type.String(),
      revocation_endpoint: Type.String(),
      grant_types_supported: Type.Array(Type.String()),
      token_endpoint_auth_methods_supported: Type.Array(Type.String()),
      scopes_supported: Type.Array(Type.String()),
    },
    { additionalProperties: true },
  ),
);
