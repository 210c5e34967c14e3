import { createTestDatabase, quoteIdentifier } from '@msp/db';
import { Client } from 'pg';

/** The login the stand-in replica is read through: it may read every table and write none. */
export const READ_REPLICA_ROLE = 'msp_reads';

export interface StandInReplica {
  /** DATABASE_READ_URL for the app: the stand-in database, as READ_REPLICA_ROLE. */
  url: string;
  /** The stand-in database as postgres (a test puts rows there that the primary lacks). */
  adminUrl: string;
  name: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A read replica that lags without end: a second database of the service's migrations that the
 * primary's writes never reach, read through a role whose transactions are read-only. A list read
 * there does not show what the caller just wrote; a write sent there fails (25006). So a test sees
 * which reads go to DATABASE_READ_URL and that no write does, on one PostgreSQL server.
 */
export async function createStandInReplica(migrationsDir: string): Promise<StandInReplica> {
  const database = await createTestDatabase({ migrationsDir, label: 'replica' });
  await withAdmin(database.url, async (client) => {
    // Test files run in parallel: the role may be being created by another one right now.
    await client.query(`DO $$ BEGIN
        CREATE ROLE ${READ_REPLICA_ROLE} LOGIN;
        ALTER ROLE ${READ_REPLICA_ROLE} SET default_transaction_read_only = on;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
      END $$`);
    await client.query(`GRANT CONNECT ON DATABASE ${quoteIdentifier(database.name)} TO ${READ_REPLICA_ROLE}`);
    await client.query(`GRANT USAGE ON SCHEMA public TO ${READ_REPLICA_ROLE}`);
    await client.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${READ_REPLICA_ROLE}`);
  });
  const url = new URL(database.url);
  url.username = READ_REPLICA_ROLE;
  url.password = '';
  return { url: url.toString(), adminUrl: database.url, name: database.name, drop: database.drop };
}
