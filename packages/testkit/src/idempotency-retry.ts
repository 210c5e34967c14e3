import type { Redis } from 'ioredis';

/**
 * The Idempotency-Key record of an answered request, in the Redis of a service under test, and a
 * way to put it back into the state a dead instance leaves: its claim held, no longer renewed. The
 * tests of a retry after such a death set that state by hand; everything else they do is real.
 */
export async function answeredIdempotencyRecord(redis: Redis, service: string, tenantId: string, key: string) {
  const [name] = await redis.keys(`idem:${service}:${tenantId}:*:${key}`);
  if (!name) throw new Error(`no Idempotency-Key record of ${service} for tenant ${tenantId} and key ${key}`);
  const stored = JSON.parse((await redis.get(name))!) as { state: string; fingerprint: string };
  return {
    state: stored.state,
    /** Leaves the key held by `claim`, last renewed at `beat` (by default two minutes ago: a claim lives one). */
    leaveClaim: (claim: string, beat = Date.now() - 120_000) =>
      redis.set(name, JSON.stringify({ state: 'running', fingerprint: stored.fingerprint, claim, beat }), 'KEEPTTL'),
  };
}

/** What a caller's retry under one Idempotency-Key must see: the first answer again, marked a replay. */
export function expectReplayOf(
  first: { status: number; headers: Record<string, string>; body: unknown },
  again: { status: number; headers: Record<string, string>; body: unknown },
) {
  expect(again.status).toBe(first.status);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(again.headers['location']).toBe(first.headers['location']);
  expect(again.body).toEqual(first.body);
}
