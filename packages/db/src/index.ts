// @msp/db: databases and migrations for the three services, with no Prisma engine binary.
//
// Paths: each service keeps `prisma/schema.prisma`, `prisma/migrations/` and `prisma.config.ts`
// at its root. Its queries go through Kysely (openDatabase) with the table types prisma-kysely
// generates into `src/generated/kysely`; Prisma Client is generated for the tests only.
// At start a service runs
//     await applyMigrations(config.databaseUrl, migrationsDirOf(__dirname));
// which finds `<service>/prisma/migrations` from src/ (jest) and dist/ (built) alike; a runtime
// image must therefore ship `prisma/migrations` beside `dist/`. Tests use
//     const db = await createTestDatabase({ migrationsDir: migrationsDirOf(__dirname) });
//     afterAll(() => db.drop());
//
// Commands (from a service folder, or `pnpm --filter @msp/<service> <script>`):
//     pnpm generate                          Kysely types and the tests' client from schema.prisma
//     pnpm migrate:create --name <change>    new migration from the schema (needs PostgreSQL)
//     pnpm migrate:deploy | migrate:status   against DATABASE_URL
// They run `msp-prisma` (bin/prisma.js): the pinned Prisma CLI with the WebAssembly schema engine
// stand-in (bin/schema-engine.js) instead of the native binary Prisma would download.

export { applyMigrations, MigrationError, PRISMA_MIGRATE_ADVISORY_LOCK } from './apply-migrations';
export type { ApplyMigrationsOptions, ApplyMigrationsResult } from './apply-migrations';
export { createDatabase, dropDatabase, databaseUrlFor, databaseNameOf, quoteIdentifier } from './database-admin';
export { createTestDatabase, testServerUrl } from './test-database';
export type { CreateTestDatabaseOptions, TestDatabase } from './test-database';
export { checkSchemaDrift } from './schema-drift';
export type { SchemaDriftOptions, SchemaDriftResult } from './schema-drift';
export { runPrismaCli, PRISMA_BIN } from './prisma-cli';
export type { PrismaCliResult } from './prisma-cli';
export { prismaDirOf, migrationsDirOf } from './prisma-paths';
export { readMigrationsFolder } from './migrations-folder';
export type { MigrationFile } from './migrations-folder';
export {
  createPool,
  DEFAULT_ACQUIRE_TIMEOUT_MS,
  type PoolOptions,
  SESSION_OPTIONS,
  isoTimestamp,
  isoTimestampSql,
  pageWithTotal,
  sqlRows,
  type Queryable,
} from './sql-reads';
export type { RawQueryRunner, SqlQuery, SqlRows } from './sql-reads';
export {
  PLANNED_PER_CALL,
  plannedPerCall,
  PREPARED_PER_CONNECTION,
  preparingPool,
  statementName,
} from './prepared-statements';
export { rawSqlOver, transactionalSqlOver } from './raw-sql-over';
export { advisoryResourceLock } from './resource-lock';
export {
  listCountsSql,
  listCountsGroupedSql,
  listCountSql,
  listCountRangeSql,
  LIST_COUNTS_SQL_PATH,
  LIST_COUNTS_GROUPED_SQL_PATH,
  type CountedFilter,
} from './list-counts';
export { afterExists, keysetAfter, keysetOrderLimit, keysetPage } from './keyset-pages';
export type { KeysetOrder, KeysetWindow, SqlTag } from './keyset-pages';
export {
  openDatabase,
  createPool as createSurvivingPool,
  poolConfig,
  typeParsers as databaseTypeParsers,
  type AnyDatabase,
  type Database,
  type DatabaseOptions,
} from './database';
export { uniqueViolation, isForeignKeyViolation, unlessDuplicate, unlessReferenced } from './database-errors';
export { inListOrder, listPage, listCount, listCountRange, type ListOrder, type ListWindow } from './keyset';
export { afterKeyOf } from './list-key';
export {
  streamInReadOnlyTransaction,
  streamRows as streamQueryRows,
  type ExportStreamOptions,
  type StreamableQuery,
} from './stream-rows';
export { rawSqlOverKysely } from './raw-sql-kysely';
export { exportSlots, ExportSlotsBusyError } from './export-slots';
