import path from 'node:path';
import { authSettingsFor, buildServiceEnv, loopbackAddressFor, readyzUrlOf, baseUrlOf } from '../src/service-env';
import { serviceByName } from '../src/services';

const config = { host: '127.0.0.1', ports: { desk: 3001, link: 3002, hr: 3003 }, dataRoot: '/repo/.data' };

describe('buildServiceEnv', () => {
  test('When building desk, then it gets its port, database, data folder, dev client file and the shared auth settings', () => {
    const env = buildServiceEnv(serviceByName('desk'), config, 'postgres://x@h/desk', {
      PATH: '/bin',
      LOG_LEVEL: 'debug',
    });
    expect(env).toEqual({
      PATH: '/bin',
      LOG_LEVEL: 'debug',
      PORT: '3001',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://x@h/desk',
      DATA_DIR: path.join('/repo/.data', 'desk'),
      AUTH_ISSUER: 'http://localhost:3001/api/v1',
      AUTH_AUDIENCE: 'msp-api',
      AUTH_JWKS_URL: 'http://127.0.0.1:3001/api/v1/.well-known/jwks.json',
      OUTBOUND_ALLOW_LOOPBACK: 'true',
      MALLOC_MMAP_THRESHOLD_: '131072',
      DEV_CLIENT_FILE: path.join('/repo/.data', 'dev-client.json'),
      CORS_ORIGINS: [3001, 3002, 3003]
        .flatMap((port) => [`http://localhost:${port}`, `http://127.0.0.1:${port}`])
        .join(','),
    });
  });

  test("When the ports are moved, then desk lets the reference pages at the ports in use fetch tokens (CORS_ORIGINS), and the caller's own list wins", () => {
    const moved = { ...config, ports: { desk: 4301, link: 4302, hr: 4303 } };
    expect(buildServiceEnv(serviceByName('desk'), moved, 'u', {})['CORS_ORIGINS']!.split(',')).toEqual([
      'http://localhost:4301',
      'http://127.0.0.1:4301',
      'http://localhost:4302',
      'http://127.0.0.1:4302',
      'http://localhost:4303',
      'http://127.0.0.1:4303',
    ]);
    // Bound to a specific address, the pages are reached there as well.
    expect(
      buildServiceEnv(serviceByName('desk'), { ...moved, host: '192.168.1.20' }, 'u', {})['CORS_ORIGINS'],
    ).toContain('http://192.168.1.20:4302');
    expect(
      buildServiceEnv(serviceByName('desk'), moved, 'u', { CORS_ORIGINS: 'https://docs.example.com' })['CORS_ORIGINS'],
    ).toBe('https://docs.example.com');
    expect(buildServiceEnv(serviceByName('desk'), moved, 'u', { CORS_ORIGINS: '' })['CORS_ORIGINS']).toContain(
      'http://localhost:4303',
    );
    // Only desk has a token endpoint.
    expect(buildServiceEnv(serviceByName('link'), moved, 'u', {})['CORS_ORIGINS']).toBeUndefined();
  });

  test('When building link or hr, then there is no dev client file and the JWKS still points at desk', () => {
    const env = buildServiceEnv(serviceByName('hr'), config, 'postgres://x@h/hr', {});
    expect(env['DEV_CLIENT_FILE']).toBeUndefined();
    expect(env['PORT']).toBe('3003');
    expect(env['AUTH_JWKS_URL']).toBe('http://127.0.0.1:3001/api/v1/.well-known/jwks.json');
  });

  test('When the caller sets DATABASE_URL and PORT, then the per-service values replace them', () => {
    const env = buildServiceEnv(serviceByName('link'), config, 'postgres://x@h/link', {
      DATABASE_URL: 'postgres://x@h/postgres',
      PORT: '9999',
    });
    expect(env['DATABASE_URL']).toBe('postgres://x@h/link');
    expect(env['PORT']).toBe('3002');
  });

  test('When REDIS_URL is set, then it is passed through; when it is empty, then it is absent', () => {
    expect(
      buildServiceEnv(serviceByName('desk'), config, 'u', { REDIS_URL: 'redis://127.0.0.1:6379' })['REDIS_URL'],
    ).toBe('redis://127.0.0.1:6379');
    expect('REDIS_URL' in buildServiceEnv(serviceByName('desk'), config, 'u', { REDIS_URL: '' })).toBe(false);
  });

  test('When the caller sets the auth variables, then they win over the derived ones', () => {
    const env = buildServiceEnv(serviceByName('link'), config, 'u', {
      AUTH_ISSUER: 'https://id.example/api/v1',
      AUTH_AUDIENCE: 'other',
      AUTH_JWKS_URL: 'https://id.example/jwks.json',
    });
    expect([env['AUTH_ISSUER'], env['AUTH_AUDIENCE'], env['AUTH_JWKS_URL']]).toEqual([
      'https://id.example/api/v1',
      'other',
      'https://id.example/jwks.json',
    ]);
  });

  test(
    'When the caller says nothing about loopback, then every service may call loopback ' +
      '(webhooks on localhost); when the caller sets it, then that wins',
    () => {
      for (const name of ['desk', 'link', 'hr'] as const)
        expect(buildServiceEnv(serviceByName(name), config, 'u', {})['OUTBOUND_ALLOW_LOOPBACK']).toBe('true');
      expect(
        buildServiceEnv(serviceByName('hr'), config, 'u', { OUTBOUND_ALLOW_LOOPBACK: 'false' })[
          'OUTBOUND_ALLOW_LOOPBACK'
        ],
      ).toBe('false');
    },
  );

  test('When the launcher starts a service, then glibc keeps a fixed mmap threshold as in the images, unless the caller set one', () => {
    for (const name of ['desk', 'link', 'hr'] as const)
      expect(buildServiceEnv(serviceByName(name), config, 'u', {})['MALLOC_MMAP_THRESHOLD_']).toBe('131072');
    expect(
      buildServiceEnv(serviceByName('desk'), config, 'u', { MALLOC_MMAP_THRESHOLD_: '262144' })[
        'MALLOC_MMAP_THRESHOLD_'
      ],
    ).toBe('262144');
  });

  test('When the caller chose DEV_CLIENT_FILE, then desk writes there', () => {
    expect(
      buildServiceEnv(serviceByName('desk'), config, 'u', { DEV_CLIENT_FILE: '/tmp/c.json' })['DEV_CLIENT_FILE'],
    ).toBe('/tmp/c.json');
  });
});

describe('addresses', () => {
  test('When desk moves to another port, then issuer and JWKS follow it', () => {
    expect(authSettingsFor({ ...config, ports: { ...config.ports, desk: 4001 } }, {})).toEqual({
      issuer: 'http://localhost:4001/api/v1',
      audience: 'msp-api',
      jwksUrl: 'http://127.0.0.1:4001/api/v1/.well-known/jwks.json',
    });
  });

  test('When the services bind every interface, then they are checked over IPv4 loopback and shown as localhost', () => {
    const everywhere = { ...config, host: '0.0.0.0' };
    expect(readyzUrlOf(everywhere, serviceByName('link'))).toBe('http://127.0.0.1:3002/readyz');
    expect(baseUrlOf(everywhere, serviceByName('link'))).toBe('http://localhost:3002/api/v1');
  });

  test('When the host is a specific address, then that address is used, IPv6 in brackets', () => {
    expect(loopbackAddressFor('192.168.1.20')).toBe('192.168.1.20');
    expect(loopbackAddressFor('::1')).toBe('[::1]');
    expect(baseUrlOf({ ...config, host: '192.168.1.20' }, serviceByName('hr'))).toBe('http://192.168.1.20:3003/api/v1');
  });
});
