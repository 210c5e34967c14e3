import path from 'node:path';
import { openDatabase, uniqueViolation, type Database, type DatabaseOptions } from '@msp/db';
import type { Kysely } from 'kysely';
import type { DB } from './generated/kysely/database';

export type { DB } from './generated/kysely/database';

/** desk's database as every repository takes it: Kysely over the one pool, or a transaction of it (the same type). */
export type Db = Kysely<DB>;

/**
 * The one way to desk's database: Kysely over one pg pool, with @msp/db's type parsers (a
 * timestamptz is a Date, a date its text, an int8 a number), and `reads` for what tolerates the
 * replica's lag (list pages, their totals, the time export).
 */
export type DeskDatabase = Database<DB>;

/** Connections kept for the API's requests. */
const API_CONNECTIONS = 10;
/** Time exports streaming at once per instance, each on a connection of the pool beside the API's. */
export const TIME_EXPORT_POOL_SIZE = 4;

/**
 * The pool holds the API's connections and, beside them, one for each time export that may stream
 * at once, so long downloads never take the connections the API answers with.
 * `options.acquireTimeoutMs`: DATABASE_POOL_ACQUIRE_TIMEOUT_MS (a request that gets no connection within it answers 503);
 * `options.readUrl`: DATABASE_READ_URL, the read replica's pool of the same settings.
 */
export function createDb(databaseUrl: string, options: DatabaseOptions = {}): DeskDatabase {
  return openDatabase<DB>(databaseUrl, {
    applicationName: 'desk',
    max: API_CONNECTIONS + TIME_EXPORT_POOL_SIZE,
    ...options,
  });
}

/** The same folder from src/ (tests) and dist/ (production). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../prisma/migrations');

export { isForeignKeyViolation, uniqueViolation, unlessDuplicate, unlessReferenced } from '@msp/db';

/** A unique constraint refused the write (PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return uniqueViolation(error) !== undefined;
}

/**
 * A value for a jsonb column, as its JSON text: pg would send a JS array as a PostgreSQL array
 * literal, not as JSON. null stays SQL NULL.
 */
export function jsonb(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
