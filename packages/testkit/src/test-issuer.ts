import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

export interface TestIssuer {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** A token as desk would issue it; `claims` and `options` override the defaults. */
  token(claims?: Record<string, unknown>, options?: { expiresInSec?: number; kid?: string; key?: KeyObject }): string;
  publicKey: KeyObject;
  privateKey: KeyObject;
  kid: string;
  /** How many times the JWKS was fetched (to test caching). */
  jwksFetches(): number;
  /** Adds a new key to the JWKS (rotation) and returns its kid and private key. */
  rotate(): { kid: string; privateKey: KeyObject };
  close(): Promise<void>;
}

function thumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  return createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url');
}

/**
 * A stand-in for desk's signing side in the tests of other services: a real
 * ES256 key pair and a real JWKS served over HTTP on a free port, so the
 * verification path under test is exactly the production one.
 */
export async function startTestIssuer(options: { audience?: string; issuer?: string } = {}): Promise<TestIssuer> {
  const keys: { kid: string; privateKey: KeyObject; publicKey: KeyObject }[] = [];
  const addKey = () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const entry = { kid: thumbprint(publicKey), privateKey, publicKey };
    keys.push(entry);
    return entry;
  };
  const first = addKey();
  let fetches = 0;
  const server = http.createServer((req, res) => {
    if (req.url !== '/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    fetches += 1;
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        keys: keys.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid, use: 'sig', alg: 'ES256' })),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = options.issuer ?? `http://127.0.0.1:${port}/api/v1`;
  const audience = options.audience ?? 'msp-api';

  return {
    issuer,
    audience,
    jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
    publicKey: first.publicKey,
    privateKey: first.privateKey,
    kid: first.kid,
    jwksFetches: () => fetches,
    rotate: () => {
      const entry = addKey();
      return { kid: entry.kid, privateKey: entry.privateKey };
    },
    token(claims = {}, opts = {}) {
      const now = Math.floor(Date.now() / 1000);
      const payload = {
        iss: issuer,
        aud: audience,
        sub: 'test-client',
        tenant_id: randomUUID(),
        scope: 'admin:tenant',
        iat: now,
        exp: now + (opts.expiresInSec ?? 3600),
        jti: randomUUID(),
        ...claims,
      };
      return jwt.sign(payload, opts.key ?? first.privateKey, { algorithm: 'ES256', keyid: opts.kid ?? first.kid });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Hand-made tokens that a careless verifier would accept. */
export const forgedTokens = {
  /** `alg: none`, no signature. */
  unsigned(claims: Record<string, unknown>) {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
  },
  /** HS256 keyed with the issuer's public key in PEM form: the classic key-confusion attack. */
  hmacWithPublicKey(claims: Record<string, unknown>, publicKey: KeyObject, kid: string) {
    const secret = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    return jwt.sign(claims, secret, { algorithm: 'HS256', keyid: kid });
  },
};
