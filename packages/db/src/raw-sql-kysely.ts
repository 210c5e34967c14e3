import { CompiledQuery } from 'kysely';
import type { AnyDatabase } from './database';

/**
 * The raw-SQL surface @msp/events is written against (`$queryRawUnsafe`, `$executeRawUnsafe`,
 * `$transaction`) over a Kysely database or transaction, so a service on Kysely records its events
 * in its own transaction while @msp/events still speaks that surface.
 */
export interface RawSql {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $transaction<T>(work: (tx: RawSql) => Promise<T>): Promise<T>;
}

export function rawSqlOverKysely(db: AnyDatabase): RawSql {
  return {
    async $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T> {
      return (await db.executeQuery(CompiledQuery.raw(query, values))).rows as T;
    },
    async $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number> {
      return Number((await db.executeQuery(CompiledQuery.raw(query, values))).numAffectedRows ?? 0);
    },
    $transaction<T>(work: (tx: RawSql) => Promise<T>): Promise<T> {
      return db.transaction().execute((trx) => work(rawSqlOverKysely(trx)));
    },
  };
}
