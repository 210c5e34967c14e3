import jwt, { type JwtPayload } from 'jsonwebtoken';
import type { Principal } from '@msp/http';
import type { KeySource } from './key-source';
import { parseScope } from './scopes';

/** Asymmetric algorithms only: never `none`, never HMAC (a public key must not become a shared secret). */
export const ALLOWED_ALGORITHMS = ['ES256', 'RS256'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class InvalidTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTokenError';
  }
}

export interface TokenVerifierOptions {
  keys: KeySource;
  issuer: string;
  audience: string;
  /** Tolerated clock difference between desk and this service, in seconds. */
  clockToleranceSec?: number;
}

export type TokenVerifier = (token: string) => Promise<Principal>;

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const tolerance = options.clockToleranceSec ?? 30;
  return async (token) => {
    const decoded = jwt.decode(token, { complete: true });
    if (!decoded || typeof decoded.payload === 'string') throw new InvalidTokenError('The access token is malformed.');
    const { alg, kid } = decoded.header;
    if (!(ALLOWED_ALGORITHMS as readonly string[]).includes(alg)) throw new InvalidTokenError('The access token is signed with an algorithm that is not accepted.');
    if (!kid) throw new InvalidTokenError('The access token names no signing key.');
    const key = await options.keys.getKey(kid);
    if (!key) throw new InvalidTokenError('The access token is signed with an unknown key.');
    let payload: JwtPayload;
    try {
      payload = jwt.verify(token, key, {
        algorithms: [...ALLOWED_ALGORITHMS],
        issuer: options.issuer,
        audience: options.audience,
        clockTolerance: tolerance,
      }) as JwtPayload;
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TokenExpiredError') throw new InvalidTokenError('The access token has expired.');
      if (name === 'NotBeforeError') throw new InvalidTokenError('The access token is not valid yet.');
      throw new InvalidTokenError(`The access token is not valid: ${(error as Error).message}.`);
    }
    const { sub, tenant_id: tenantId, scope, jti, exp } = payload;
    if (typeof sub !== 'string' || typeof tenantId !== 'string' || typeof scope !== 'string' || typeof jti !== 'string' || typeof exp !== 'number') {
      throw new InvalidTokenError('The access token lacks required claims.');
    }
    // Every service keys its rows by this id in uuid columns: refuse anything else here, once.
    if (!UUID.test(tenantId)) throw new InvalidTokenError('The access token names a tenant that is not a UUID.');
    return { clientId: sub, tenantId, scopes: parseScope(scope), tokenId: jti, expiresAt: exp };
  };
}
