import { Client } from 'pg';
import { databaseNameOf, databaseUrlFor, redactPassword } from './database-urls';
import { DevstackError } from './devstack-error';

// PostgreSQL error codes (Appendix A of its manual).
const INVALID_CATALOG_NAME = '3D000'; // the database does not exist
const DUPLICATE_DATABASE = '42P04';
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * Creates each database that does not exist yet, from the server's `postgres`
 * maintenance database. A user who may not connect there (some managed
 * servers) can still use databases that exist: then the database itself is
 * tried. Returns the names it created.
 */
export async function ensureDatabases(databaseUrls: readonly string[]): Promise<string[]> {
  const created: string[] = [];
  for (const url of databaseUrls) {
    if (await ensureDatabase(url)) created.push(databaseNameOf(url));
  }
  return created;
}

async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseNameOf(url);
  const maintenanceUrl = databaseUrlFor(url, 'postgres');
  try {
    return await withClient(maintenanceUrl, async (client) => {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (rowCount) return false;
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      return true;
    });
  } catch (error) {
    // Two launchers starting at once against one server: the other one won.
    if (codeOf(error) === DUPLICATE_DATABASE) return false;
    if (codeOf(error) === INSUFFICIENT_PRIVILEGE) {
      throw new DevstackError(
        `Database "${name}" does not exist on ${redactPassword(url)} and this user may not create it. ` +
          `Create it (CREATE DATABASE "${name}"), grant CREATEDB, or point the service at an existing database.`,
      );
    }
    if (!isRefusedByServer(error)) throw unreachable(maintenanceUrl, error);
  }
  try {
    await withClient(url, () => Promise.resolve());
    return false;
  } catch (error) {
    throw unreachable(url, error);
  }
}

/** The server answered but would not let us into the maintenance database. */
function isRefusedByServer(error: unknown): boolean {
  const code = codeOf(error);
  // 28xxx: authorization (no CONNECT right, pg_hba rule); 3D000: no `postgres` database.
  return code === INVALID_CATALOG_NAME || (code?.startsWith('28') ?? false);
}

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function codeOf(error: unknown): string | undefined {
  return (error as { code?: string } | undefined)?.code;
}

function unreachable(url: string, error: unknown): DevstackError {
  const reason = error instanceof Error ? error.message || codeOf(error) : String(error);
  return new DevstackError(`Cannot use PostgreSQL at ${redactPassword(url)}: ${reason}`);
}
