import {
  databaseNameOf,
  databaseUrlFor,
  needsEmbeddedPostgres,
  redactPassword,
  resolveDatabaseUrls,
} from '../src/database-urls';

describe('databaseUrlFor', () => {
  test('When given a server URL, then only the database changes: credentials, port and options stay', () => {
    expect(databaseUrlFor('postgres://app:p%40ss@db.internal:6543/postgres?sslmode=require', 'desk')).toBe(
      'postgres://app:p%40ss@db.internal:6543/desk?sslmode=require',
    );
  });

  test('When the server URL names no database, then the database is added', () => {
    expect(databaseUrlFor('postgresql://postgres@127.0.0.1:5432', 'hr')).toBe(
      'postgresql://postgres@127.0.0.1:5432/hr',
    );
  });

  test('When a database name needs escaping, then it round-trips', () => {
    const url = databaseUrlFor('postgres://u@h/x', 'my db');
    expect(databaseNameOf(url)).toBe('my db');
  });
});

describe('redactPassword', () => {
  test('When a URL carries a password, then it is masked and the rest is kept', () => {
    expect(redactPassword('postgres://app:secret@db:5432/desk')).toBe('postgres://app:***@db:5432/desk');
  });

  test('When there is no password, then the URL is unchanged', () => {
    expect(redactPassword('redis://cache:6379')).toBe('redis://cache:6379');
  });
});

describe('choosing the databases', () => {
  const none = { databaseServerUrl: undefined, databaseUrlOverrides: {} };

  test('When nothing is configured, then the embedded server is needed and serves all three', () => {
    expect(needsEmbeddedPostgres(none)).toBe(true);
    expect(resolveDatabaseUrls(none, 'postgres://postgres:postgres@127.0.0.1:54329/postgres')).toEqual({
      desk: 'postgres://postgres:postgres@127.0.0.1:54329/desk',
      link: 'postgres://postgres:postgres@127.0.0.1:54329/link',
      hr: 'postgres://postgres:postgres@127.0.0.1:54329/hr',
    });
  });

  test('When DATABASE_URL is set, then no embedded server is needed and per-service overrides win', () => {
    const config = {
      databaseServerUrl: 'postgres://u:p@server:5432/postgres',
      databaseUrlOverrides: { link: 'postgres://other:q@elsewhere:5433/integration' },
    };
    expect(needsEmbeddedPostgres(config)).toBe(false);
    expect(resolveDatabaseUrls(config, undefined)).toEqual({
      desk: 'postgres://u:p@server:5432/desk',
      link: 'postgres://other:q@elsewhere:5433/integration',
      hr: 'postgres://u:p@server:5432/hr',
    });
  });

  test('When only some services have overrides, then the others still need the embedded server', () => {
    const config = { databaseServerUrl: undefined, databaseUrlOverrides: { desk: 'postgres://u@h/desk' } };
    expect(needsEmbeddedPostgres(config)).toBe(true);
    expect(resolveDatabaseUrls(config, 'postgres://e@127.0.0.1:1/postgres').desk).toBe('postgres://u@h/desk');
  });

  test('When every service has an override, then no server at all is needed', () => {
    const config = {
      databaseServerUrl: undefined,
      databaseUrlOverrides: { desk: 'postgres://h/d', link: 'postgres://h/l', hr: 'postgres://h/h' },
    };
    expect(needsEmbeddedPostgres(config)).toBe(false);
  });
});
