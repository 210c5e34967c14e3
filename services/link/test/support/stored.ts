import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

/**
 * What the tests read and seed link's database with: Prisma Client over the same database, an
 * oracle of what is stored that shares no code with link's own queries (Kysely, src/db.ts).
 */
export type StoredState = PrismaClient;

export function storedState(databaseUrl: string): StoredState {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}
