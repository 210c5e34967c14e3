import path from 'node:path';
import { openDatabase, type Database } from '@msp/db';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { DB } from './generated/kysely/database';

/** hr's database as every repository takes it: the service's Kysely instance, or a transaction of it. */
export type Db = Kysely<DB>;

export type HrDatabase = Database<DB>;

/** hr's one pool for its requests, its jobs and @msp/events. */
export function createDb(databaseUrl: string): HrDatabase {
  return openDatabase<DB>(databaseUrl, { applicationName: 'hr' });
}

/** How many rows `query` finds: count(*) over its FROM and WHERE. */
export async function countOf<TB extends keyof DB>(query: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  return (await query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()).count;
}

/** The same folder from src/ (tests) and dist/ (production). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../prisma/migrations');
