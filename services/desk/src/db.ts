import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from './generated/prisma/client';

export type Db = PrismaClient;
/** A client or an interactive transaction: repositories accept either. */
export type DbTx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

export function createDb(databaseUrl: string): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}

/** The same folder from src/ (tests) and dist/ (production). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../prisma/migrations');

/** A unique constraint refused the write (Prisma P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
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
