import { createSurvivingPool, poolConfig } from '@msp/db';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Pool } from 'pg';
import { PrismaClient } from '../generated/prisma/client';

/**
 * What the tests read what is stored through: Prisma Client over a pool of its own, independent
 * of the service's Kysely queries (an oracle), with that pool for raw checks (`db.pool`).
 */
export type Oracle = PrismaClient & { readonly pool: Pool };

export function createOracle(databaseUrl: string, options: { max?: number } = {}): Oracle {
  const pool = createSurvivingPool(poolConfig(databaseUrl, { applicationName: 'desk-test-oracle', ...options }));
  // $disconnect() ends the pool too.
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  return Object.assign(prisma, { pool });
}
