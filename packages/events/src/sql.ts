/**
 * What the package needs of a service's Prisma client (or of a transaction client): raw SQL. The
 * tables are declared in each service's schema (prisma/events.prisma), so Prisma's migrations own
 * them; this package reads and writes them with SQL because it cannot import a service's client.
 */
export interface Sql {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

/**
 * A Sql that can also run work in one transaction: a service's Prisma client (its interactive
 * `$transaction`), or @msp/db's transactionalSqlOver(pool). The dispatcher's claim needs it for a
 * planner setting that must hold for that statement alone (SET LOCAL).
 */
export interface TransactionalSql extends Sql {
  $transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
}

/**
 * What a service hands a repository's write that runs its own transaction: called in that
 * transaction right after the change, with what changed, it records the event the change makes
 * (`catalogue.record(tx, …)`), or none. The service decides the event; the change and its event
 * commit together or not at all.
 */
export type RecordChange<C> = (tx: Sql, change: C) => Promise<void>;
