import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureServiceClientFile, serviceClientFileOf } from '../src/service-client';
import { buildServiceEnv } from '../src/service-env';
import { serviceByName } from '../src/services';

const config = { host: '0.0.0.0', ports: { desk: 3001, link: 3002, hr: 3003 }, dataRoot: '/repo/.data' };
const credential = {
  client_id: 'link',
  client_secret: 's'.repeat(43),
  scopes: 'read:users read:tickets write:tickets admin:tenant',
};

describe('link service client at desk', () => {
  test('When the data folder has no service-client.json, then one is written once with a random secret and read back on the next start', () => {
    const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-sc-'));
    const first = ensureServiceClientFile(dataRoot);
    const second = ensureServiceClientFile(dataRoot);
    // admin:tenant: link deactivates a leaver's desk user (DELETE /users/:id).
    expect(first).toEqual({
      client_id: 'link',
      client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      scopes: 'read:users read:tickets write:tickets admin:tenant',
    });
    expect(second).toEqual(first);
    expect(fs.statSync(serviceClientFileOf(dataRoot)).mode & 0o777).toBe(0o600);
    expect(ensureServiceClientFile(fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-sc-'))).client_secret).not.toBe(
      first.client_secret,
    );
  });

  test('When service-client.json is from before link deactivated users, then the start adds admin:tenant, keeps the secret and saves it', () => {
    const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-sc-'));
    const old = { client_id: 'link', client_secret: 'k'.repeat(43), scopes: 'read:users read:tickets write:tickets' };
    fs.writeFileSync(serviceClientFileOf(dataRoot), JSON.stringify(old), { mode: 0o600 });
    const upgraded = ensureServiceClientFile(dataRoot);
    expect(upgraded).toEqual({ ...old, scopes: 'read:users read:tickets write:tickets admin:tenant' });
    expect(JSON.parse(fs.readFileSync(serviceClientFileOf(dataRoot), 'utf8'))).toEqual(upgraded);
    expect(fs.statSync(serviceClientFileOf(dataRoot)).mode & 0o777).toBe(0o600);
  });

  test('When service-client.json is damaged, then the start stops naming the file', () => {
    const dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-sc-'));
    fs.writeFileSync(serviceClientFileOf(dataRoot), '{"client_id":');
    expect(() => ensureServiceClientFile(dataRoot)).toThrow(/service-client\.json is not valid JSON/);
  });

  test('When desk and link are built, then desk gets SERVICE_CLIENTS and link the matching DESK_* credential; hr gets neither', () => {
    const desk = buildServiceEnv(serviceByName('desk'), config, 'u', {}, credential);
    const link = buildServiceEnv(serviceByName('link'), config, 'u', {}, credential);
    const hr = buildServiceEnv(serviceByName('hr'), config, 'u', {}, credential);
    expect(JSON.parse(desk['SERVICE_CLIENTS']!)).toEqual([credential]);
    expect(desk['DESK_CLIENT_SECRET']).toBeUndefined();
    expect(link).toMatchObject({
      DESK_API_URL: 'http://127.0.0.1:3001/api/v1',
      DESK_CLIENT_ID: 'link',
      DESK_CLIENT_SECRET: credential.client_secret,
    });
    expect(link['SERVICE_CLIENTS']).toBeUndefined();
    expect(hr['SERVICE_CLIENTS']).toBeUndefined();
    expect(hr['DESK_CLIENT_SECRET']).toBeUndefined();
  });

  test('When the caller configured the credential themselves, then their values win', () => {
    const own = {
      SERVICE_CLIENTS: '[]',
      DESK_CLIENT_ID: 'mine',
      DESK_CLIENT_SECRET: 'mine-secret-000000',
      DESK_API_URL: 'https://desk.example/api/v1',
    };
    expect(buildServiceEnv(serviceByName('desk'), config, 'u', own, credential)['SERVICE_CLIENTS']).toBe('[]');
    expect(buildServiceEnv(serviceByName('link'), config, 'u', own, credential)).toMatchObject({
      DESK_CLIENT_ID: 'mine',
      DESK_CLIENT_SECRET: 'mine-secret-000000',
      DESK_API_URL: 'https://desk.example/api/v1',
    });
  });
});
