import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateEncryptionKey } from './connector-crypto';

/**
 * The key connector secrets are sealed with: CONNECTOR_ENCRYPTION_KEY when set (always in
 * production, where config refuses to start without it); otherwise one kept in link's data
 * directory (DATA_DIR/connector-encryption.key, the file `pnpm start` also uses), made once, so a
 * developer's connectors still open after a restart.
 */
export function resolveEncryptionKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, 'base64');
  const file = path.resolve(dataDir, 'connector-encryption.key');
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, `${generateEncryptionKey()}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process made it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key (CONNECTOR_ENCRYPTION_KEY)`);
  return key;
}
