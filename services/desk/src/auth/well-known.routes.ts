import type { ApiRouter } from '@msp/http';
import { ALL_SCOPES } from '@msp/auth';
import { Jwks, ServerMetadata } from './token.schemas';
import type { VerificationKey } from './previous-keys';
import { publicJwk, type SigningKey } from './signing-key';

/** RFC 8414 metadata, derived from the issuer so every URL in it is the public one. */
export function serverMetadata(issuer: string) {
  return {
    issuer,
    token_endpoint: `${issuer}/auth/token`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    revocation_endpoint: `${issuer}/auth/revoke`,
    grant_types_supported: ['client_credentials', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    token_endpoint_auth_signing_alg_values_supported: ['ES256', 'RS256'],
    scopes_supported: ALL_SCOPES,
    response_types_supported: [],
  };
}

export function registerWellKnownRoutes(
  api: ApiRouter,
  deps: { signingKey: SigningKey; previousKeys?: VerificationKey[]; issuer: string },
) {
  // The current key first, then the previous ones (key rotation): tokens of either verify.
  const jwks = {
    keys: [deps.signingKey, ...(deps.previousKeys ?? []).filter((key) => key.kid !== deps.signingKey.kid)].map(
      publicJwk,
    ),
  };
  const metadata = serverMetadata(deps.issuer);

  api.route({
    method: 'get',
    path: '/.well-known/jwks.json',
    operationId: 'getJwks',
    summary: 'Public keys that sign access tokens',
    description:
      'JSON Web Key Set (RFC 7517): the current signing key first, then any previous keys still accepted during ' +
      'a key rotation (`JWT_PREVIOUS_PUBLIC_KEYS`). Cache it; fetch again when a token names an unknown `kid`.',
    tags: ['Authentication'],
    scope: null,
    responses: { 200: { description: 'The key set.', schema: Jwks } },
    handler: (_req, res) => {
      res.set('Cache-Control', 'public, max-age=300').json(jwks);
    },
  });

  api.route({
    method: 'get',
    path: '/.well-known/oauth-authorization-server',
    operationId: 'getAuthorizationServerMetadata',
    summary: 'OAuth 2.0 authorization server metadata',
    description: "RFC 8414. Also served at the RFC's own location, `/.well-known/oauth-authorization-server/api/v1`.",
    tags: ['Authentication'],
    scope: null,
    responses: { 200: { description: 'The metadata.', schema: ServerMetadata } },
    handler: (_req, res) => {
      res.set('Cache-Control', 'public, max-age=300').json(metadata);
    },
  });
}
