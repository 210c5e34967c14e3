import { Client } from 'pg';

// PostgreSQL silently truncates longer identifiers, which would make two names collide.
const MAX_IDENTIFIER_BYTES = 63;

/** Quotes an identifier for PostgreSQL (`my"db` becomes `"my""db"`). */
export function quoteIdentifier(name: string): string {
  if (name.length === 0 || Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES || name.includes('\0')) {
    throw new Error(
      `Invalid PostgreSQL identifier ${JSON.stringify(name)}: 1 to ${MAX_IDENTIFIER_BYTES} bytes, no NUL.`,
    );
  }
  return `"${name.replace(/"/g, '""')}"`;
}

/** The URL of database `dbName` on the server of `serverUrl`; user, host, port and options kept. */
export function databaseUrlFor(serverUrl: string, dbName: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(dbName)}`;
  return url.toString();
}

/** The database name a URL points at (`postgres` when it names none, as libpq does). */
export function databaseNameOf(databaseUrl: string): string {
  return decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, '')) || 'postgres';
}

export async function withClient<T>(databaseUrl: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates database `name`; `adminUrl` is any database on that server the user may connect to. */
export async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const sql = `CREATE DATABASE ${quoteIdentifier(name)}`;
  await withClient(adminUrl, (client) => client.query(sql));
}

/** Drops database `name` if it exists, closing its open connections first (WITH (FORCE)). */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const sql = `DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`;
  await withClient(adminUrl, (client) => client.query(sql));
}
