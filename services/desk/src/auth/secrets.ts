import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: object,
) => Promise<Buffer>;

// Client secrets may be chosen by people (the bootstrap client): a slow, salted
// hash. N=2^14 costs ~30 ms, acceptable on an endpoint that is rate limited anyway.
const PARAMS = { N: 16384, r: 8, p: 1 };

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(secret, salt, 32, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** Checks a presented secret against a stored hash (one scrypt of the cost the hash names). */
export type SecretVerifier = (secret: string, stored: string) => Promise<boolean>;

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(secret, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/**
 * A hash of a random secret nobody knows, with the current cost: checked instead of a real one for
 * unknown and revoked clients, so a caller cannot tell them from a wrong secret by timing.
 */
const DECOY = hashSecret(randomBytes(16).toString('hex'));
export function decoyHash(): Promise<string> {
  return DECOY;
}

/** Refresh tokens are long random values: a fast hash is enough and allows lookup by hash. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function randomToken(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
