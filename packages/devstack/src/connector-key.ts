import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DevstackError } from './devstack-error';

type Env = Record<string, string | undefined>;

/** link's connector secrets key (CONNECTOR_ENCRYPTION_KEY): 32 random bytes, base64. */
const KEY_PATTERN = /^[A-Za-z0-9+/]{43}=$/;

export function connectorKeyFileOf(dataRoot: string): string {
  return path.join(dataRoot, 'link', 'connector-encryption.key');
}

/**
 * Reads `<data>/link/connector-encryption.key`, or writes a fresh random key there on the first
 * start: connectors created in one session still open in the next. A key the caller set in the
 * environment wins.
 */
export function connectorKeyEnv(serviceName: string, dataRoot: string, baseEnv: Env): Env {
  if (serviceName !== 'link' || baseEnv['CONNECTOR_ENCRYPTION_KEY']) return {};
  const file = connectorKeyFileOf(dataRoot);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  }
  const key = fs.readFileSync(file, 'utf8').trim();
  if (!KEY_PATTERN.test(key)) {
    throw new DevstackError(
      `${file} does not hold a 32-byte base64 key: restore it (connectors saved with it need it), or delete it to start with a new one`,
    );
  }
  return { CONNECTOR_ENCRYPTION_KEY: key };
}
