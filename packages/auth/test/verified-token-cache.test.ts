import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { createTokenVerifier, InvalidTokenError, type KeySource } from '../src';

// The cache of verified tokens (token-verifier.ts) on each path where it could wrongly accept:
// every test first gets a token accepted (so it is cached), then changes what should refuse it.
const ISSUER = 'https://desk.test/api/v1';
const AUDIENCE = 'msp-api';
const now = () => Math.floor(Date.now() / 1000);

/** A key source whose keys the test withdraws and replaces, as desk's JWKS does on rotation. */
function mutableKeys() {
  const keys = new Map<string, KeyObject>();
  const source: KeySource = { getKey: async (kid) => keys.get(kid), keyNow: (kid) => keys.get(kid) };
  const add = (kid: string) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    keys.set(kid, publicKey);
    return privateKey;
  };
  return {
    source,
    add,
    put: (kid: string, key: KeyObject) => keys.set(kid, key),
    remove: (kid: string) => keys.delete(kid),
  };
}

function sign(privateKey: KeyObject, kid: string, claims: Record<string, unknown> = {}) {
  const payload = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'client-1',
    tenant_id: randomUUID(),
    scope: 'read:tickets',
    jti: randomUUID(),
    iat: now(),
    exp: now() + 3600,
    ...claims,
  };
  return jwt.sign(payload, privateKey, { algorithm: 'ES256', keyid: kid });
}

describe('the cache of verified access tokens', () => {
  test(
    'When a token was verified, then known answers its principal at once; never a token not ' +
      'verified, nor one whose key was withdrawn or replaced, nor one past its exp',
    async () => {
      const keys = mutableKeys();
      const verify = createTokenVerifier({
        keys: keys.source,
        issuer: ISSUER,
        audience: AUDIENCE,
        clockToleranceSec: 0,
      });
      const privateKey = keys.add('k1');
      const token = sign(privateKey, 'k1');
      expect(verify.known!(token)).toBeUndefined();
      const principal = await verify(token);
      expect(verify.known!(token)).toBe(principal);

      const expiring = sign(privateKey, 'k1', { exp: now() + 1 });
      await verify(expiring);
      expect(verify.known!(expiring)).toMatchObject({ clientId: 'client-1' });
      await new Promise((resolve) => setTimeout(resolve, (now() + 1) * 1000 - Date.now() + 5));
      expect(verify.known!(expiring)).toBeUndefined();

      keys.add('k1'); // the kid now names another key
      expect(verify.known!(token)).toBeUndefined();
      keys.remove('k1');
      expect(verify.known!(token)).toBeUndefined();
      await expect(verify(token)).rejects.toThrow(
        new InvalidTokenError('The access token is signed with an unknown key.'),
      );
    },
  );

  test('When another token carries the signature of a cached one, then it is not answered from the cache: it is verified, and refused', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE });
    const token = sign(keys.add('k1'), 'k1');
    await verify(token);
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...(jwt.decode(token) as object), scope: 'admin:tenant' })).toString('base64url')}.${signature}`;
    expect(verify.known!(forged)).toBeUndefined();
    await expect(verify(forged)).rejects.toThrow(/^The access token is not valid: invalid signature\.$/);
    expect(verify.known!(token)).toMatchObject({ scopes: ['read:tickets'] });
  });

  test('When a token holds a character a bearer token may not have, then it is refused as malformed, though base64 decoding would skip it', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE });
    const token = sign(keys.add('k1'), 'k1');
    const spoiled = `${token.slice(0, -4)}!${token.slice(-4)}`;
    expect(Buffer.from(spoiled.split('.')[2]!, 'base64url')).toEqual(Buffer.from(token.split('.')[2]!, 'base64url'));
    await expect(verify(spoiled)).rejects.toThrow(new InvalidTokenError('The access token is malformed.'));
    expect(verify.known!(spoiled)).toBeUndefined();
  });

  test('When the key source cannot answer at once (no keyNow), then known is not offered and every token goes through the verifier', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: { getKey: keys.source.getKey }, issuer: ISSUER, audience: AUDIENCE });
    const token = sign(keys.add('k1'), 'k1');
    const principal = await verify(token);
    expect(verify.known).toBeUndefined();
    expect(await verify(token)).toBe(principal);
  });

  test('When the same token is presented again, then it is answered from the cache (the same principal)', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE });
    const token = sign(keys.add('k1'), 'k1');
    const first = await verify(token);
    expect(first).toMatchObject({ clientId: 'client-1', scopes: ['read:tickets'] });
    expect(await verify(token)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  test('When the key that verified a cached token is withdrawn, then the token is refused', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE });
    const token = sign(keys.add('k1'), 'k1');
    await verify(token);
    keys.remove('k1');
    await expect(verify(token)).rejects.toThrow(
      new InvalidTokenError('The access token is signed with an unknown key.'),
    );
  });

  test('When the key id of a cached token now names another key, then the token is verified again and refused', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE });
    const token = sign(keys.add('k1'), 'k1');
    await verify(token);
    keys.add('k1');
    await expect(verify(token)).rejects.toThrow(/^The access token is not valid: invalid signature\.$/);
  });

  test('When a cached token reaches its exp, then it is refused exactly as an uncached one (after the clock tolerance)', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE, clockToleranceSec: 0 });
    const privateKey = keys.add('k1');
    const token = sign(privateKey, 'k1', { exp: now() + 1 });
    await expect(verify(token)).resolves.toMatchObject({ clientId: 'client-1' });
    await new Promise((resolve) => setTimeout(resolve, (now() + 2) * 1000 - Date.now()));
    await expect(verify(token)).rejects.toThrow(new InvalidTokenError('The access token has expired.'));
    const fresh = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE, clockToleranceSec: 0 });
    await expect(fresh(token)).rejects.toThrow(new InvalidTokenError('The access token has expired.'));
  });

  test('When a token expired within the clock tolerance, then it is accepted as before but never cached', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE });
    const token = sign(keys.add('k1'), 'k1', { iat: now() - 3600, exp: now() - 5 });
    const first = await verify(token);
    expect(first).toMatchObject({ clientId: 'client-1' });
    expect(await verify(token)).not.toBe(first);
  });

  test('When a token fails verification, then the failure is not remembered: refused while its key is unknown, accepted once it appears', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE });
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const token = sign(privateKey, 'k-later');
    await expect(verify(token)).rejects.toThrow('unknown key');
    keys.put('k-later', publicKey);
    await expect(verify(token)).resolves.toMatchObject({ clientId: 'client-1' });
  });

  test('When a token is refused for its claims, then it is refused again (never cached)', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE });
    const wrong = sign(keys.add('k1'), 'k1', { aud: 'another-api' });
    await expect(verify(wrong)).rejects.toThrow(InvalidTokenError);
    await expect(verify(wrong)).rejects.toThrow(InvalidTokenError);
  });

  test('When more tokens are verified than the cache holds, then the oldest is forgotten (verified again)', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE, cacheSize: 2 });
    const privateKey = keys.add('k1');
    const [a, b, c] = [sign(privateKey, 'k1'), sign(privateKey, 'k1'), sign(privateKey, 'k1')];
    const first = { a: await verify(a), b: await verify(b) };
    await verify(c);
    expect(await verify(b)).toBe(first.b);
    expect(await verify(a)).not.toBe(first.a);
  });

  test('When the cache is off (cacheSize 0), then every call verifies', async () => {
    const keys = mutableKeys();
    const verify = createTokenVerifier({ keys: keys.source, issuer: ISSUER, audience: AUDIENCE, cacheSize: 0 });
    const token = sign(keys.add('k1'), 'k1');
    expect(await verify(token)).not.toBe(await verify(token));
  });
});
