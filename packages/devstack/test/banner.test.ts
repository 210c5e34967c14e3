import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readDevClientFile, renderBanner, shellQuote, tokenCurl } from '../src/banner';

const base = {
  services: [
    { name: 'desk', baseUrl: 'http://localhost:3001/api/v1' },
    { name: 'link', baseUrl: 'http://localhost:3002/api/v1' },
    { name: 'hr', baseUrl: 'http://localhost:3003/api/v1' },
  ],
  tokenUrl: 'http://localhost:3001/api/v1/auth/token',
  devClientFile: '/repo/.data/dev-client.json',
  database: ['embedded PostgreSQL 18'],
  redis: 'REDIS_URL not set',
  bootstrapClientId: undefined,
  devClient: undefined,
};

describe('shellQuote', () => {
  test.each(['plain', "it's", 'a b $HOME `x` "q" \\', ''])(
    'When %p is quoted, then a shell reads it back unchanged',
    (value) => {
      expect(execFileSync('/bin/sh', ['-c', `printf %s ${shellQuote(value)}`], { encoding: 'utf8' })).toBe(value);
    },
  );
});

describe('tokenCurl', () => {
  test('When run through a shell, then curl receives the JSON body with the exact credentials', () => {
    const command = tokenCurl('http://localhost:3001/api/v1/auth/token', {
      clientId: 'id-1',
      clientSecret: "se'cr$et",
    });
    // Replace curl by a printer of its last argument to see what it would send.
    const body = execFileSync('/bin/sh', ['-c', `curl() { for a; do :; done; printf %s "$a"; }; ${command}`], {
      encoding: 'utf8',
    });
    expect(JSON.parse(body)).toEqual({
      grant_type: 'client_credentials',
      client_id: 'id-1',
      client_secret: "se'cr$et",
    });
  });
});

describe('renderBanner', () => {
  test('When desk wrote the dev client file, then the banner shows the URLs, the credentials and a curl with them', () => {
    const text = renderBanner({
      ...base,
      devClient: { client_id: 'cid', client_secret: 'csecret', tenant: 'default' },
    });
    expect(text).toContain('desk  http://localhost:3001/api/v1');
    expect(text).toContain('hr    http://localhost:3003/api/v1');
    expect(text).toContain('saved in /repo/.data/dev-client.json');
    expect(text).toContain('client_secret  csecret');
    expect(text).toContain('"client_id":"cid","client_secret":"csecret"');
  });

  test('When bootstrap variables are used, then the secret is not printed and the curl reads the variables', () => {
    const text = renderBanner({ ...base, bootstrapClientId: 'ci-client' });
    expect(text).toContain('API client: ci-client');
    expect(text).toContain('"client_secret=$BOOTSTRAP_CLIENT_SECRET"');
  });

  test('When there is no file, then the banner says where the credentials are instead', () => {
    expect(renderBanner(base)).toContain(
      "desk wrote no /repo/.data/dev-client.json; its id and secret are in desk's log above",
    );
  });
});

describe('readDevClientFile', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'devstack-banner-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('When the file is valid, then its client is returned', () => {
    const file = path.join(dir, 'ok.json');
    fs.writeFileSync(file, JSON.stringify({ client_id: 'a', client_secret: 'b', tenant: 't' }));
    expect(readDevClientFile(file)).toEqual({ client_id: 'a', client_secret: 'b', tenant: 't' });
  });

  test('When the file is missing or malformed, then there is no client', () => {
    fs.writeFileSync(path.join(dir, 'bad.json'), '{"client_id": 1}');
    expect(readDevClientFile(path.join(dir, 'bad.json'))).toBeUndefined();
    expect(readDevClientFile(path.join(dir, 'missing.json'))).toBeUndefined();
  });
});
