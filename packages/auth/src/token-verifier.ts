import type { KeyObject } from 'node:crypto';
import jwt, { type JwtPayload } from 'jsonwebtoken';
import type { Principal } from '@msp/http';
import type { KeySource } from './key-source';
import { B64TOKEN } from './b64token';
import { parseScope } from './scopes';

/** Asymmetric algorithms only: never `none`, never HMAC (a public key must not become a shared secret). */
export const ALLOWED_ALGORITHMS = ['ES256', 'RS256'] as const;

/** A token of RFC 6750's b64token characters: only such a token is ever verified (and remembered). */
const BEARER_TOKEN = new RegExp(`^${B64TOKEN}$`);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Verified tokens remembered per process: bounded, so the cache's memory is too. */
export const DEFAULT_VERIFIED_TOKEN_CACHE_SIZE = 10_000;

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
  /** How many verified tokens to remember (0: verify every time). */
  cacheSize?: number;
}

export interface TokenVerifier {
  (token: string): Promise<Principal>;
  /**
   * The principal of a token verified before, answered at once, when the verifier can tell now
   * that it still holds (unexpired, its key still the source's); `undefined` otherwise (then call
   * the verifier). A request of a known token then goes on without waiting a turn of the event
   * loop for a promise, a cost every request of a known token would otherwise pay.
   */
  known?(token: string): Principal | undefined;
}

/** A token that passed verification, and the key that verified it. */
interface Verified {
  principal: Principal;
  kid: string;
  alg: string;
  key: KeyObject;
  /** `exp` in ms: the entry is never used from this instant on, clock tolerance or not. */
  expiresAtMs: number;
}

/**
 * Verifies desk's access tokens (signature, algorithm, issuer, audience, expiry, claims).
 *
 * Verifying an ES256 signature is a noticeable share of a service's CPU under load (figures in
 * docs/performance.md), paid again for every request of the same token. So a token that passed is remembered (keyed by its
 * signature, answering only the very token it holds), and a repeat skips the signature, but only
 * while (a) it has not reached its `exp` (after that it is verified again, so the clock tolerance
 * applies exactly as before), and (b) the key source still holds the very key that verified it (a
 * key withdrawn or replaced through the JWKS revokes its cached tokens as it revokes the others). A
 * token that failed is never remembered. The cache is bounded: the oldest entry goes when it is full.
 */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const tolerance = options.clockToleranceSec ?? 30;
  const cacheSize = options.cacheSize ?? DEFAULT_VERIFIED_TOKEN_CACHE_SIZE;
  // Keyed by the token's signature (its last part): a Map hashes its key on every lookup, and the
  // whole token, ~700 characters, cost a microsecond a request. An entry answers only the very
  // token it holds (`token` compared in full), so two tokens with one signature cannot share it.
  const verified = new Map<string, Verified & { token: string }>();
  const keyOf = (token: string) => token.slice(token.lastIndexOf('.') + 1);
  const cached = (token: string) => {
    const entry = verified.get(keyOf(token));
    return entry?.token === token ? entry : undefined;
  };

  async function verifyFully(token: string): Promise<Verified> {
    // Node's base64 decoding skips characters outside its alphabet, so a token with others could
    // still verify: refused here, whoever asks, so the cache only ever holds well-formed tokens.
    if (!BEARER_TOKEN.test(token)) throw new InvalidTokenError('The access token is malformed.');
    const decoded = jwt.decode(token, { complete: true });
    if (!decoded || typeof decoded.payload === 'string') throw new InvalidTokenError('The access token is malformed.');
    const { alg, kid } = decoded.header;
    if (!(ALLOWED_ALGORITHMS as readonly string[]).includes(alg))
      throw new InvalidTokenError('The access token is signed with an algorithm that is not accepted.');
    if (!kid) throw new InvalidTokenError('The access token names no signing key.');
    const key = await options.keys.getKey(kid, alg);
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
    const { sub, tenant_id: tenantId, scope, jti, exp, client_kind: clientKind } = payload;
    if (
      typeof sub !== 'string' ||
      typeof tenantId !== 'string' ||
      typeof scope !== 'string' ||
      typeof jti !== 'string' ||
      typeof exp !== 'number'
    ) {
      throw new InvalidTokenError('The access token lacks required claims.');
    }
    // Every service keys its rows by this id in uuid columns: refuse anything else here, once.
    if (!UUID.test(tenantId)) throw new InvalidTokenError('The access token names a tenant that is not a UUID.');
    // Frozen: one principal object serves every request of the token.
    const principal = Object.freeze({
      clientId: sub,
      tenantId,
      scopes: Object.freeze(parseScope(scope)) as string[],
      tokenId: jti,
      expiresAt: exp,
      // Only desk's exact word makes a service client; anything else (or nothing) is a tenant's client.
      serviceClient: clientKind === 'service',
    });
    return { principal, kid, alg, key, expiresAtMs: exp * 1000 };
  }

  const verify: TokenVerifier = async (token) => {
    const known = cached(token);
    if (known) {
      if (Date.now() < known.expiresAtMs && (await options.keys.getKey(known.kid, known.alg)) === known.key)
        return known.principal;
      if (verified.get(keyOf(token)) === known) verified.delete(keyOf(token));
    }
    const fresh = await verifyFully(token);
    if (cacheSize > 0 && Date.now() < fresh.expiresAtMs) {
      if (verified.size >= cacheSize) verified.delete(verified.keys().next().value!);
      verified.set(keyOf(token), { ...fresh, token });
    }
    return fresh.principal;
  };
  // The same conditions as the cached path above, where the key source can answer now.
  const keyNow = options.keys.keyNow?.bind(options.keys);
  if (keyNow) {
    verify.known = (token) => {
      const known = cached(token);
      if (known && Date.now() < known.expiresAtMs && keyNow(known.kid, known.alg) === known.key) return known.principal;
      return undefined;
    };
  }
  return verify;
}
