/**
 * What the package needs of a service's Prisma client (or of a transaction client): raw SQL. The
 * tables are declared in each service's schema (prisma/events.prisma), so Prisma's migrations own
 * them; this package reads and writes them with SQL because it cannot import a service's client.
 */
export interface Sql {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}
