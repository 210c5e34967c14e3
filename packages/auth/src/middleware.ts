import type { NextFunction, Request, RequestHandler } from 'express';
import { AppError } from '@msp/http';
import { B64TOKEN } from './b64token';
import { AUTHENTICATED, hasScope } from './scopes';
import { InvalidTokenError, type TokenVerifier } from './token-verifier';

const quote = (value: string) => value.replace(/["\\]/g, '');

/** `Authorization: Bearer <token>` (RFC 6750 §2.1), the scheme in any case: the token's characters are the verifier's. */
const BEARER_HEADER = new RegExp(`^Bearer[ ]+(${B64TOKEN})$`, 'i');

/**
 * Establishes the caller from `Authorization: Bearer`, without rejecting: the
 * rate limiter needs the caller first, and public routes need no token. The
 * decision to refuse is requireScope's.
 */
export function authenticate(verify: TokenVerifier): RequestHandler {
  /** A token not known to be valid: verified in full (its promise is the middleware's). */
  const verifyThenNext = async (req: Request, token: string, next: NextFunction) => {
    try {
      req.principal = await verify(token);
    } catch (error) {
      if (!(error instanceof InvalidTokenError)) throw error;
      req.authFailure = { error: 'invalid_token', description: error.message };
    }
    next();
  };
  // Not an async function: a token verified before goes on in the same turn, without a promise.
  return (req, _res, next) => {
    const header = req.get('authorization');
    if (!header) return next();
    // The usual spelling of a token verified before: known at once. The verifier only ever takes a
    // well-formed token (BEARER_TOKEN), so a known one needs no second look at its characters.
    if (header.startsWith('Bearer ')) {
      const known = verify.known?.(header.slice(7));
      if (known) {
        req.principal = known;
        return next();
      }
    }
    const match = BEARER_HEADER.exec(header.trim());
    if (!match) {
      req.authFailure = {
        error: 'invalid_token',
        description: 'The Authorization header must be "Bearer <access token>".',
      };
      return next();
    }
    return verifyThenNext(req, match[1]!, next);
  };
}

/**
 * 401 without a valid token, 403 without the scope (RFC 6750 §3). `scope` may list several scopes
 * separated by spaces (as OAuth writes scope lists): the caller needs every one of them, and the 403
 * names them all, the way RFC 6750's `scope` attribute takes a space-delimited list.
 */
export function requireScope(scope: string): RequestHandler {
  const needed = scope.split(' ').filter(Boolean);
  return (req, _res, next) => {
    if (!req.principal) {
      const description = req.authFailure?.description ?? 'An access token is required.';
      throw new AppError(401, description, {
        code: 'invalid-token',
        headers: {
          'WWW-Authenticate': `Bearer realm="msp", error="invalid_token", error_description="${quote(description)}"`,
        },
      });
    }
    if (scope !== AUTHENTICATED && !needed.every((one) => hasScope(req.principal!.scopes, one))) {
      const what = needed.length > 1 ? `the scopes "${needed.join('" and "')}"` : `the scope "${scope}"`;
      throw new AppError(403, `The access token lacks ${what}.`, {
        code: 'insufficient-scope',
        extensions: { required_scope: scope },
        headers: { 'WWW-Authenticate': `Bearer realm="msp", error="insufficient_scope", scope="${scope}"` },
      });
    }
    next();
  };
}

/** The caller's tenant; only valid behind requireScope. */
export function tenantOf(req: { principal?: { tenantId: string } }): string {
  if (!req.principal) throw new Error('tenantOf() called on a route without requireScope');
  return req.principal.tenantId;
}
