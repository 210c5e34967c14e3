import { Type } from '@sinclair/typebox';
import { named } from '@msp/http';

// OAuth lets clients send parameters the server does not know (RFC 6749 §3.2):
// they are ignored, so these objects stay open.
export const TokenRequestBody = named(
  'TokenRequest',
  Type.Object(
    {
      grant_type: Type.String({
        description: '`client_credentials` or `refresh_token`.',
        examples: ['client_credentials'],
      }),
      client_id: Type.Optional(Type.String({ description: 'Omit when using HTTP Basic.' })),
      client_secret: Type.Optional(Type.String({ description: 'Omit when using HTTP Basic.' })),
      scope: Type.Optional(
        Type.String({ description: "Space-separated subset of the client's scopes; all of them when omitted." }),
      ),
      refresh_token: Type.Optional(Type.String({ description: 'With grant_type=refresh_token.' })),
      tenant_id: Type.Optional(
        Type.String({
          description:
            'Service clients only, and required from them, with grant_type=client_credentials: the UUID of the tenant the token is for. ' +
            'Any other client sending it gets 400 invalid_request. A refresh token issued this way stays bound to that tenant.',
          examples: ['3f2c1a9e-8b7d-4c6e-9f10-2a3b4c5d6e7f'],
        }),
      ),
    },
    {
      additionalProperties: true,
      examples: [
        {
          grant_type: 'client_credentials',
          client_id: 'dev-7f3a9c',
          client_secret: 'Zq3…your-secret…8Kd',
          scope: 'read:tickets write:tickets',
        },
      ],
    },
  ),
);

export const TokenResponseBody = named(
  'TokenResponse',
  Type.Object(
    {
      access_token: Type.String({
        description: 'A JWT signed by desk (ES256 or RS256), accepted by desk, link and hr.',
      }),
      token_type: Type.Literal('Bearer'),
      expires_in: Type.Literal(3600),
      refresh_token: Type.String({
        description: 'Single use: each refresh returns a new one; reusing an old one revokes the grant.',
      }),
      scope: Type.String({ description: 'The scopes granted, space-separated.' }),
    },
    {
      examples: [
        {
          access_token:
            'eyJhbGciOiJFUzI1NiIsImtpZCI6IjNmMmMiLCJ0eXAiOiJKV1QifQ.eyJzdWIiOiJkZXYtN2YzYTljIn0.c2lnbmF0dXJl',
          token_type: 'Bearer',
          expires_in: 3600,
          refresh_token: 'rt_9dQw4w9WgXcQ1k2vS7bN0pLmZx',
          scope: 'read:tickets write:tickets',
        },
      ],
    },
  ),
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
    {
      additionalProperties: true,
      examples: [
        {
          token: 'rt_9dQw4w9WgXcQ1k2vS7bN0pLmZx',
          token_type_hint: 'refresh_token',
          client_id: 'dev-7f3a9c',
          client_secret: 'Zq3…your-secret…8Kd',
        },
      ],
    },
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
      error: Type.String({
        enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'invalid_scope'],
      }),
      error_description: Type.String(),
    },
    { additionalProperties: true, description: 'RFC 9457 problem document carrying the RFC 6749 §5.2 error members.' },
  ),
);

export const TokenRateLimitProblem = named(
  'TokenRateLimitProblem',
  Type.Object(
    {
      type: Type.Literal('urn:msp:problem:rate-limited'),
      title: Type.String(),
      status: Type.Literal(429),
      detail: Type.String(),
      request_id: Type.String(),
    },
    {
      additionalProperties: true,
      description: 'RFC 9457 problem document: too many attempts; retry after `Retry-After` seconds.',
    },
  ),
);

export const Jwks = named(
  'JsonWebKeySet',
  Type.Object(
    {
      keys: Type.Array(
        Type.Object(
          { kty: Type.String(), kid: Type.String(), use: Type.String(), alg: Type.String() },
          { additionalProperties: true },
        ),
      ),
    },
    {
      examples: [
        {
          keys: [
            {
              kty: 'EC',
              crv: 'P-256',
              x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
              y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
              kid: '3f2c1a9e',
              use: 'sig',
              alg: 'ES256',
            },
          ],
        },
      ],
    },
  ),
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
    {
      additionalProperties: true,
      examples: [
        {
          issuer: 'http://localhost:3001/api/v1',
          token_endpoint: 'http://localhost:3001/api/v1/auth/token',
          jwks_uri: 'http://localhost:3001/api/v1/.well-known/jwks.json',
          revocation_endpoint: 'http://localhost:3001/api/v1/auth/revoke',
          grant_types_supported: ['client_credentials', 'refresh_token'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          scopes_supported: ['read:tickets', 'write:tickets', 'read:users', 'admin:tenant'],
        },
      ],
    },
  ),
);
