import path from 'node:path';
import { createPool, type PoolOptions } from '@msp/db';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Pool } from 'pg';
import { Prisma, PrismaClient } from './generated/prisma/client';

/**
 * The Prisma client, and the pg pool under it that the hottest reads use directly (@msp/db sqlRows);
 * `readPool` is where the lists read (the replica's pool with DATABASE_READ_URL, else `pool`).
 */
export type Db = PrismaClient & { readonly pool: Pool; readonly readPool: Pool };
/** A client or an interactive transaction: repositories accept either. */
export type DbTx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

/**
 * `options.acquireTimeoutMs`: DATABASE_POOL_ACQUIRE_TIMEOUT_MS (a request that gets no connection within it answers 503);
 * `options.readUrl`: DATABASE_READ_URL, the read replica's pool of the same settings.
 */
export function createDb(databaseUrl: string, options: PoolOptions & { readUrl?: string } = {}): Db {
  const { readUrl, ...poolOptions } = options;
  const pool = createPool(databaseUrl, poolOptions);
  // $disconnect() ends the pool too.
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  if (readUrl === undefined) return Object.assign(prisma, { pool, readPool: pool });
  const readPool = createPool(readUrl, poolOptions);
  const disconnect = prisma.$disconnect.bind(prisma);
  return Object.assign(prisma, {
    pool,
    readPool,
    async $disconnect() {
      await Promise.all([disconnect(), readPool.end()]);
    },
  });
}

/** The same folder from src/ (tests) and dist/ (production). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../prisma/migrations');

/** A unique constraint refused the write (Prisma P2002; through a raw query, P2010 with PostgreSQL's 23505). */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  if (error.code === 'P2002') return true;
  // A raw query's meta carries the driver's SQLSTATE; its message says it too.
  return error.code === 'P2010' && (JSON.stringify(error.meta ?? {}).includes('"23505"') || error.message.includes('Code: `23505`'));
}

/** A foreign key refused the write (Prisma P2003): e.g. deleting a row that another still names. */
export function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2003';
}

/** Runs a deletion and turns a foreign key's refusal (another row came to name it meanwhile) into `onReferenced()`. */
export async function unlessReferenced<T>(write: Promise<T>, onReferenced: () => Error): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isForeignKeyViolation(error)) throw onReferenced();
    throw error;
  }
}

/**
 * Runs a write that a unique constraint may refuse and turns that refusal into `onDuplicate()`.
 * The constraint, not a prior read, decides: two concurrent writers cannot both pass.
 */
export async function unlessDuplicate<T>(write: Promise<T>, onDuplicate: () => Error): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error)) throw onDuplicate();
    throw error;
  }
}
