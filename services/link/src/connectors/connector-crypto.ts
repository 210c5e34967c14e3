import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Connector secrets at rest: AES-256-GCM under CONNECTOR_ENCRYPTION_KEY (32 bytes). The stored
 * form names its version so the scheme can change without guessing ("v1.<iv>.<tag>.<ciphertext>",
 * base64url). GCM's tag makes a tampered or wrongly keyed value fail instead of decrypting to
 * garbage.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('CONNECTOR_ENCRYPTION_KEY must be 32 bytes (base64)');
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    },
    open(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('unknown connector secret format');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** A key in the form CONNECTOR_ENCRYPTION_KEY takes: 32 random bytes, base64. */
export function generateEncryptionKey(): string {
  return randomBytes(32).toString('base64');
}
