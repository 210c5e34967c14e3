import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import {
  createDatabase,
  databaseUrlFor,
  dropDatabase,
  listCountsGroupedSql,
  listCountsSql,
  testServerUrl,
  transactionalSqlOver,
} from '@msp/db';
import { PassThrough } from 'node:stream';
import { createLogger, type Logger } from '@msp/http';
import type { TransactionalSql } from '../src';

export { startWebhookReceiver as receiver } from '@msp/testkit';

export const MIGRATION_SQL = readFileSync(path.join(__dirname, '../prisma/migration.sql'), 'utf8');
/** The second migration of the package's tables: list_counts (packages/db's text, word for word), then the lists' counters and indexes. */
export const LISTS_RETENTION_SQL =
  listCountsSql() + readFileSync(path.join(__dirname, '../prisma/lists-retention.sql'), 'utf8');
/** The third: the audit log's `type` filter (its index and counters). */
export const AUDIT_TYPE_SQL = readFileSync(path.join(__dirname, '../prisma/audit-type.sql'), 'utf8');
/** The fourth: the Idempotency-Key claim each event carries. */
export const IDEMPOTENCY_CLAIM_SQL = readFileSync(path.join(__dirname, '../prisma/idempotency-claim.sql'), 'utf8');
/** The fifth: the audit log's and the deliveries' counters by static SQL. */
export const LIST_COUNTS_STATIC_SQL = readFileSync(path.join(__dirname, '../prisma/list-counts-static.sql'), 'utf8');

/** A database holding just the package's tables, and a Sql over it (as a service's Prisma client would be). */
export async function eventsDatabase() {
  const name = `t_events_${Math.random().toString(16).slice(2, 12)}`;
  await createDatabase(testServerUrl(), name);
  const url = databaseUrlFor(testServerUrl(), name);
  const pool = new Pool({ connectionString: url, max: 8 });
  // pool.end() resolves before its idle connections have closed, so the DROP DATABASE … WITH (FORCE)
  // of close() can terminate one still closing: its error must not end the test run (CI saw it).
  pool.on('error', () => undefined);
  await pool.query(MIGRATION_SQL);
  await pool.query(LISTS_RETENTION_SQL);
  // list_counts' trigger functions as every service's later *_list_counts_grouped migration leaves them.
  await pool.query(listCountsGroupedSql());
  await pool.query(AUDIT_TYPE_SQL);
  await pool.query(IDEMPOTENCY_CLAIM_SQL);
  await pool.query(LIST_COUNTS_STATIC_SQL);
  const sql: TransactionalSql = transactionalSqlOver(pool);
  return {
    url,
    pool,
    sql,
    async close() {
      await pool.end();
      await dropDatabase(testServerUrl(), name);
    },
  };
}

export const quietLogger = (): Logger =>
  createLogger({ service: 'events-test', level: 'error', stream: new PassThrough() });

export async function waitUntil<T>(probe: () => Promise<T | undefined | null | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
