import path from 'node:path';
import { createPool } from '@msp/db';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Pool } from 'pg';
import type { Sql } from '@msp/events';
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

/** The tables whose rows link's events describe. */
type EventfulTable = 'managed_tenants' | 'sync_runs' | 'onboardings' | 'offboardings' | 'moves';

/**
 * Locks the row for the rest of the transaction; false when there is none. A change reads the
 * row's "before" after this, so `changes` is exact, and the events of one resource commit, and
 * take their `seq`, in the order of its changes.
 */
export async function lockRow(tx: Sql, table: EventfulTable, id: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM ${table} WHERE id = $1::uuid FOR UPDATE`, id);
  return rows.length > 0;
}
