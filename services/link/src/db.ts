import path from 'node:path';
import { openDatabase, type Database, type DatabaseOptions } from '@msp/db';
import type { Kysely } from 'kysely';
import type { DB } from './generated/kysely/database';

/** link's database as every repository takes it: Kysely over the one pool, or a transaction of it (the same type). */
export type Db = Kysely<DB>;

/** The one way to link's database: Kysely over one pg pool, with @msp/db's type parsers. */
export type LinkDatabase = Database<DB>;

export function createDb(databaseUrl: string, options: DatabaseOptions = {}): LinkDatabase {
  return openDatabase<DB>(databaseUrl, { applicationName: 'link', ...options });
}

/** The same folder from src/ (tests) and dist/ (production). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../prisma/migrations');

/** The tables whose rows link's events describe. */
type EventfulTable = 'managed_tenants' | 'sync_runs' | 'onboardings' | 'offboardings' | 'moves';

/**
 * Locks the row for the rest of the transaction; false when there is none. A change reads the
 * row's "before" after this, so `changes` is exact, and the events of one resource commit, and
 * take their `seq`, in the order of its changes.
 */
export async function lockRow(tx: Db, table: EventfulTable, id: string): Promise<boolean> {
  const row = await tx.selectFrom(table).select('id').where('id', '=', id).forUpdate().executeTakeFirst();
  return row !== undefined;
}
