import { pageWithTotal, type SqlQuery, type SqlRows } from '@msp/db';
import { pageWindow, unknownAfterItem, type PageRequest } from '@msp/http';
import { Prisma } from '../generated/prisma/client';

/**
 * One list of desk as SQL: a page in the list's order (by `page`, or by keyset after an item) and
 * the list's total, in one round trip (pageWithTotal). Every list reads its page straight off an
 * index whose columns are the scope's equalities (and a filter's) followed by `key`, so a keyset
 * page costs the same at any depth, and its total comes from a counter (list_counts) or from a
 * count bounded by the matches. The table, columns and key are the code's SQL, never a value.
 */
export interface KeysetList {
  table: string;
  /** The select list. */
  columns: Prisma.Sql;
  /** The rows the list is made of (tenant, parent), unqualified: an `after` must name one of them. */
  scope: Prisma.Sql;
  /** The request's filters, unqualified. */
  filters?: Prisma.Sql[];
  /** The order: these columns, all `direction`, the last one unique (the id). */
  key: string[];
  direction: 'ASC' | 'DESC';
  /** The total of scope and filters. */
  total: SqlQuery;
}

export async function keysetPage<T extends object>(rows: SqlRows, list: KeysetList, page: PageRequest): Promise<{ items: T[]; total: number }> {
  const { table, key, direction } = list;
  const where = [list.scope, ...(list.filters ?? [])];
  if (page.after !== undefined) {
    // The items after that one in the list's order: a row comparison, which the index serves as the
    // start of its range (`(created_at, id) < (…)` for a newest-first list).
    const keyOf = (alias: string) => Prisma.raw(key.map((column) => `${alias}.${column}`).join(', '));
    where.push(Prisma.sql`(${keyOf(table)}) ${Prisma.raw(direction === 'DESC' ? '<' : '>')}
      (SELECT ${keyOf('after_item')} FROM ${Prisma.raw(table)} AS after_item WHERE after_item.id = ${page.after}::uuid AND ${list.scope})`);
  }
  const { skip, take } = pageWindow(page);
  const order = Prisma.raw(key.map((column) => `${table}.${column} ${direction}`).join(', '));
  const found = await pageWithTotal<T>(
    rows,
    Prisma.sql`SELECT ${list.columns} FROM ${Prisma.raw(table)} WHERE ${Prisma.join(where, ' AND ')} ORDER BY ${order} LIMIT ${take} OFFSET ${skip}`,
    list.total,
  );
  if (page.after !== undefined && found.items.length === 0) {
    // An empty keyset page: past the end, or an `after` that is no item of the list (a 400).
    const known = await rows(Prisma.sql`SELECT 1 FROM ${Prisma.raw(table)} WHERE id = ${page.after}::uuid AND ${list.scope}`);
    if (!known.length) throw unknownAfterItem();
  }
  // pageWithTotal's rows carry the total beside the list's columns.
  return { items: found.items.map((item) => withoutTotal(item as T & { total?: unknown }) as T), total: found.total };
}

function withoutTotal<T extends { total?: unknown }>(row: T): Omit<T, 'total'> {
  const rest: Record<string, unknown> = { ...row };
  delete rest.total;
  return rest as Omit<T, 'total'>;
}
