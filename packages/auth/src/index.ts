import type { RequestHandler } from 'express';
import { authenticate, requireScope } from './middleware';
import { remoteJwks, type KeySource } from './key-source';
import { createTokenVerifier, type TokenVerifier } from './token-verifier';

export * from './scopes';
export * from './key-source';
export * from './token-verifier';
export { authenticate, requireScope, tenantOf } from './middleware';

export interface AuthOptions {
  issuer: string;
  audience: string;
  /** Desk's JWKS URL; ignored when `keys` is given. */
  jwksUrl?: string;
  keys?: KeySource;
}

export interface Auth {
  verify: TokenVerifier;
  authenticate: RequestHandler;
  requireScope: (scope: string) => RequestHandler;
}

/** Everything a service needs to accept desk's tokens. */
export function createAuth(options: AuthOptions): Auth {
  const keys = options.keys ?? remoteJwks({ url: options.jwksUrl ?? '' });
  const verify = createTokenVerifier({ keys, issuer: options.issuer, audience: options.audience });
  return { verify, authenticate: authenticate(verify), requireScope };
}
export { registerWhoAmI } from './who-am-i.routes';
