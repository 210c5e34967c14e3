import { KeyObject, type webcrypto } from 'node:crypto';
// Types only: jose is ESM, loaded with import() below.
import type { createLocalJWKSet, createRemoteJWKSet } from 'jose' with { 'resolution-mode': 'import' };

/** Where a verifier finds the public key named by a token's `kid`. */
export interface KeySource {
  /** The public key `kid` names for a token signed with `alg`; `undefined` when there is none. */
  getKey(kid: string, alg: string): Promise<KeyObject | undefined>;
  /**
   * The key as getKey would answer it, when it can be answered now without fetching anything;
   * `undefined` when getKey would fetch (or the source cannot tell): then ask getKey. Lets the
   * verifier answer a token it has already verified without waiting a turn.
   */
  keyNow?(kid: string, alg: string): KeyObject | undefined;
}

export interface RemoteJwksOptions {
  url: string;
  /** How long a fetched key set is trusted before it is fetched again (jose's cacheMaxAge). */
  cacheMs?: number;
  /** At most one refetch for unknown kids in this interval, so bad tokens cannot hammer desk (jose's cooldownDuration). */
  refetchCooldownMs?: number;
  fetchTimeoutMs?: number;
}

type RemoteJwkSet = ReturnType<typeof createRemoteJWKSet>;
type LocalJwkSet = ReturnType<typeof createLocalJWKSet>;

/**
 * Desk's JWKS over HTTP through jose's createRemoteJWKSet: cached, refetched when stale or when an
 * unknown `kid` appears (key rotation), at most once per cooldown. While desk cannot be reached
 * after the cache went stale, the keys last fetched still verify (jose's local set over them).
 */
export function remoteJwks(options: RemoteJwksOptions): KeySource {
  let remote: RemoteJwkSet | undefined;
  let lastSet = '';
  let fallback: LocalJwkSet | undefined;
  const jose = import('jose');
  const ready = jose.then(
    ({ createRemoteJWKSet }) =>
      (remote = createRemoteJWKSet(new URL(options.url), {
        cacheMaxAge: options.cacheMs ?? 10 * 60_000,
        cooldownDuration: options.refetchCooldownMs ?? 5_000,
        timeoutDuration: options.fetchTimeoutMs ?? 5_000,
      })),
  );
  // jose imports each key of a fetched set once (the same CryptoKey until the set is fetched
  // again), so each gets one KeyObject: the verifier tells a replaced key by its identity.
  const keyObjects = new WeakMap<object, KeyObject>();
  const asKeyObject = (key: unknown): KeyObject => {
    let object = keyObjects.get(key as object);
    if (!object) {
      object = key instanceof KeyObject ? key : KeyObject.from(key as webcrypto.CryptoKey);
      keyObjects.set(key as object, object);
    }
    return object;
  };
  /** The key last answered per `alg kid`, answered at once while the set it came from is fresh. */
  const recent = new Map<string, KeyObject>();
  /** After every lookup (which is when jose fetches): a set that changed invalidates what was answered from the old one. */
  const noteSet = async (set: RemoteJwkSet) => {
    const now = JSON.stringify(set.jwks() ?? null);
    if (now === lastSet) return;
    lastSet = now;
    recent.clear();
    const { createLocalJWKSet } = await jose;
    fallback = set.jwks() ? createLocalJWKSet(set.jwks()!) : undefined;
  };

  return {
    keyNow(kid, alg) {
      if (!remote || !remote.fresh || remote.reloading) return undefined;
      return recent.get(`${alg} ${kid}`);
    },
    async getKey(kid, alg) {
      const set = await ready;
      let key: KeyObject | undefined;
      try {
        key = asKeyObject(await set({ alg, kid }));
      } catch (error) {
        // An unknown kid (or one jose refuses) is no key; an unreachable JWKS falls back to the keys last fetched.
        if ((error as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' && fallback) {
          key = await fallback({ alg, kid }).then(asKeyObject, () => undefined);
        }
      }
      await noteSet(set);
      if (key) recent.set(`${alg} ${kid}`, key);
      return key;
    },
  };
}

/** Keys known in-process (desk verifying its own tokens). */
export function staticKeys(entries: Iterable<[string, KeyObject]>): KeySource {
  const keys = new Map(entries);
  return { getKey: async (kid) => keys.get(kid), keyNow: (kid) => keys.get(kid) };
}
