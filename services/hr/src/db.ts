import path from 'node:path';
import { createPool } from '@msp/db';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Pool } from 'pg';
import { Prisma, PrismaClient } from './generated/prisma/client';

/** The Prisma client, and the pg pool under it that the hottest reads use directly (@msp/db sqlRows). */
export type Db = PrismaClient & { readonly pool: Pool };

export function createDb(databaseUrl: string): Db {
  const pool = createPool(databaseUrl);
  // $disconnect() ends the pool too.
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  return Object.assign(prisma, { pool });
}

/** The same folder from src/ (tests) and dist/ (production). */
export const MIGRATIONS_DIR = path.resolve(__dirname, '../prisma/migrations');

/**
 * The name of the unique constraint a failed write ran into (Prisma's P2002), if that is why it
 * failed. Through the pg driver adapter Prisma names the index, not the columns, in its metadata.
 */
export function violatedUniqueConstraint(error: unknown): string | undefined {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError) || error.code !== 'P2002') return undefined;
  const meta = error.meta as { target?: unknown; driverAdapterError?: { cause?: { constraint?: { index?: string } } } } | undefined;
  return meta?.driverAdapterError?.cause?.constraint?.index ?? (typeof meta?.target === 'string' ? meta.target : undefined) ?? 'unknown';
}

/** Prisma's P2025: the row an update or delete was meant for does not exist (or is not the caller's). */
export function isRecordNotFound(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025';
}
