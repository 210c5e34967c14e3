import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { createTokenVerifier, InvalidTokenError, remoteJwks } from '../src';

/*
 * desk down: link and hr verify tokens against desk's JWKS. While desk is
 * unreachable (nothing listens on its port), tokens of keys they already hold keep verifying from
 * the cache; a token of a new key is refused with 401 (never a 500); once desk is back, the new
 * kid is fetched once and accepted.
 */

const ISSUER = 'http://desk.test/api/v1';
const AUDIENCE = 'msp-api';

function newKey() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid: randomUUID(), privateKey, publicKey };
}

const sign = (key: { kid: string; privateKey: KeyObject }) =>
  jwt.sign(
    { iss: ISSUER, aud: AUDIENCE, sub: 'client', tenant_id: randomUUID(), scope: 'read:tickets', jti: randomUUID() },
    key.privateKey,
    {
      algorithm: 'ES256',
      keyid: key.kid,
      expiresIn: 60,
    },
  );

test(
  'When desk is down, then cached keys still verify and a new kid is refused with 401; ' +
    'when desk is back, the new kid is fetched once and accepted',
  async () => {
    const keys = [newKey()];
    let fetches = 0;
    const listener: http.RequestListener = (_req, res) => {
      fetches += 1;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          keys: keys.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid, use: 'sig', alg: 'ES256' })),
        }),
      );
    };
    let desk = http.createServer(listener);
    await new Promise<void>((resolve) => desk.listen(0, '127.0.0.1', resolve));
    const port = (desk.address() as AddressInfo).port;
    const verify = createTokenVerifier({
      keys: remoteJwks({ url: `http://127.0.0.1:${port}/jwks.json`, refetchCooldownMs: 300 }),
      issuer: ISSUER,
      audience: AUDIENCE,
    });

    await expect(verify(sign(keys[0]!))).resolves.toMatchObject({ scopes: ['read:tickets'] });
    expect(fetches).toBe(1);

    // desk goes away: its port refuses connections.
    await new Promise<void>((resolve) => desk.close(() => resolve()));
    desk.closeAllConnections();
    for (let i = 0; i < 5; i += 1)
      await expect(verify(sign(keys[0]!))).resolves.toMatchObject({ scopes: ['read:tickets'] });
    const rotated = newKey();
    keys.push(rotated);
    await expect(verify(sign(rotated))).rejects.toThrow(InvalidTokenError);

    // desk is back, now with the new key as well (after the refetch cooldown that guards desk).
    await new Promise((resolve) => setTimeout(resolve, 350));
    desk = http.createServer(listener);
    await new Promise<void>((resolve) => desk.listen(port, '127.0.0.1', resolve));
    try {
      const before = fetches;
      await expect(verify(sign(rotated))).resolves.toMatchObject({ scopes: ['read:tickets'] });
      expect(fetches).toBe(before + 1);
      await expect(verify(sign(rotated))).resolves.toMatchObject({ scopes: ['read:tickets'] });
      await expect(verify(sign(keys[0]!))).resolves.toMatchObject({ scopes: ['read:tickets'] });
      expect(fetches).toBe(before + 1);
    } finally {
      await new Promise<void>((resolve) => desk.close(() => resolve()));
    }
  },
);
