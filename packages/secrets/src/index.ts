import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Secrets at rest (link's connector tokens, every service's webhook signing secrets): AES-256-GCM
 * under a 32-byte key. The stored form names its version so the scheme can change without guessing
 * ("v1.<iv>.<tag>.<ciphertext>", base64url). GCM's tag makes a tampered or wrongly keyed value fail
 * instead of decrypting to garbage. A copy of the database alone gives none of them away.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/** What a sealed value looks like (a plaintext never does: it has no three dots in base64url parts). */
const SEALED = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function isSealed(value: string): boolean {
  return SEALED.test(value);
}

/** `variable` names the key in errors (CONNECTOR_ENCRYPTION_KEY, WEBHOOK_ENCRYPTION_KEY). */
export function createSecretBox(key: Buffer, variable = 'the encryption key'): SecretBox {
  if (key.length !== 32) throw new Error(`${variable} must be 32 bytes (base64)`);
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), ciphertext]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || ciphertext === undefined) throw new Error('unknown sealed secret format');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** A key in the form the *_ENCRYPTION_KEY variables take: 32 random bytes, base64. */
export function generateEncryptionKey(): string {
  return randomBytes(32).toString('base64');
}

/**
 * The problems of a key variable for a service's config check: required in production (a key
 * generated per pod would differ between replicas), 32 bytes in base64 when set. The value is
 * never echoed.
 */
export function encryptionKeyProblems(variable: string, value: string | undefined, nodeEnv: string): string[] {
  if (value === undefined) {
    return nodeEnv === 'production'
      ? [`${variable} is required when NODE_ENV=production (32 random bytes, base64: \`openssl rand -base64 32\`)`]
      : [];
  }
  return /^[A-Za-z0-9+/]{43}=$/.test(value)
    ? []
    : [`${variable} must be 32 bytes in base64 (44 characters ending in "="; \`openssl rand -base64 32\`)`];
}

/**
 * The key: the variable's value when set (always in production, where config refuses to start
 * without it); otherwise one kept in the service's data directory (`DATA_DIR/<file>`), made once,
 * so a developer's secrets still open after a restart (`pnpm start` gives each service its own).
 */
export function resolveEncryptionKey(
  configured: string | undefined,
  dataDir: string,
  { variable, file }: { variable: string; file: string },
): Buffer {
  if (configured) return Buffer.from(configured, 'base64');
  const keyFile = path.resolve(dataDir, file);
  if (!existsSync(keyFile)) {
    mkdirSync(path.dirname(keyFile), { recursive: true });
    try {
      writeFileSync(keyFile, `${generateEncryptionKey()}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process made it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${keyFile} does not hold a 32-byte base64 key (${variable})`);
  return key;
}
