import path from 'node:path';
import { openDatabase, type Database } from '@msp/db';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { DB } from './generated/kysely/database';

/** hr's database as every repository takes it: the service's Kysely instance, or a transaction of it. */
export type Db = Kysely<DB>;

export type HrDatabase = Database<DB>;

/** Connections kept for the API's requests, beside the payroll exports' (EXPORT_POOL_SIZE). */
const API_CONNECTIONS = 10;

/**
 * hr's pool (and, with `readUrl`, the replica's of the same size, which the lists and the exports
 * read). The payroll exports stream from it too, at most `exportConnections` at once per
 * instance (the export's semaphore); the pool holds that many more than the API's requests need, so
 * long downloads never take the connections the API answers with.
 */
export function createDb(
  databaseUrl: string,
  options: { exportConnections: number; acquireTimeoutMs?: number; readUrl?: string },
): HrDatabase {
  return openDatabase<DB>(databaseUrl, {
    max: API_CONNECTIONS + options.exportConnections,
    applicationName: 'hr',
    ...(options.acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs: options.acquireTimeoutMs }),
    ...(options.readUrl === undefined ? {} : { readUrl: options.readUrl }),
  });
}

/** How many rows `query` finds: count(*) over its FROM and WHERE. */
export async function countOf<TB extends keyof DB>(query: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  return (await query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count;
}

/** The same folder from src/ (tests) and dist/ (production). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../prisma/migrations');
