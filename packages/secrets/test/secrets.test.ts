import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createSecretBox, encryptionKeyProblems, isSealed, resolveEncryptionKey } from '../src';

describe('a secret box', () => {
  test('When a secret is sealed, then only the same key opens it, a changed byte fails, and the sealed form is recognised', () => {
    const box = createSecretBox(randomBytes(32));
    const sealed = box.seal('whsec_abc');
    expect(isSealed(sealed)).toBe(true);
    expect(isSealed('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe(false);
    expect(box.open(sealed)).toBe('whsec_abc');
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('whsec_abd').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => createSecretBox(randomBytes(16), 'WEBHOOK_ENCRYPTION_KEY')).toThrow(
      'WEBHOOK_ENCRYPTION_KEY must be 32 bytes',
    );
  });
});

describe('the key', () => {
  test('When no key is configured, then one is generated once into the data folder (0600) and reused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secrets-'));
    const names = { variable: 'WEBHOOK_ENCRYPTION_KEY', file: 'webhook-encryption.key' };
    const first = resolveEncryptionKey(undefined, dir, names);
    expect(first).toHaveLength(32);
    expect(resolveEncryptionKey(undefined, dir, names)).toEqual(first);
    expect(fs.statSync(path.join(dir, 'webhook-encryption.key')).mode & 0o777).toBe(0o600);
    const configured = randomBytes(32);
    expect(resolveEncryptionKey(configured.toString('base64'), dir, names)).toEqual(configured);
  });

  test('When production has no key or a key is malformed, then the problem names the variable and never echoes the value', () => {
    expect(encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', undefined, 'development')).toEqual([]);
    expect(encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', undefined, 'production')).toEqual([
      expect.stringContaining('WEBHOOK_ENCRYPTION_KEY is required when NODE_ENV=production'),
    ]);
    const [problem] = encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', 'hunter2', 'production');
    expect(problem).toContain('WEBHOOK_ENCRYPTION_KEY must be 32 bytes');
    expect(problem).not.toContain('hunter2');
    expect(encryptionKeyProblems('WEBHOOK_ENCRYPTION_KEY', randomBytes(32).toString('base64'), 'production')).toEqual(
      [],
    );
  });
});
