import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Logger } from '@msp/http';
import { parseScope } from '@msp/auth';
import type { ApiClientRecord, ApiClientsRepository } from './api-clients.repository';
import { oauthError } from './oauth-error';
import type { RefreshTokensRepository } from './refresh-tokens.repository';
import type { ClientGuard } from './client-guard';
import { decoyHash, hashToken, randomToken, verifySecret, type SecretVerifier } from './secrets';
import type { SigningKey } from './signing-key';

/** Fixed by the source documentation: tokens live one hour. */
export const ACCESS_TOKEN_TTL_SEC = 3600;

export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
  /** Sent with HTTP Basic (changes the 401's WWW-Authenticate). */
  viaBasic: boolean;
  /** The caller's address (its rate-limit key): addresses a client succeeded from are not locked out. */
  address: string;
}

export interface TokenRequest {
  grant_type?: string;
  scope?: string;
  refresh_token?: string;
  /** Service clients only: the tenant the token is for. */
  tenant_id?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface TokenServiceDeps {
  clients: ApiClientsRepository;
  refreshTokens: RefreshTokensRepository;
  signingKey: SigningKey;
  issuer: string;
  audience: string;
  refreshTokenTtlDays: number;
  logger: Logger;
  /** Counts attempts per client id across addresses (against distributed secret guessing). */
  guard: ClientGuard;
  /** How a presented secret is checked against a hash (tests observe it); scrypt by default. */
  verifySecret?: SecretVerifier;
}

export function createTokenService(deps: TokenServiceDeps) {
  const { clients, refreshTokens, logger, guard } = deps;
  const verify = deps.verifySecret ?? verifySecret;

  /**
   * The client, if `secret` is its secret; null otherwise. Exactly one check of the current secret's
   * cost whatever the client id names: an unknown or revoked client is checked against a decoy
   * hash, so its 401 takes as long as a known client's (no timing oracle).
   */
  async function clientWithSecret(client: ApiClientRecord | null, secret: string): Promise<ApiClientRecord | null> {
    const usable = client && !client.revokedAt ? client : null;
    const matches = await verify(secret, usable ? usable.secretHash : await decoyHash());
    if (!usable) return null;
    if (matches) return usable;
    // A rotated secret, still within the grace period the rotation asked for.
    const { previousSecretHash, previousSecretExpiresAt } = usable;
    if (
      previousSecretHash &&
      previousSecretExpiresAt &&
      previousSecretExpiresAt.getTime() > Date.now() &&
      (await verify(secret, previousSecretHash))
    )
      return usable;
    return null;
  }

  async function authenticateClient(credentials: ClientCredentials): Promise<ApiClientRecord> {
    const { clientId, clientSecret, viaBasic, address } = credentials;
    if (!clientId || !clientSecret) {
      throw oauthError(
        'invalid_client',
        'Client authentication is required: client_id and client_secret in the body, or HTTP Basic.',
        { basicAuth: viaBasic },
      );
    }
    const attempt = await guard.begin(clientId, address);
    const client = await clientWithSecret(await clients.findByClientId(clientId), clientSecret);
    if (!client) throw oauthError('invalid_client', 'The client credentials are not valid.', { basicAuth: viaBasic });
    await attempt.succeeded();
    return client;
  }

  /** A requested scope narrows what the client holds; asking for more is refused, never trimmed silently. */
  function grantedScope(requested: string | undefined, allowed: string[]): string[] {
    if (requested === undefined) return allowed;
    const wanted = [...new Set(parseScope(requested))];
    if (wanted.length === 0) throw oauthError('invalid_scope', 'The scope parameter is empty.');
    const extra = wanted.filter((scope) => !allowed.includes(scope));
    if (extra.length) throw oauthError('invalid_scope', `The client may not request: ${extra.join(' ')}.`);
    return wanted;
  }

  function signAccessToken(client: ApiClientRecord, tenantId: string, scopes: string[]): string {
    // client_kind tells every service whether the caller is a service client (of no tenant, SPEC
    // §2), the only kind whose X-On-Behalf-Of the audit log records.
    const clientKind = client.tenantId === null ? 'service' : 'tenant';
    return jwt.sign(
      { tenant_id: tenantId, scope: scopes.join(' '), client_id: client.clientId, client_kind: clientKind },
      deps.signingKey.privateKey,
      {
        algorithm: deps.signingKey.alg,
        keyid: deps.signingKey.kid,
        issuer: deps.issuer,
        audience: deps.audience,
        subject: client.clientId,
        expiresIn: ACCESS_TOKEN_TTL_SEC,
        jwtid: randomUUID(),
      },
    );
  }

  function newRefreshToken(client: ApiClientRecord, tenantId: string, familyId: string, scopes: string[]) {
    const value = randomToken('rt_');
    const record = {
      tenantId,
      apiClientId: client.id,
      familyId,
      tokenHash: hashToken(value),
      scope: scopes.join(' '),
      expiresAt: new Date(Date.now() + deps.refreshTokenTtlDays * 86_400_000),
    };
    return { value, record };
  }

  function response(accessToken: string, refreshToken: string, scopes: string[]): TokenResponse {
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SEC,
      refresh_token: refreshToken,
      scope: scopes.join(' '),
    };
  }

  /**
   * A tenant's client gets tokens for its own tenant and may not name one. A service client (no
   * tenant of its own) must name the tenant, which must exist in desk.
   */
  async function tokenTenant(client: ApiClientRecord, requested: string | undefined): Promise<string> {
    if (client.tenantId !== null) {
      if (requested !== undefined)
        throw oauthError(
          'invalid_request',
          "tenant_id is accepted only from service clients; this client's tokens are always for its own tenant.",
        );
      return client.tenantId;
    }
    if (requested === undefined || requested === '')
      throw oauthError(
        'invalid_request',
        'tenant_id is required: a service client asks for a token for a named tenant.',
      );
    if (!UUID.test(requested)) throw oauthError('invalid_request', 'tenant_id must be a UUID.');
    if (!(await clients.tenantExists(requested)))
      throw oauthError('invalid_request', 'tenant_id names no tenant known to desk.');
    return requested.toLowerCase();
  }

  async function clientCredentialsGrant(client: ApiClientRecord, request: TokenRequest): Promise<TokenResponse> {
    const tenantId = await tokenTenant(client, request.tenant_id);
    const scopes = grantedScope(request.scope, client.scopes);
    // A service client's refresh token is bound to the tenant it was issued for: refreshing never
    // changes the tenant (see refreshTokenGrant).
    const refresh = newRefreshToken(client, tenantId, randomUUID(), scopes);
    await refreshTokens.create(refresh.record);
    return response(signAccessToken(client, tenantId, scopes), refresh.value, scopes);
  }

  async function refreshTokenGrant(client: ApiClientRecord, request: TokenRequest): Promise<TokenResponse> {
    if (!request.refresh_token)
      throw oauthError('invalid_request', 'refresh_token is required for grant_type=refresh_token.');
    if (request.tenant_id !== undefined)
      throw oauthError(
        'invalid_request',
        'tenant_id is not accepted with grant_type=refresh_token: a refresh token stays with the tenant it was issued for.',
      );
    const stored = await refreshTokens.findByHash(hashToken(request.refresh_token));
    if (!stored || stored.apiClientId !== client.id)
      throw oauthError('invalid_grant', 'The refresh token is not valid.');
    if (stored.revokedAt) throw oauthError('invalid_grant', 'The refresh token has been revoked.');
    if (stored.usedAt) {
      // Someone presents a token that was already exchanged: one of the two
      // holders is not legitimate, so the whole family stops working.
      const revoked = await refreshTokens.revokeFamily(stored.familyId);
      logger.warn('refresh token reuse detected; family revoked', {
        client_id: client.clientId,
        family_id: stored.familyId,
        revoked,
      });
      throw oauthError(
        'invalid_grant',
        'The refresh token has already been used; every token of its grant is now revoked.',
      );
    }
    if (stored.expiresAt.getTime() <= Date.now()) throw oauthError('invalid_grant', 'The refresh token has expired.');
    // Never more than the original grant, nor more than the client holds today.
    const stillAllowed = parseScope(stored.scope).filter((scope) => client.scopes.includes(scope));
    const scopes = grantedScope(request.scope, stillAllowed);
    if (scopes.length === 0) throw oauthError('invalid_grant', 'The client no longer holds any scope of this grant.');
    const refresh = newRefreshToken(client, stored.tenantId, stored.familyId, scopes);
    if (!(await refreshTokens.rotate(stored.id, refresh.record))) {
      const revoked = await refreshTokens.revokeFamily(stored.familyId);
      logger.warn('concurrent refresh token reuse detected; family revoked', {
        client_id: client.clientId,
        family_id: stored.familyId,
        revoked,
      });
      throw oauthError(
        'invalid_grant',
        'The refresh token has already been used; every token of its grant is now revoked.',
      );
    }
    return response(signAccessToken(client, stored.tenantId, scopes), refresh.value, scopes);
  }

  return {
    async issue(credentials: ClientCredentials, request: TokenRequest): Promise<TokenResponse> {
      if (!request.grant_type) throw oauthError('invalid_request', 'grant_type is required.');
      if (request.grant_type !== 'client_credentials' && request.grant_type !== 'refresh_token') {
        throw oauthError(
          'unsupported_grant_type',
          `grant_type "${request.grant_type}" is not supported; use client_credentials or refresh_token.`,
        );
      }
      const client = await authenticateClient(credentials);
      return request.grant_type === 'client_credentials'
        ? clientCredentialsGrant(client, request)
        : refreshTokenGrant(client, request);
    },

    /** RFC 7009: answers the same whether or not the token was known, so it reveals nothing. */
    async revoke(credentials: ClientCredentials, token: string | undefined): Promise<void> {
      const client = await authenticateClient(credentials);
      if (!token) throw oauthError('invalid_request', 'token is required.');
      const stored = await refreshTokens.findByHash(hashToken(token));
      if (stored && stored.apiClientId === client.id) await refreshTokens.revokeFamily(stored.familyId);
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
