import { pageWithTotal, type SqlQuery, type SqlRows } from '@msp/db';
import { pageWindow, unknownAfterItem, type PageRequest } from '@msp/http';
import { Prisma } from './generated/prisma/client';

/*
 * What link's lists share (issue 25 point 1, LISTS.md): a page by number (`skip`) or by keyset
 * (`after`, the id of the last item of the page before), and an exact total read from list_counts
 * (packages/db; the triggers of migration 20261125153045_list_counts keep it in the writing
 * transaction), so neither the first page nor a deep one reads more of a large list than of a
 * small one.
 */

/** A page of a list: `skip`/`take` (page by number) or `after` (keyset; `skip` is then 0). */
export interface ListWindow {
  skip: number;
  take: number;
  after?: string;
}

/** The repository's window of an API page request. */
export function listWindow(page: PageRequest): ListWindow {
  return page.after === undefined ? pageWindow(page) : { skip: 0, take: page.per_page, after: page.after };
}

/** LIMIT and OFFSET of a window. */
export function limitOffset(window: ListWindow): Prisma.Sql {
  return Prisma.sql`LIMIT ${window.take} OFFSET ${window.skip}`;
}

/**
 * The keyset condition of a list in the order of `columns` (all descending or all ascending, the
 * last one the key that makes it unique): the rows past the item `after` of `table`, which `scope`
 * (SQL of `k`, the item's row: its tenant or parent) bounds to the caller's list. The row
 * comparison is the start key of the list's index scan, so a deep page reads as little as the
 * first. An `after` that names no item matches no row; keysetPage then answers 400.
 */
export function keysetAfter(
  window: ListWindow,
  spec: { table: string; columns: string[]; direction: 'asc' | 'desc'; idColumn: string; idType: 'uuid' | 'text'; scope: Prisma.Sql },
): Prisma.Sql {
  if (window.after === undefined) return Prisma.empty;
  const own = Prisma.raw(spec.columns.join(', '));
  const its = Prisma.raw(spec.columns.map((column) => `k.${column}`).join(', '));
  const id = spec.idType === 'uuid' ? Prisma.sql`${window.after}::uuid` : Prisma.sql`${window.after}`;
  return Prisma.sql` AND (${own}) ${Prisma.raw(spec.direction === 'desc' ? '<' : '>')} (SELECT ${its} FROM ${Prisma.raw(spec.table)} k
    WHERE k.${Prisma.raw(spec.idColumn)} = ${id} AND ${spec.scope})`;
}

/**
 * A page and its total in one round trip (pageWithTotal). An empty keyset page asks once more
 * whether `after` names an item of the list (`exists`, a query answering a row when it does): if
 * not, 400 (unknownAfterItem), not an empty page.
 */
export async function keysetPage<T>(rows: SqlRows, window: ListWindow, queries: { page: SqlQuery; total: SqlQuery; exists: SqlQuery }): Promise<{ items: T[]; total: number }> {
  const found = await pageWithTotal<T>(rows, queries.page, queries.total);
  if (found.items.length === 0 && window.after !== undefined && (await rows(queries.exists)).length === 0) throw unknownAfterItem();
  return found;
}


/** What a list's OpenAPI description says of its total and its deep pages. */
export const EXACT_TOTAL = '`pagination.total` is exact (kept in the transaction of every write), and read as fast for a large list as for a small one.';
export const DEEP_PAGES =
  'Deep pages: follow the `Link` header\'s `next` with `after` (keyset paging), as fast at any depth as the first page; `page=N` reads and skips every item before its page.';

