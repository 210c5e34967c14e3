import { createPublicKey, type KeyObject } from 'node:crypto';
import { keyAlgorithm, thumbprint, type SigningKey } from './signing-key';

/** A public key desk no longer signs with, still served in the JWKS so its tokens verify until they expire. */
export type VerificationKey = Pick<SigningKey, 'kid' | 'alg' | 'publicKey'>;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * JWT_PREVIOUS_PUBLIC_KEYS: one or more PEM blocks, one after the other (a public key, or the old
 * private key, whose public half is taken; literal "\n" allowed as in JWT_PRIVATE_KEY). Each key's
 * `kid` is its RFC 7638 thumbprint, the kid desk gave it while it was the signing key (unless
 * JWT_KEY_ID named another one then). Problems are collected, never half-applied.
 */
export function parsePreviousPublicKeys(raw: string | undefined, problems: string[]): VerificationKey[] {
  if (raw === undefined || raw.trim() === '') return [];
  const text = raw.includes('\\n') ? raw.replace(/\\n/g, '\n') : raw;
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) {
    problems.push(
      'JWT_PREVIOUS_PUBLIC_KEYS holds no PEM block (expected -----BEGIN PUBLIC KEY----- … -----END PUBLIC KEY-----, several one after the other)',
    );
    return [];
  }
  const keys: VerificationKey[] = [];
  blocks.forEach((pem, index) => {
    let publicKey: KeyObject;
    try {
      publicKey = createPublicKey(pem);
    } catch {
      problems.push(`JWT_PREVIOUS_PUBLIC_KEYS: PEM block ${index + 1} is not a readable key`);
      return;
    }
    const alg = keyAlgorithm(publicKey);
    if (!alg) {
      problems.push(
        `JWT_PREVIOUS_PUBLIC_KEYS: PEM block ${index + 1} is neither an EC P-256 key nor an RSA key of at least 2048 bits`,
      );
      return;
    }
    const kid = thumbprint(publicKey);
    if (!keys.some((key) => key.kid === kid)) keys.push({ kid, alg, publicKey });
  });
  return keys;
}
