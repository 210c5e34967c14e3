import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface SigningKey {
  kid: string;
  alg: 'ES256' | 'RS256';
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** RFC 7638 thumbprint: a kid that changes exactly when the key does. */
export function thumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  const canonical =
    jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}

/** The JWT algorithm of an accepted key: EC P-256 or RSA of at least 2048 bits; undefined otherwise. */
export function keyAlgorithm(key: KeyObject): SigningKey['alg'] | undefined {
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048) return 'RS256';
  return undefined;
}

export function signingKeyFromPem(pem: string, kid?: string): SigningKey {
  // Environment variables often carry PEM with literal "\n".
  const privateKey = createPrivateKey(pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem);
  const publicKey = createPublicKey(privateKey);
  const alg = keyAlgorithm(privateKey);
  if (!alg) throw new Error('the JWT signing key must be an EC P-256 key or an RSA key of at least 2048 bits');
  return { kid: kid ?? thumbprint(publicKey), alg, privateKey, publicKey };
}

export function generateSigningKey(): SigningKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return signingKeyFromPem(privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
}

export interface SigningKeySettings {
  JWT_PRIVATE_KEY?: string;
  JWT_PRIVATE_KEY_FILE?: string;
  JWT_KEY_ID?: string;
  DATA_DIR: string;
}

/**
 * Production reads the key from configuration. The zero-setup default makes
 * one on first start and keeps it in the data folder, so tokens survive a restart.
 */
export function loadSigningKey(settings: SigningKeySettings, log: (message: string) => void): SigningKey {
  if (settings.JWT_PRIVATE_KEY) return signingKeyFromPem(settings.JWT_PRIVATE_KEY, settings.JWT_KEY_ID);
  if (settings.JWT_PRIVATE_KEY_FILE)
    return signingKeyFromPem(fs.readFileSync(settings.JWT_PRIVATE_KEY_FILE, 'utf8'), settings.JWT_KEY_ID);
  const file = path.resolve(settings.DATA_DIR, 'jwt-signing-key.pem');
  if (fs.existsSync(file)) return signingKeyFromPem(fs.readFileSync(file, 'utf8'), settings.JWT_KEY_ID);
  const key = generateSigningKey();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), { mode: 0o600 });
  log(`generated a JWT signing key at ${file} (set JWT_PRIVATE_KEY in production)`);
  return key;
}

export function publicJwk(key: Pick<SigningKey, 'kid' | 'alg' | 'publicKey'>) {
  return { ...key.publicKey.export({ format: 'jwk' }), kid: key.kid, use: 'sig', alg: key.alg };
}
