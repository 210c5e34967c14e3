import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';

/** Where a verifier finds the public key named by a token's `kid`. */
export interface KeySource {
  getKey(kid: string): Promise<KeyObject | undefined>;
  /**
   * The key as getKey would answer it, when it can be answered now without fetching anything;
   * `undefined` when getKey would fetch (or the source cannot tell): then ask getKey. Lets the
   * verifier answer a token it has already verified without waiting a turn (issue 25).
   */
  keyNow?(kid: string): KeyObject | undefined;
}

export interface Jwk extends JsonWebKey {
  kid?: string;
  use?: string;
  alg?: string;
}

function toKeys(jwks: { keys?: Jwk[] }): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  for (const jwk of jwks.keys ?? []) {
    if (!jwk.kid || (jwk.use && jwk.use !== 'sig')) continue;
    // Only asymmetric public keys: a symmetric "oct" key in a JWKS is never trusted.
    if (jwk.kty !== 'EC' && jwk.kty !== 'RSA') continue;
    try {
      keys.set(jwk.kid, createPublicKey({ key: jwk, format: 'jwk' }));
    } catch {
      // A malformed entry must not hide the good ones.
    }
  }
  return keys;
}

export interface RemoteJwksOptions {
  url: string;
  /** How long a fetched key set is trusted before it is fetched again. */
  cacheMs?: number;
  /** At most one refetch for unknown kids in this interval, so bad tokens cannot hammer desk. */
  refetchCooldownMs?: number;
  fetchTimeoutMs?: number;
}

/** Desk's JWKS over HTTP, cached, and refetched once when an unknown `kid` appears (key rotation). */
export function remoteJwks(options: RemoteJwksOptions): KeySource {
  const cacheMs = options.cacheMs ?? 10 * 60_000;
  const cooldownMs = options.refetchCooldownMs ?? 5_000;
  let keys = new Map<string, KeyObject>();
  let fetchedAt = 0;
  // Attempts, failed ones included, are spaced by the cooldown: an unreachable
  // or slow JWKS must not add a fetch to every request.
  let attemptedAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;

  const refresh = () =>
    (inFlight ??= (async () => {
      attemptedAt = Date.now();
      try {
        const response = await fetch(options.url, { signal: AbortSignal.timeout(options.fetchTimeoutMs ?? 5000) });
        if (!response.ok) throw new Error(`JWKS answered ${response.status}`);
        keys = toKeys((await response.json()) as { keys?: Jwk[] });
        fetchedAt = Date.now();
      } finally {
        inFlight = undefined;
      }
    })());

  /** Whether getKey(kid) fetches the JWKS first: a fetch under way, or one due (stale keys or an unknown kid, past the cooldown). */
  const fetchesFirst = (kid: string) => {
    const due = Date.now() - attemptedAt > cooldownMs;
    return Boolean(inFlight) || (due && (Date.now() - fetchedAt > cacheMs || !keys.has(kid)));
  };

  return {
    keyNow: (kid) => (fetchesFirst(kid) ? undefined : keys.get(kid)),
    async getKey(kid) {
      if (fetchesFirst(kid)) {
        try {
          await refresh();
        } catch {
          // Unreachable JWKS: keep serving with the keys we have; an unknown kid fails below.
        }
      }
      return keys.get(kid);
    },
  };
}

/** Keys known in-process (desk verifying its own tokens). */
export function staticKeys(entries: Iterable<[string, KeyObject]>): KeySource {
  const keys = new Map(entries);
  return { getKey: async (kid) => keys.get(kid), keyNow: (kid) => keys.get(kid) };
}
