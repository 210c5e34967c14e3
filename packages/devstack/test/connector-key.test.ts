import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectorKeyEnv, connectorKeyFileOf } from '../src/connector-key';

describe('connectorKeyEnv', () => {
  const dataRoot = () => fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-key-'));

  test('When link starts the first time, then a 32-byte key is written under <data>/link and passed; later starts reuse it', () => {
    const root = dataRoot();
    const first = connectorKeyEnv('link', root, {});
    expect(first.CONNECTOR_ENCRYPTION_KEY).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(first.CONNECTOR_ENCRYPTION_KEY!, 'base64')).toHaveLength(32);
    expect(fs.readFileSync(connectorKeyFileOf(root), 'utf8').trim()).toBe(first.CONNECTOR_ENCRYPTION_KEY);
    expect(connectorKeyFileOf(root)).toBe(path.join(root, 'link', 'connector-encryption.key'));
    expect(fs.statSync(connectorKeyFileOf(root)).mode & 0o777).toBe(0o600);
    expect(connectorKeyEnv('link', root, {})).toEqual(first);
  });

  test('When the caller sets CONNECTOR_ENCRYPTION_KEY, or the service is not link, then nothing is written or passed', () => {
    const root = dataRoot();
    expect(connectorKeyEnv('link', root, { CONNECTOR_ENCRYPTION_KEY: 'x' })).toEqual({});
    expect(connectorKeyEnv('desk', root, {})).toEqual({});
    expect(fs.existsSync(connectorKeyFileOf(root))).toBe(false);
  });

  test('When the key file is damaged, then the start stops naming the file', () => {
    const root = dataRoot();
    fs.mkdirSync(path.join(root, 'link'), { recursive: true });
    fs.writeFileSync(connectorKeyFileOf(root), 'not a key');
    expect(() => connectorKeyEnv('link', root, {})).toThrow(connectorKeyFileOf(root));
  });
});
