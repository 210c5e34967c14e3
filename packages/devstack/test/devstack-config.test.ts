import path from 'node:path';
import { readDevstackConfig } from '../src/devstack-config';

const repo = '/repo';

describe('readDevstackConfig', () => {
  test('When nothing is set, then the defaults give an embedded database under <repo>/.data and ports 3001-3003', () => {
    const config = readDevstackConfig({}, repo);
    expect(config).toMatchObject({
      dataRoot: path.join(repo, '.data'),
      host: '127.0.0.1',
      ports: { desk: 3001, link: 3002, hr: 3003 },
      databaseServerUrl: undefined,
      databaseUrlOverrides: {},
      embeddedPostgresPort: 54329,
      readyTimeoutMs: 60000,
      stopTimeoutMs: 15000,
      logFormat: 'pretty',
      color: false,
      serviceCommand: undefined,
    });
  });

  test('When variables are set, then they are used', () => {
    const config = readDevstackConfig(
      {
        DATABASE_URL: 'postgres://u:p@db:5432/postgres',
        HR_DATABASE_URL: 'postgresql://u:p@db2/payroll',
        EMBEDDED_PG_PORT: '55000',
        DESK_PORT: '4001',
        DEVSTACK_DATA_DIR: '/var/lib/x',
        DEVSTACK_LOG_FORMAT: 'json',
        DEVSTACK_SERVICE_CMD: 'node fake.js {service}',
        FORCE_COLOR: '1',
      },
      repo,
    );
    expect(config.databaseServerUrl).toBe('postgres://u:p@db:5432/postgres');
    expect(config.databaseUrlOverrides).toEqual({ hr: 'postgresql://u:p@db2/payroll' });
    expect(config.embeddedPostgresPort).toBe(55000);
    expect(config.ports.desk).toBe(4001);
    expect(config.dataRoot).toBe('/var/lib/x');
    expect(config.logFormat).toBe('json');
    expect(config.serviceCommand).toEqual(['node', 'fake.js', '{service}']);
    expect(config.color).toBe(true);
  });

  test('When a variable is set but empty, then it counts as unset', () => {
    expect(readDevstackConfig({ DATABASE_URL: '', DESK_PORT: ' ' }, repo)).toMatchObject({
      databaseServerUrl: undefined,
      ports: { desk: 3001 },
    });
  });

  test('When a port is not a number, then the error names the variable', () => {
    expect(() => readDevstackConfig({ EMBEDDED_PG_PORT: 'abc' }, repo)).toThrow(/EMBEDDED_PG_PORT=abc/);
    expect(() => readDevstackConfig({ LINK_PORT: '70000' }, repo)).toThrow(/LINK_PORT=70000/);
  });

  test('When two services would share a port, then the start is refused', () => {
    expect(() => readDevstackConfig({ HR_PORT: '3001' }, repo)).toThrow(/desk and hr would both listen on port 3001/);
  });

  test('When DATABASE_URL is not a PostgreSQL URL, then the error names it', () => {
    expect(() => readDevstackConfig({ DATABASE_URL: 'mysql://u@h/db' }, repo)).toThrow(
      /DATABASE_URL must start with postgres:\/\//,
    );
    expect(() => readDevstackConfig({ DESK_DATABASE_URL: 'not a url' }, repo)).toThrow(
      /DESK_DATABASE_URL is not a URL/,
    );
  });

  test('When NO_COLOR is set, then a terminal gets no colour', () => {
    expect(readDevstackConfig({}, repo, true).color).toBe(true);
    expect(readDevstackConfig({ NO_COLOR: '1' }, repo, true).color).toBe(false);
  });
});
